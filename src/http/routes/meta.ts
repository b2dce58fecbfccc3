import { errors } from '../../errors.js';
import { refreshTaskGauge } from '../metrics/metrics.js';
import { metricsAuthorized } from '../metrics/metrics-auth.js';
import { offeredView } from '../docs/model-views.js';
import { buildOpenApi } from '../docs/openapi.js';
import { checkReadiness, readinessAnswer } from '../metrics/readiness.js';
import type { DepsOf, Handler } from '../route.js';

/**
 * `GET /openapi.json`, built on first request (the public URL may be known only at listen), and
 * again when a declared model's lifecycle date passes (a retired model leaves it).
 */
export function getOpenApi({ ctx, routes }: DepsOf<'publicUrl' | 'pricing' | 'models' | 'now', 'routes'>): Handler {
  const openapi = offeredView(ctx, (rows) => JSON.stringify(buildOpenApi(ctx.publicUrl(), routes, rows, ctx.pricing)));
  return async (_request, reply) => reply.type('application/json').send(openapi());
}

/** `GET /healthz`: the process answers. */
export function getHealth(): Handler {
  return () => Promise.resolve({ status: 'ok' });
}

/** `GET /readyz`: the database and the media store answer, and this process's workers can work (http/metrics/readiness.ts). */
export function getReadiness({ ctx }: DepsOf<'store' | 'storage' | 'health'>): Handler {
  return async (_request, reply) => {
    const answer = readinessAnswer(await checkReadiness({ store: ctx.store, storage: ctx.storage, health: ctx.health }));
    return reply.code(answer.status).headers(answer.headers).send(answer.body);
  };
}

/** `GET /metrics`: Prometheus text, with the store's task counts read now; behind MEDIAGATE_METRICS_TOKEN when set. */
export function getMetrics({ ctx }: DepsOf<'metricsToken' | 'metrics' | 'store'>): Handler {
  return async (request, reply) => {
    if (!metricsAuthorized(request.headers.authorization, ctx.metricsToken)) {
      reply.header('www-authenticate', 'Bearer');
      throw errors.invalidApiKey('/metrics requires the metrics token (MEDIAGATE_METRICS_TOKEN) as a bearer token.');
    }
    await refreshTaskGauge(ctx.metrics, ctx.store);
    return reply.type(ctx.metrics.registry.contentType).send(await ctx.metrics.registry.metrics());
  };
}
