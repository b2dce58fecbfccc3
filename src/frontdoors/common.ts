import type { FastifyRequest } from 'fastify';
import type { JsonSchema, ModelKind, ModelRow } from '../catalog/index.js';
import { requestSchema } from '../http/docs/openapi.js';
import { ApiError } from '../errors.js';
import type { CreateFlow, CreateOutcome, HeaderSink } from '../http/routes/tasks.js';

/**
 * This deployment's model of `kind` the body names, with its request schema (built-in and
 * declared rows alike: ctx.models), if the calling key may use it; else undefined, and
 * validation refuses `model`.
 */
export function modelLookup(
  models: readonly ModelRow[],
  kind: ModelKind,
): (request: FastifyRequest, id: unknown) => { row: ModelRow; schema: JsonSchema } | undefined {
  const byId = new Map(models.filter((row) => row.kind === kind).map((row) => [row.id, row]));
  const schemas = new Map<string, JsonSchema>();
  return (request, id) => {
    if (typeof id !== 'string') return undefined;
    const row = byId.get(id);
    const allows = request.apiKey.allowsModel;
    if (row === undefined || (allows !== undefined && !allows(id))) return undefined;
    let schema = schemas.get(id);
    if (schema === undefined) {
      schema = requestSchema(row);
      schemas.set(id, schema);
    }
    return { row, schema };
  };
}

/**
 * The seed's create path with the front door's names on its validation errors: a fault in a
 * parameter mapped from another field is told on the field as the client sent it
 * (`duration` -> `seconds`, `resolution` -> `size`, `image` -> `input_reference`).
 */
export async function createRenamed(
  create: CreateFlow,
  request: FastifyRequest,
  body: () => { body: unknown; rename: Readonly<Record<string, string>> },
  reply?: HeaderSink,
): Promise<CreateOutcome> {
  let rename: Readonly<Record<string, string>> = {};
  try {
    return await create(
      request,
      () => {
        const mapped = body();
        rename = mapped.rename;
        return mapped.body;
      },
      reply,
    );
  } catch (error) {
    const sent = error instanceof ApiError && error.status === 400 ? rename[error.param] : undefined;
    if (sent === undefined || !(error instanceof ApiError)) throw error;
    throw new ApiError(error.status, error.code, sent, `${error.message} (mapped from '${sent}')`, error.type);
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A JSON body that is an object, or undefined (validation then says `body`). */
export function objectBody(body: unknown): Record<string, unknown> | undefined {
  return isObject(body) ? body : undefined;
}
