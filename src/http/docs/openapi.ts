import type { Pricing } from '../../billing/index.js';
import { imageRequestSchema, videoRequestSchema, type JsonSchema, type ModelRow } from '../../catalog/index.js';
import { modelNote } from './examples.js';
import { TAGS, tagOf } from './tags.js';
import type { OpenApiOperation, Route } from '../route.js';
import { IMAGE_ERROR_SCHEMA, VIDEO_ERROR_SCHEMA } from '../../wire/envelopes.js';
import { IMAGE_CREATED_SCHEMA, IMAGE_STATUSES, VIDEO_STATUSES, imageStatusSchema, videoTaskSchema } from '../../wire/task-bodies.js';

/**
 * The OpenAPI 3.1 document: the fold of the route table. Each row declares its operation next
 * to its handler (`routes/<feature>-docs.ts`); this file adds what every operation shares: the
 * responses of a keyed operation, the task bodies and error envelopes (their schemas are the
 * wire shapes' own, src/wire/), and each model's request body, its row's JSON Schema from the
 * catalog (the one the server validates with), which the create operations take `oneOf`, with
 * the model's price and console link as its description. Every operation is in one of the tags
 * of src/http/docs/tags.ts, whose order is the order the reference at /docs shows them in.
 */

export const componentName = (row: ModelRow): string => `${row.kind === 'video' ? 'Video' : 'Image'}Request_${row.id.replace(/[^A-Za-z0-9]+/g, '_')}`;

export function requestSchema(row: ModelRow): JsonSchema {
  const { $id: _id, ...schema } = row.kind === 'video' ? videoRequestSchema(row) : imageRequestSchema(row);
  return schema;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ 'application/json': { schema } });

/**
 * Statuses an operation can produce: `cancelled` only once a cancel route is in the table (a
 * client must not be told to handle a state nothing reaches).
 */
function statuses(routes: readonly Route[]): { video: string[]; image: string[] } {
  const cancel = routes.some((route) => route.path.endsWith('/cancel'));
  return {
    video: VIDEO_STATUSES.filter((status) => cancel || status !== 'cancelled'),
    image: IMAGE_STATUSES.filter((status) => cancel || status !== 'CANCELLED'),
  };
}

/** Over a per-key limit (http/keys/rate-limit.ts): when to try again, and the limit itself. */
const RATE_LIMIT_HEADERS = {
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Policy': { description: 'The limit of this key (IETF draft RateLimit header fields).', schema: { type: 'string' } },
  RateLimit: { description: 'What is left of the limit, and when it resets.', schema: { type: 'string' } },
};

/** Responses every keyed operation can give, in the family's error envelope. */
function keyedResponses(schema: string) {
  const r = (description: string) => ({ description, content: json(ref(schema)) });
  return {
    '401': r('Missing or invalid API key'),
    '429': { description: 'Over the per-key request rate or tasks in flight', headers: RATE_LIMIT_HEADERS, content: json(ref(schema)) },
    '500': r('Unexpected server fault'),
  };
}

/**
 * `/v1/videos/:id/content` -> `/v1/videos/{id}/content`; a final `*` (the rest of the path) is
 * named after the operation's path parameter that the pattern does not name (`/v1/models/{model}`).
 */
function openApiPath(pattern: string, operation: OpenApiOperation): string {
  const path = pattern.replace(/:([A-Za-z_]+)/g, '{$1}');
  if (!path.endsWith('/*')) return path;
  const params = (operation['parameters'] ?? []) as readonly { name?: string; in?: string }[];
  const rest = params.find((param) => param.in === 'path' && param.name !== undefined && !path.includes(`{${param.name}}`));
  if (rest?.name === undefined) throw new Error(`${pattern}: a final * needs a path parameter in its operation`);
  return `${path.slice(0, -1)}{${rest.name}}`;
}

/**
 * The rows' operations by path and method, each keyed one with the responses every keyed
 * operation can give in its family's envelope; the component schemas and top-level webhooks
 * the rows bring go into `schemas` and `webhooks`.
 */
function fold(routes: readonly Route[], models: readonly ModelRow[], schemas: Record<string, unknown>, webhooks: Record<string, unknown>) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    if (typeof route.operation !== 'function') continue;
    const described = route.operation({ models });
    const method = route.methods[0]?.toLowerCase() ?? 'get';
    const path = openApiPath(route.path, described);
    const operation = described['tags'] === undefined ? { ...described, tags: [tagOf(path, method)] } : described;
    const error = route.family === 'image' ? 'ImageError' : 'VideoError';
    const documented = route.auth ? { ...operation, responses: { ...operation.responses, ...keyedResponses(error) } } : operation;
    const item = (paths[path] ??= {});
    for (const method of route.methods) item[method.toLowerCase()] = documented;
    Object.assign(schemas, route.components ?? {});
    Object.assign(webhooks, route.webhooks ?? {});
  }
  return paths;
}

/** What the reference's first paragraphs say (Markdown: the renderer renders it). */
const INTRO = [
  'Asynchronous video and image generation. Create a task, poll it until it carries output URLs, download them. Timestamps are Unix seconds.',
  'Every `/v1` operation needs `Authorization: Bearer <API_KEY>` (press **Authorize** to set it for "Try it out"). `GET /v1/models` returns every model\'s JSON Schema; each create operation lists one example request per model.',
  'Errors: video endpoints answer `{"error":{"type","code","message","param"}}`, image endpoints `{"code","message","data":null}`. Validation codes: `missing_parameter`, `invalid_parameter`, `unsupported_parameter`, `unsupported_value`; `param` names the top-level field at fault.',
  'From a shell, with the variables the SDK and CLI read:\n\n```sh\ncurl -s "$MEDIAGATE_BASE_URL/v1/video/generations" \\\n  -H "Authorization: Bearer $MEDIAGATE_API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -d \'{"model":"<model id>","prompt":"a red fox running through snow"}\'\n```',
  'To try a model in the browser, open [the console](/console).',
].join('\n\n');

export function buildOpenApi(serverUrl: string, routes: readonly Route[], models: readonly ModelRow[], pricing?: Pricing): Record<string, unknown> {
  const status = statuses(routes);
  const schemas: Record<string, unknown> = {
    VideoTask: videoTaskSchema(status.video),
    VideoError: VIDEO_ERROR_SCHEMA,
    ImageCreated: IMAGE_CREATED_SCHEMA,
    ImageStatus: imageStatusSchema(status.image),
    ImageError: IMAGE_ERROR_SCHEMA,
  };
  for (const row of models)
    schemas[componentName(row)] = {
      ...requestSchema(row),
      title: `${row.kind === 'video' ? 'Video' : 'Image'} request: ${row.id}`,
      description: modelNote(row, pricing),
    };
  const webhooks: Record<string, unknown> = {};
  const paths = fold(routes, models, schemas, webhooks);
  return {
    openapi: '3.1.0',
    info: {
      title: 'mediagate',
      version: '1',
      license: { name: 'MIT', identifier: 'MIT' },
      description: INTRO,
    },
    servers: [{ url: serverUrl }],
    tags: TAGS,
    security: [{ bearer: [] }],
    ...(Object.keys(webhooks).length > 0 ? { webhooks } : {}),
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: '`Authorization: Bearer <API_KEY>`' } },
      schemas,
    },
  };
}
