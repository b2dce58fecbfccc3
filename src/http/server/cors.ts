import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';

/**
 * CORS for browser apps on other origins (MEDIAGATE_CORS_ORIGINS), off by default.
 *
 * Why it is safe to open: the API authenticates with an explicit `Authorization` header, never
 * a cookie, so a page on an allowed origin can do only what the key its user pastes allows;
 * credentials mode is never granted. Outputs are public at their signed URLs anyway; CORS only
 * lets a script read their bytes. The console at /console is same-origin and needs none of this.
 */

const PATHS = /^\/(?:v1\/|openapi\.json(?:$|\?)|files\/)/;
// PATCH: the admin API changes a key's settings (docs/admin.md).
const ALLOW_METHODS = 'GET, POST, PATCH, DELETE, HEAD, OPTIONS';
const ALLOW_HEADERS = 'Authorization, Content-Type, Idempotency-Key, Last-Event-ID, X-Request-ID, Range';
// Headers a script may read: ids, rate limits, replays, ranges.
const EXPOSE_HEADERS =
  'X-Request-ID, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, Content-Range, Content-Length, Accept-Ranges, Content-Disposition, Allow';
const MAX_AGE_S = '600';

export interface Cors {
  /** True when the request is one whose CORS headers only the router adds (the fast poll path skips it). */
  readonly needsRouter: (req: IncomingMessage) => boolean;
  /**
   * Sets on `res` what the hook gives a request without an Origin (`Vary: Origin` when a list of
   * origins is configured), so that an answer made beneath the router (dispatch.ts) carries it too.
   */
  readonly withoutOrigin: (req: IncomingMessage, res: ServerResponse) => void;
}

export function allowedOrigin(origins: readonly string[] | '*' | undefined, origin: string | undefined): string | undefined {
  if (origin === undefined || origins === undefined) return undefined;
  if (origins === '*') return '*';
  return origins.includes(origin) ? origin : undefined;
}

export function registerCors(app: FastifyInstance, origins: readonly string[] | '*' | undefined): Cors {
  const enabled = origins === '*' || (origins !== undefined && origins.length > 0);
  if (!enabled) return { needsRouter: () => false, withoutOrigin: () => undefined };
  app.addHook('onRequest', (request, reply, done) => {
    if (!PATHS.test(request.url)) {
      done();
      return;
    }
    // Answers differ by Origin when a list is configured; caches must key on it.
    if (origins !== '*') reply.header('vary', 'Origin');
    const allowed = allowedOrigin(origins, request.headers.origin);
    if (allowed === undefined) {
      done();
      return;
    }
    reply.header('access-control-allow-origin', allowed);
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
      void reply
        .code(204)
        .header('access-control-allow-methods', ALLOW_METHODS)
        .header('access-control-allow-headers', ALLOW_HEADERS)
        .header('access-control-max-age', MAX_AGE_S)
        .send();
      return;
    }
    reply.header('access-control-expose-headers', EXPOSE_HEADERS);
    done();
  });
  return {
    needsRouter: (req) => req.headers.origin !== undefined,
    withoutOrigin: (req, res) => {
      if (origins !== '*' && PATHS.test(req.url ?? '')) res.setHeader('vary', 'Origin');
    },
  };
}
