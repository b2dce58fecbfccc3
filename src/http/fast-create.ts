import type { IncomingMessage, ServerResponse } from 'node:http';
import compileStringifier from 'fast-json-stringify';
import type { Logger } from 'pino';
import type { KeyInfo, KeyRegistry } from '../auth/api-keys.js';
import { errorBody } from '../wire/envelopes.js';
import { inRequestTrace, traceHttpRoute, tracingEnabled } from '../tracing/index.js';
import { bearerToken } from './keys/auth.js';
import { parseJsonBody } from './body/json-body.js';
import { defaultHeaders } from './server/default-headers.js';
import { apiErrorOf, logFailure, parseError } from './error-answer.js';
import type { KeyLimits } from './keys/rate-limit.js';
import { REQUEST_ID_LOG_LABEL, logResponse } from './requests/request-log.js';
import type { RecordRequest } from './requests/request-metrics.js';
import type { CreateRequest, FastCreate, Route, RouteDeps, Serialize } from './route.js';

/** What a fast path (this one, and the status poll's in dispatch.ts) answers with. */
export interface FastPathOptions {
  readonly routes: readonly Route[];
  readonly deps: RouteDeps;
  readonly keys: KeyRegistry;
  readonly limits: KeyLimits | undefined;
  readonly requestId: (req: IncomingMessage) => string;
  readonly record: RecordRequest;
  /** Counts the requests the fast path answers. */
  readonly answered: { inc(): void };
  readonly logger: Logger;
  /** False while the server closes: the router answers 503 then. */
  readonly open: () => boolean;
}

/** Takes the request (true) and answers it, or leaves it untouched for the router (false). */
export type FastCreates = (req: IncomingMessage, res: ServerResponse) => boolean;

/**
 * Bodies this path reads itself. A create's JSON is a few hundred bytes; a body with data URLs
 * can be megabytes and is the router's (a parser thread checks it, body-parser-pool.ts).
 */
const FAST_BODY_BYTES = 16 * 1024;

/** The two spellings clients send; any other (parameters, case) is the router's to judge. */
const JSON_TYPES = new Set(['application/json', 'application/json; charset=utf-8']);

interface CreateRoute {
  readonly label: string;
  readonly family: Route['family'];
  readonly create: FastCreate;
  readonly stringify: Serialize;
}

/**
 * Why a fast path for creates: after the insert, Fastify's routing, request/reply objects, hook
 * chains and promise turns were the largest part of a create's server CPU (docs/benchmarks.md).
 * A `POST` to a row with `fastCreate`, exactly its path, a JSON body of known small length, no
 * Idempotency-Key, a client key looked up in the last few seconds and within its quota, is read,
 * parsed and created here: the same parse and bounds (json-body.ts), the same create flow, body
 * serializer, default headers, request id, error envelope (error-answer.ts), metrics label, log
 * lines and trace as the router. Everything else (no or uncached key, a quota refusal, chunked or
 * large bodies, a query string, any other header the router judges) is left to the router before
 * a byte of the body is read. test/fast-create.test.ts holds the two answers side by side.
 */
