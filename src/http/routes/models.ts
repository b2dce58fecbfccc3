import type { ModelRow } from '../../catalog/index.js';
import { ApiError } from '../../errors.js';
import { requestSchema } from '../openapi.js';
import { pathParam, type Handler, type RouteDeps } from '../route.js';

function describe(row: ModelRow) {
  return {
    id: row.id,
    object: 'model',
    kind: row.kind,
    endpoint: row.kind === 'video' ? '/v1/video/generations' : '/v1/images/generations/async',
    description: row.summary,
    schema: requestSchema(row),
  };
}

/** `GET /v1/models`: the models this deployment routes. */
export function listModels({ ctx }: RouteDeps): Handler {
  const list = { object: 'list', data: ctx.models.map(describe) };
  return () => Promise.resolve(list);
}

/** `GET /v1/models/{id}`: ids contain slashes, so the id is the rest of the path. */
export function getModel({ ctx }: RouteDeps): Handler {
  const rows = new Map(ctx.models.map((row) => [row.id, row]));
  return (request) => {
    const id = decodeURIComponent(pathParam(request, '*'));
    const row = rows.get(id);
    if (!row) return Promise.reject(new ApiError(404, 'not_found', 'model', `Unknown model '${id.slice(0, 200)}'.`));
    return Promise.resolve(describe(row));
  };
}
