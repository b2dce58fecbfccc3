import { errors } from '../../errors.js';
import { consoleScriptUrl } from '../console-assets.js';
import { renderDocsPage } from '../docs-page.js';
import { refreshTaskGauge } from '../metrics.js';
import { metricsAuthorized } from '../metrics-auth.js';
import { offeredView } from '../model-views.js';
import { buildOpenApi } from '../openapi.js';
import { checkReadiness, readinessAnswer } from '../readiness.js';
import type { Handler, RouteDeps } from '../route.js';

/**
 * `GET /openapi.json`, built on first request (the public URL may be known only at listen), and
 * again when a declared model's lifecycle date passes (a retired model leaves it).
 */
export function getOpenApi({ ctx, routes }: RouteDeps): Handler {
  const openapi = offeredView(ctx, (rows) => JSON.stringify(buildOpenApi(ctx.publicUrl(), routes, rows)));
  return async (_request, reply) => reply.type('application/json').send(openapi());
}

/**
 * `GET /docs`: the reference page, its operations and their "try it" forms from the OpenAPI
 * document (built on first request, like /openapi.json). Locked down: no framing, no inline
 * script; its one script (the forms') comes from this origin and talks to this origin only.
 */
export function getDocs(deps: RouteDeps): Handler {
  const { ctx, routes } = deps;
  const docs = offeredView(ctx, (rows) => renderDocsPage(rows, ctx.pricing, buildOpenApi(ctx.publicUrl(), routes, rows), consoleScriptUrl(deps, 'try-it')));
  return async (_request, reply) => {
    return reply
      .type('text/html; charset=utf-8')
      .header(
        'content-security-policy',
        "default-src 'none'; style-src 'unsafe-inline'; script-src 'self'; connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'",
      )
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'no-referrer')
      .header('cross-origin-opener-policy', 'same-origin')
      .header('cross-origin-resource-policy', 'same-origin')
      .header('permissions-policy', 'camera=(), microphone=(), geolocation=()')
      .send(docs());
  };
}

/** `GET /healthz`: the process answers. */
export function getHealth(): Handler {
  return () => Promise.resolve({ status: 'ok' });
}

/** `GET /readyz`: the database and the media store answer, and this process's workers can work (http/readiness.ts). */
export function getReadiness({ ctx }: RouteDeps): Handler {
  return async (_request, reply) => {
    const answer = readinessAnswer(await checkReadiness({ store: ctx.store, storage: ctx.storage, health: ctx.health }));
    return reply.code(answer.status).headers(answer.headers).send(answer.body);
  };
}

/** `GET /metrics`: Prometheus text, with the store's task counts read now; behind MEDIAGATE_METRICS_TOKEN when set. */
export function getMetrics({ ctx }: RouteDeps): Handler {
  return async (request, reply) => {
    if (!metricsAuthorized(request.headers.authorization, ctx.metricsToken)) {
      reply.header('www-authenticate', 'Bearer');
      throw errors.invalidApiKey('/metrics requires the metrics token (MEDIAGATE_METRICS_TOKEN) as a bearer token.');
    }
    await refreshTaskGauge(ctx.metrics, ctx.store);
    return reply.type(ctx.metrics.registry.contentType).send(await ctx.metrics.registry.metrics());
  };
}