export function createFastCreates(options: FastPathOptions): FastCreates {
  const { deps, keys, limits, requestId, record, answered, logger, open } = options;
  const { ctx } = deps;
  const debug = logger.isLevelEnabled('debug');
  const maxBytes = Math.min(FAST_BODY_BYTES, ctx.bodyLimitBytes);
  const byPath = new Map<string, CreateRoute>();
  for (const route of options.routes) {
    if (route.fastCreate === undefined) continue;
    if (route.auth !== true || !route.methods.includes('POST') || route.path.includes(':') || route.path.includes('*')) {
      throw new Error(`route ${route.path}: a fast create needs a POST with auth and a path without parameters`);
    }
    const stringify: Serialize = route.response === undefined ? JSON.stringify : compileStringifier(route.response);
    byPath.set(route.path, { label: route.metricsLabel ?? route.path, family: route.family, create: route.fastCreate(deps), stringify });
  }

  const send = (
    req: IncomingMessage,
    res: ServerResponse,
    route: CreateRoute,
    status: number,
    headers: Record<string, string | number>,
    text: string,
    started: number,
    id: string,
  ): void => {
    headers['content-type'] = 'application/json; charset=utf-8';
    headers['content-length'] = Buffer.byteLength(text);
    res.writeHead(status, headers);
    res.end(text);
    const ms = performance.now() - started;
    record(route.label, 'POST', status, ms / 1000);
    answered.inc();
    // A pino child costs ~1.3 µs (requests/lazy-logger.ts): made only for a line that is written.
    if (debug || status >= 500) logResponse(logger.child({ [REQUEST_ID_LOG_LABEL]: id }), debug, 'POST', req.url ?? '', status, ms);
  };

  const run = (req: IncomingMessage, res: ServerResponse, route: CreateRoute, key: KeyInfo, bytes: Buffer, started: number): void => {
    const id = requestId(req);
    const headers = defaultHeaders(id);
    const parsed = parseJsonBody(bytes, ctx.jsonLimits, false);
    const body = parsed.ok ? parsed.body : undefined;
    const fail = (error: unknown): void => {
      if (res.headersSent) return;
      const apiError = apiErrorOf(error, ctx, req.headers['content-type']);
      // logFailure writes for a 5xx only (a 503 among them): a 400's create pays no child logger.
      if (apiError.status >= 500) logFailure(logger.child({ [REQUEST_ID_LOG_LABEL]: id }), apiError, error, body);
      for (const [name, value] of Object.entries(apiError.headers)) headers[name] = value;
      send(req, res, route, apiError.status, headers, JSON.stringify(errorBody(route.family, apiError)), started, id);
    };
    if (!parsed.ok) {
      fail(parseError(parsed));
      return;
    }
    const request: CreateRequest = { headers: req.headers, owner: key.id, apiKey: key, bodyBytes: bytes.length };
    const sink = {
      header: (name: string, value: string): void => {
        headers[name.toLowerCase()] = value;
      },
    };
    const created = tracingEnabled() ? inRequestTrace(req, () => route.create(request, body, sink)) : route.create(request, body, sink);
    // One `then` with both arms, not `then` and `catch`: a create pays each promise it makes.
    created.then((answer) => {
      try {
        send(req, res, route, 200, headers, route.stringify(answer), started, id);
      } catch (error) {
        fail(error);
      }
    }, fail);
  };

  return (req, res) => {
    const route = req.url === undefined ? undefined : byPath.get(req.url);
    if (route === undefined || !open()) return false;
    const { headers } = req;
    const type = headers['content-type'];
    const length = headers['content-length'];
    if (type === undefined || !JSON_TYPES.has(type) || length === undefined || headers['transfer-encoding'] !== undefined) return false;
    if (headers['idempotency-key'] !== undefined) return false;
    const bytes = Number(length);
    if (!Number.isInteger(bytes) || bytes < 1 || bytes > maxBytes || String(bytes) !== length) return false;
    const token = bearerToken(headers.authorization);
    if (typeof token !== 'string') return false;
    const key = keys.resolveCached(token);
    // An admin key on a client operation is the router's 401; a refused quota its 429.
    if (key === undefined || key.role !== 'client') return false;
    if (limits !== undefined && !limits.tryTakeRequest(key.id, key.rateLimitPerMin)) return false;
    const started = performance.now();
    traceHttpRoute(req, route.label);
    const chunks: Buffer[] = [];
    let received = 0;
    req.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
    });
    // node's parser ends the body at its Content-Length; a client that hangs up first gets nothing.
    req.on('end', () => run(req, res, route, key, chunks.length === 1 ? (chunks[0] ?? Buffer.alloc(0)) : Buffer.concat(chunks, received), started));
    req.on('error', () => undefined);
    return true;
  };
}
