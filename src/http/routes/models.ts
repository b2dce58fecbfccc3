import { pricingView, type Pricing } from '../../billing/index.js';
import type { ModelRow } from '../../catalog/index.js';
import { ApiError } from '../../errors.js';
import { requestSchema } from '../openapi.js';
import { pathParam, type Handler, type RouteDeps } from '../route.js';

function describe(row: ModelRow, pricing: Pricing | undefined) {
  const price = pricingView(pricing, row.id);
  return {
    id: row.id,
    object: 'model',
    kind: row.kind,
    endpoint: row.kind === 'video' ? '/v1/video/generations' : '/v1/images/generations/async',
    description: row.summary,
    schema: requestSchema(row),
    ...(price === undefined ? {} : { pricing: price }),
  };
}

/** `GET /v1/models`: the models this deployment routes (those the calling key may use, when it is limited to some). */
export function listModels({ ctx }: RouteDeps): Handler {
  const list = { object: 'list', data: ctx.models.map((row) => describe(row, ctx.pricing)) };
  return (request) => {
    const allows = request.apiKey.allowsModel;
    return Promise.resolve(allows === undefined ? list : { object: 'list', data: list.data.filter((model) => allows(model.id)) });
  };
}

/** `GET /v1/models/{id}`: ids contain slashes, so the id is the rest of the path. */
export function getModel({ ctx }: RouteDeps): Handler {
  const rows = new Map(ctx.models.map((row) => [row.id, row]));
  const described = new Map(ctx.models.map((row) => [row.id, describe(row, ctx.pricing)]));
  return (request) => {
    const id = decodeURIComponent(pathParam(request, '*'));
    const allows = request.apiKey.allowsModel;
    const row = allows === undefined || allows(id) ? rows.get(id) : undefined;
    if (!row) return Promise.reject(new ApiError(404, 'not_found', 'model', `Unknown model '${id.slice(0, 200)}'.`));
    return Promise.resolve(described.get(id));
  };
}
