import type { FastifyInstance } from 'fastify';
import type { AuthHook } from '../auth.js';
import { MODELS, findModel, type ModelRow } from '../../catalog/index.js';
import { ApiError } from '../../errors.js';
import { requestSchema } from '../openapi.js';

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

/** `GET /v1/models` and `GET /v1/models/{id}` (ids contain slashes, so the id is the rest of the path). */
export function modelRoutes(app: FastifyInstance, onRequest: AuthHook): void {
  const list = { object: 'list', data: MODELS.map(describe) };
  app.get('/v1/models', { onRequest }, async () => list);
  app.get<{ Params: { '*': string } }>('/v1/models/*', { onRequest }, async (request) => {
    const id = decodeURIComponent(request.params['*']);
    const row = findModel(id);
    if (!row) throw new ApiError(404, 'not_found', 'model', `Unknown model '${id.slice(0, 200)}'.`);
    return describe(row);
  });
}
