/**
 * The small pieces the feature docs files (`routes/*-docs.ts`) build their OpenAPI operations
 * from: component references, JSON content, an error answer in a family's envelope, and the
 * parameters several rows share.
 */

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: unknown) => ({ 'application/json': { schema } });

/** An error answer in the envelope component `schema` (`VideoError`, `ImageError`). */
export const errorAnswer = (schema: string, description: string) => ({ description, content: json(ref(schema)) });

export const taskIdParam = { name: 'task_id', in: 'path', required: true, schema: { type: 'string' } };

/** The `limit` of every paged list (1-100, default 20). */
export const limitParam = { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } };

/** The `after` cursor of a paged list: the page starts right after this id. */
export const afterParam = (description: string) => ({ name: 'after', in: 'query', required: false, description, schema: { type: 'string' } });
