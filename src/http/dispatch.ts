import type { IncomingMessage, ServerResponse } from 'node:http';
import compileStringifier from 'fast-json-stringify';
import { bearerToken } from './keys/auth.js';
import { defaultHeaders } from './server/default-headers.js';
import { createFastCreates, type FastPathOptions } from './fast-create.js';
import { REQUEST_ID_LOG_LABEL, logResponse } from './requests/request-log.js';
import { compilePattern } from './server/route-patterns.js';
import { traceHttpRoute } from '../tracing/index.js';
import type { FastAnswer, Serialize } from './route.js';

export interface DispatchOptions extends FastPathOptions {
  /** Counts the creates the create fast path answers. */
  readonly createsAnswered: { inc(): void };
}

/** The server's request listener: a fast answer, or `router` (Fastify's handler). */
export type Dispatch = (req: IncomingMessage, res: ServerResponse, router: () => void) => void;

/** A plain id: a trailing slash, a query, escapes or anything odd go to the router. */
const ID_SEGMENT = '[A-Za-z0-9_-]{1,64}';

interface FastRoute {
  readonly regex: RegExp;
  readonly params: readonly string[];
  readonly label: string;
  readonly answer: FastAnswer;
  readonly stringify: Serialize;
}

/**
 * Why a fast path: clients poll, again and again, and a poll is the gateway's most frequent
 * request. Through Fastify a poll cost ~3x the bare node:http ceiling in server CPU (routing,
 * request/reply objects, a child logger, hook chains, promise turns), which capped polls at
 * ~30% of the ceiling (`npm run bench`). As Hono does, the fast path sits inside dispatch and
 * matches the route table's own rows (those with `fast`): a GET with a key looked up in the
 * last few seconds, whose row's fast answer has a body, within the key's quota, is answered
 * here with the same body (the row's response schema, compiled by the same library), default
 * headers, request id, metrics label and log line as the router. Everything that can differ
 * between requests (a missing or uncached key, a quota, an unknown task, a framework feature,
 * every error) stays with the router, the one place that makes error envelopes.
 * test/fast-poll.test.ts holds the two answers side by side.
 */
export function createDispatch(options: DispatchOptions): Dispatch {
  const { keys, limits, requestId, record, answered, logger, open } = options;
  const debug = logger.isLevelEnabled('debug');
  const fast: FastRoute[] = [];
  for (const route of options.routes) {
    if (route.fast === undefined) continue;
    if (route.auth !== true || route.response === undefined || !route.methods.includes('GET') || route.path.includes('*')) {
      throw new Error(`route ${route.path}: a fast answer needs a GET with auth, a response schema and no wildcard`);
    }
    const { regex, params } = compilePattern(route.path, ID_SEGMENT);
    const stringify: Serialize = compileStringifier(route.response);
    fast.push({ regex, params, label: route.metricsLabel ?? route.path, answer: route.fast(options.deps, stringify), stringify });
  }

  const answer = (req: IncomingMessage, res: ServerResponse, route: FastRoute, body: object | Buffer, started: number): void => {
    traceHttpRoute(req, route.label);
    const text = Buffer.isBuffer(body) ? body : route.stringify(body);
    const id = requestId(req);
    const headers = defaultHeaders(id);
    headers['content-type'] = 'application/json; charset=utf-8';
    headers['content-length'] = typeof text === 'string' ? Buffer.byteLength(text) : text.length;
    res.writeHead(200, headers);
    res.end(text);
    const ms = performance.now() - started;
    record(route.label, 'GET', 200, ms / 1000);
    answered.inc();
    if (debug) logResponse(logger.child({ [REQUEST_ID_LOG_LABEL]: id }), debug, 'GET', req.url ?? '', 200, ms);
  };

  const tryFast = (req: IncomingMessage, res: ServerResponse, router: () => void): boolean => {
    const url = req.url;
    if (url === undefined || !open()) return false;
    for (const route of fast) {
      const match = route.regex.exec(url);
      if (match === null) continue;
      const key = bearerToken(req.headers.authorization);
      if (typeof key !== 'string') return false;
      const apiKey = keys.resolveCached(key);
      // An admin key on a client operation is the router's 401.
      if (apiKey === undefined || apiKey.role !== 'client') return false;
      const owner = apiKey.id;
      const params: Record<string, string> = {};
      for (let i = 0; i < route.params.length; i += 1) params[route.params[i] ?? ''] = match[i + 1] ?? '';
      const started = performance.now();
      // The quota is taken only for a request this path answers: the router takes its own.
      const respond = (body: object | Buffer | undefined): void => {
        if (body === undefined || (limits !== undefined && !limits.tryTakeRequest(owner, apiKey.rateLimitPerMin))) router();
        else answer(req, res, route, body, started);
      };
      const answered = route.answer(owner, params);
      if (Buffer.isBuffer(answered)) {
        respond(answered);
        return true;
      }
      answered
        .then(respond)
        // A fault: the router reads again and reports it in the family's envelope.
        .catch(() => {
          if (!res.headersSent) router();
        });
      return true;
    }
    return false;
  };

  const creates = createFastCreates({ ...options, answered: options.createsAnswered });
  return (req, res, router) => {
    if (req.method === 'GET' && fast.length > 0 && tryFast(req, res, router)) return;
    if (req.method === 'POST' && creates(req, res)) return;
    router();
  };
}
