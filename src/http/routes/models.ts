import { MODELS, findModel, type ModelRow } from '../../catalog/index.js';
import { ApiError } from '../../errors.js';
import { requestSchema } from '../openapi.js';
import { pathParam, type Handler } from '../route.js';

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

/** `GET /v1/models`. */
export function listModels(): Handler {
  const list = { object: 'list', data: MODELS.map(describe) };
  return () => Promise.resolve(list);
}

/** `GET /v1/models/{id}`: ids contain slashes, so the id is the rest of the path. */
export function getModel(): Handler {
  return (request) => {
    const id = decodeURIComponent(pathParam(request, '*'));
    const row = findModel(id);
    if (!row) throw new ApiError(404, 'not_found', 'model', `Unknown model '${id.slice(0, 200)}'.`);
    return Promise.resolve(describe(row));
  };
}
