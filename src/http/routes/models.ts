import { pricingView, type Pricing } from '../../billing/index.js';
import { description, displayName, family, lifecycleView, type ModelRow } from '../../catalog/index.js';
import { SANDBOX_CHANNEL } from '../../channels/config.js';
import { ApiError } from '../../errors.js';
import { offeredView } from '../docs/model-views.js';
import { requestSchema } from '../docs/openapi.js';
import { pathParam, type DepsOf, type Handler } from '../route.js';

/** The tasks module's model listing: the routed rows, their prices, and the clock of their lifecycle dates. */
type ModelDeps = DepsOf<'models' | 'now' | 'pricing' | 'channelOf'>;

/** Said of a model no channel routes upstream: its outputs are the sandbox's, not the vendor's. */
const SANDBOX_NOTE =
  'On this deployment it is rendered locally by the sandbox engine: a synthetic clip or image that honours the parameters (size, duration, frames), not the vendor model.';

function describe(row: ModelRow, pricing: Pricing | undefined, nowMs: number, channelOf: (model: string) => string) {
  const price = pricingView(pricing, row.id);
  const lifecycle = lifecycleView(row, nowMs);
  const text = description(row);
  return {
    id: row.id,
    object: 'model',
    kind: row.kind,
    endpoint: row.kind === 'video' ? '/v1/video/generations' : '/v1/images/generations/async',
    display_name: displayName(row),
    family: family(row),
    summary: row.summary,
    description: channelOf(row.id) === SANDBOX_CHANNEL ? `${text} ${SANDBOX_NOTE}` : text,
    schema: requestSchema(row),
    ...(price === undefined ? {} : { pricing: price }),
    ...(lifecycle === undefined ? {} : { lifecycle }),
  };
}

const channelOf = (ctx: ModelDeps['ctx']): ((model: string) => string) => ctx.channelOf ?? (() => SANDBOX_CHANNEL);

/**
 * `GET /v1/models`: the models this deployment routes (those the calling key may use, when it is
 * limited to some), less the retired ones. Built again only when a lifecycle date passes.
 */
export function listModels({ ctx }: ModelDeps): Handler {
  const list = offeredView(ctx, (rows, nowMs) => ({ object: 'list', data: rows.map((row) => describe(row, ctx.pricing, nowMs, channelOf(ctx))) }));
  return (request) => {
    const allows = request.apiKey.allowsModel;
    const all = list();
    return Promise.resolve(allows === undefined ? all : { object: 'list', data: all.data.filter((model) => allows(model.id)) });
  };
}

/** `GET /v1/models/{id}`: ids contain slashes, so the id is the rest of the path. A retired model still answers. */
export function getModel({ ctx }: ModelDeps): Handler {
  const rows = new Map(ctx.models.map((row) => [row.id, row]));
  const described = offeredView(ctx, (_offered, nowMs) => new Map(ctx.models.map((row) => [row.id, describe(row, ctx.pricing, nowMs, channelOf(ctx))])));
  return (request) => {
    const id = decodeURIComponent(pathParam(request, '*'));
    const allows = request.apiKey.allowsModel;
    const row = allows === undefined || allows(id) ? rows.get(id) : undefined;
    if (!row) return Promise.reject(new ApiError(404, 'not_found', 'model', `Unknown model '${id.slice(0, 200)}'.`));
    return Promise.resolve(described().get(id));
  };
}
