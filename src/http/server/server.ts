import { Loop } from '../../loop.js';
import { EventStreams } from '../tasks/event-streams.js';
import { DEFAULT_CURRENCY } from '../../billing/index.js';
import { channel } from 'node:diagnostics_channel';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type RouteOptions } from 'fastify';
import type { Logger } from 'pino';
import { ApiError, errors } from '../../errors.js';
import { authHook } from '../keys/auth.js';
import { answerLongParam } from './long-param.js';
import { BodyParserPool, OFFLOAD_BYTES } from '../body/body-parser-pool.js';
import { dataUrlStrings, parseJsonBody, type JsonBodyResult } from '../body/json-body.js';
import type { HttpContext } from '../context.js';
import { defaultHeaders } from './default-headers.js';
import { createDispatch } from '../dispatch.js';
import { FinalBodies, watchChanges } from '../tasks/final-bodies.js';
import { apiErrorOf, logFailure, parseError } from '../error-answer.js';
import { errorBody, familyOf } from '../../wire/envelopes.js';
import { registerCors } from './cors.js';
import { LazyChildLogger } from '../requests/lazy-logger.js';
import { createOutputUrls } from '../../storage/output-urls.js';
import { applyConnectionLimits, checkIntervalMs, type ConnectionLimits } from './connection-limits.js';
import { createRequestIds } from '../requests/request-ids.js';
import { logResponse } from '../requests/request-log.js';
import { createRequestRecorder } from '../requests/request-metrics.js';
import { allowedMethodsFor } from './route-patterns.js';
import type { Handler, Route, RouteDeps } from '../route.js';
import { inRequestTrace, traceHttpRequest, traceHttpRoute } from '../../tracing/index.js';
import { ROUTES } from '../routes.js';

/** A route registered other than from the route table (routes.ts). */
export class UndeclaredRouteError extends Error {
  override readonly name = 'UndeclaredRouteError';
  readonly code = 'undeclared_route';
}

/**
 * Fastify sets this on a server it creates, and not on one from a serverFactory: the server
 * we create for it gets its default (keep-alive 72 s). Timeouts and caps: connection-limits.ts.
 */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/** Until configured otherwise (tests building a server by hand): the documented defaults. */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 120_000,
  maxConnections: 10_000,
  maxHeaderBytes: 16 * 1024,
};

/** A raw answer on a socket that never reached a route (no framework, no envelope choice). */
function rawAnswer(socket: Socket, status: string, body: string): void {
  socket.end(`HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/**
 * The Fastify server of the HTTP API, with every route of the route table (routes.ts) behind a
 * request listener that answers status polls before routing (dispatch.ts).
 */
export function buildHttpServer(ctx: HttpContext, logger: Logger, routes: readonly Route[] = ROUTES): FastifyInstance {
  const limits = ctx.connectionLimits ?? DEFAULT_CONNECTION_LIMITS;
  const record = createRequestRecorder(ctx.metrics);
  const requestId = createRequestIds();
  const closingStreams = new AbortController();
  const streams = new EventStreams(ctx.keys, ctx.eventStreamLimits);
  const deps: RouteDeps = {
    ctx,
    urlFor: createOutputUrls(ctx),
    currency: ctx.pricing?.currency ?? DEFAULT_CURRENCY,
    closing: closingStreams.signal,
    routes,
    streams,
    finalBodies: new FinalBodies({
      maxBytes: ctx.finalBodyCache?.maxBytes ?? 0,
      retentionMs: ctx.finalBodyCache?.retentionMs ?? 0,
      generation: () => ctx.signer.generation,
      live: () => ctx.feed.live,
    }),
  };
  // Every change of a task, whichever process made it, drops its body (final-bodies.ts): a running
  // task's new state, or a task deleted by its owner (the front doors' DELETE) in any process;
  // this process's own changes at once.
  const unwatchBodies = watchChanges(deps.finalBodies, ctx.feed, ctx.service);
  let closing = false;
  const dispatch = createDispatch({
    routes,
    deps,
    keys: ctx.keys,
    limits: ctx.keyLimits,
    requestId,
    record,
    answered: ctx.metrics.fastPolls.tally({}),
    createsAnswered: ctx.metrics.fastCreates.tally({}),
    logger,
    open: () => !closing,
  });
  // The listener reads `cors`, made from the app just below, only when requests arrive.
  const app = createApp(ctx, logger, limits, requestId, (req, res, router) => {
    // Once a close has begun, each answer ends its connection: a kept-alive socket would hold the close.
    if (closing) res.setHeader('connection', 'close');
    // A cross-origin request takes the router, whose CORS hook sets its headers.
    if (cors.needsRouter(req)) router();
    else {
      cors.withoutOrigin(req, res);
      dispatch(req, res, router);
    }
  });
  const cors = registerCors(app, ctx.corsOrigins);
  registerJsonParser(app, ctx);
  registerHooks(app, logger, record);
  registerErrorAnswers(app, ctx, allowedMethodsFor(routes));
  const idleSweep = new Loop({
    name: 'idle-connections',
    immediate: false,
    intervalMs: 100,
    turn: () => void app.server.closeIdleConnections(),
    onError: () => undefined,
  });
  app.addHook('preClose', (done) => {
    closing = true;
    unwatchBodies();
    // Event streams never end by themselves; a close waits for open connections.
    closingStreams.abort();
    streams.close();
    // server.close() closes the connections idle at that moment, once. One whose answer was
    // still being written turns idle later and would hold the close until its keep-alive
    // timeout (72 s): sweep idle connections until the server has closed.
    // Unref'd, and ended by the close (a server that never listened emits no 'close').
    idleSweep.start();
    done();
  });
  app.addHook('onClose', (_instance, closed) => {
    void idleSweep.stop();
    closed();
  });
  registerRoutes(app, ctx, routes, deps);
  return app;
}

/**
 * The Fastify instance on a node:http server of ours (so that `listener` sees each request
 * before the router: `router()` hands it on), with our logger, request ids and answers to
 * bytes that never reach a route.
 */
function createApp(
  ctx: HttpContext,
  logger: FastifyBaseLogger,
  limits: ConnectionLimits,
  requestId: (req: IncomingMessage) => string,
  listener: (req: IncomingMessage, res: ServerResponse, router: () => void) => void,
): FastifyInstance {
  return Fastify({
    // Our server, so that a status poll can be answered before routing (dispatch.ts).
    serverFactory: (handler) => {
      const server = createServer({ maxHeaderSize: limits.maxHeaderBytes, connectionsCheckingInterval: checkIntervalMs(limits) }, (req, res) => {
        traceHttpRequest(req, res);
        listener(req, res, () => handler(req, res));
      });
      server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
      applyConnectionLimits(server, limits);
      return server;
    },
    loggerInstance: withoutListenLine(logger),
    bodyLimit: ctx.bodyLimitBytes,
    // The client's own x-request-id is echoed only when it is a short, plain token: it goes
    // into every log line of the request, so nothing else from a client is trusted there.
    requestIdHeader: false,
    genReqId: requestId,
    childLoggerFactory: (parent, bindings, options) => new LazyChildLogger(parent, bindings, options),
    // Our onResponse hook logs one line per request instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // A URL that cannot be decoded is a route nobody has: 404 in the family's envelope.
    frameworkErrors: (error, request, reply) => {
      if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return answerLongParam(ctx, request, reply);
      const apiError = error.code === 'FST_ERR_BAD_URL' ? errors.notFound(request.method, request.url) : errors.malformedJson(error.message);
      void (reply as FastifyReply).code(apiError.status).send(errorBody(familyOf(request.url), apiError));
    },
    clientErrorHandler: answerClientError(limits),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 256 },
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  });
}

/** The text Fastify logs, at `info` on its root logger, for each address it listens on. */
const FASTIFY_LISTEN_LINE = 'Server listening at ';

/**
 * The logger Fastify is given: the service's own, less Fastify's "Server listening at <url>".
 * The process logs one start-up line of its own ("mediagate listening": the URL with what is
 * loaded), so the address is not said twice. Children (request loggers) inherit the filter,
 * which lets every other line through unchanged with their own bindings.
 */
function withoutListenLine(logger: FastifyBaseLogger): FastifyBaseLogger {
  const info = logger.info;
  const filtered = Object.create(logger) as FastifyBaseLogger;
  filtered.info = function (this: FastifyBaseLogger, ...args: Parameters<typeof info>) {
    if (typeof args[0] === 'string' && args[0].startsWith(FASTIFY_LISTEN_LINE)) return;
    info.apply(this, args);
  };
  return filtered;
}

/**
 * Bytes that are not HTTP, or that arrive too slowly or too many, never reach a route: answer
 * in the video envelope, then hang up.
 */
function answerClientError(limits: ConnectionLimits): (error: Error & { code?: string }, socket: Socket) => void {
  return (error, socket) => {
    if (!socket.writable || error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      // Past its timeout, a request that already got an answer (a 401 before its body) is
      // cut without another; one that got nothing is told why.
      if (socket.bytesWritten > 0) socket.destroy();
      else rawAnswer(socket, '408 Request Timeout', JSON.stringify(errorBody('video', errors.requestTimeout())));
      return;
    }
    if (error.code === 'HPE_HEADER_OVERFLOW') {
      rawAnswer(socket, '431 Request Header Fields Too Large', JSON.stringify(errorBody('video', errors.headersTooLarge(limits.maxHeaderBytes))));
      return;
    }
    rawAnswer(socket, '400 Bad Request', JSON.stringify(errorBody('video', errors.malformedJson('the request is not valid HTTP.'))));
  };
}

/**
 * Each body parse, published as `{ phase: 'start' | 'end', bytes, offloaded }` when someone
 * listens (node:diagnostics_channel): how a spec sees the event loop answer during a parse.
 */
export const PARSES = channel('mediagate:json-body-parse');

/**
 * One JSON parser that also records the raw size (seed rule 2 limits one model's body). Bodies
 * of OFFLOAD_BYTES and more are parsed in a worker thread (body-parser-pool.ts), which also
 * checks their data URLs' Base64 for validation: the event loop goes on answering meanwhile.
 */
function registerJsonParser(app: FastifyInstance, ctx: HttpContext): void {
  const pool = new BodyParserPool();
  app.addHook('onClose', (_instance, closed) => {
    pool.close().then(() => closed(), closed);
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const buffer = body as Buffer;
    request.bodyBytes = buffer.length;
    // An empty body is reported by the route (or ignored by a 404/405), not here.
    if (buffer.length === 0) {
      done(null, undefined);
      return;
    }
    const parsed = (result: JsonBodyResult): void => {
      if (result.ok) {
        const checks = result.dataUrls;
        if (checks) request.checkedMedia = dataUrlStrings(result.body).flatMap((value, index) => (checks[index] ? [{ value, check: checks[index] }] : []));
        done(null, result.body);
      } else done(parseError(result), undefined);
    };
    const bytes = buffer.length;
    const offloaded = bytes >= OFFLOAD_BYTES;
    if (PARSES.hasSubscribers) PARSES.publish({ phase: 'start', bytes, offloaded });
    const ended = (result: JsonBodyResult): void => {
      if (PARSES.hasSubscribers) PARSES.publish({ phase: 'end', bytes, offloaded });
      parsed(result);
    };
    if (!offloaded) ended(parseJsonBody(buffer, ctx.jsonLimits, false));
    else void pool.parse(buffer, ctx.jsonLimits).then(ended);
  });
}

/** Default headers on every answer; one metric and one log line per request. */
function registerHooks(app: FastifyInstance, logger: Logger, record: ReturnType<typeof createRequestRecorder>): void {
  const debugEnabled = logger.isLevelEnabled('debug');
  // Callback-style hooks: on every request, an async hook would cost a promise and a tick.
  app.addHook('onRequest', (request, reply, done) => {
    const route = request.routeOptions.config.route;
    if (route !== undefined) traceHttpRoute(request.raw, route.metricsLabel ?? route.path);
    reply.headers(defaultHeaders(request.id));
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.config.route;
    record(route === undefined ? 'unknown' : (route.metricsLabel ?? route.path), request.method, reply.statusCode, reply.elapsedTime / 1000);
    logResponse(request.log, debugEnabled, request.method, request.url, reply.statusCode, reply.elapsedTime);
    done();
  });
}

/** Errors in the route's family envelope; a path no row has is a 405 (with Allow) or a 404. */
function registerErrorAnswers(app: FastifyInstance, ctx: HttpContext, allowedMethods: ReturnType<typeof allowedMethodsFor>): void {
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    const family = request.routeOptions.config.route?.family ?? familyOf(request.url);
    const apiError = apiErrorOf(error, ctx, request.headers['content-type']);
    logFailure(request.log, apiError, error, request.body);
    for (const [name, value] of Object.entries(apiError.headers)) reply.header(name, value);
    return reply.code(apiError.status).send(errorBody(family, apiError));
  });

  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    // Without an admin key the admin API is not there: no 405 tells its paths apart either.
    const hidden = path.startsWith('/v1/admin/') && !(await ctx.keys.hasAdminKeys());
    const allowed = hidden ? undefined : allowedMethods(path);
    const error = allowed ? errors.methodNotAllowed(request.method, allowed) : errors.notFound(request.method, request.url);
    for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
    return reply.code(error.status).send(errorBody(familyOf(request.url), error));
  });
}

/** A handler run in its request's span (tracing/): what it does, a create or a log line, knows the trace. */
function tracedHandler(handler: Handler): Handler {
  return (request, reply) => inRequestTrace(request.raw, () => handler(request, reply));
}

/** Each row of the route table as one route; one registered any other way is refused. */
function registerRoutes(app: FastifyInstance, ctx: HttpContext, routes: readonly Route[], deps: RouteDeps): void {
  const declared = new Set(
    routes.flatMap((route) => route.methods.flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method])).map((method) => `${method} ${route.path}`)),
  );
  app.addHook('onRoute', (options) => {
    for (const method of [options.method].flat()) {
      if (!declared.has(`${method} ${options.url ?? ''}`))
        throw new UndeclaredRouteError(`${method} ${options.url ?? ''} is not in the route table (http/routes.ts)`);
    }
  });
  const auth = authHook(ctx.keys, ctx.keyLimits);
  const adminAuth = authHook(ctx.keys, ctx.keyLimits, 'admin');
  for (const route of routes) {
    const options: RouteOptions = {
      method: [...route.methods],
      url: route.path,
      config: { route },
      ...(route.auth === 'admin' ? { onRequest: adminAuth } : route.auth ? { onRequest: auth } : {}),
      ...(route.response ? { schema: { response: { 200: route.response } } } : {}),
      handler: tracedHandler(route.handler(deps)),
    };
    const parsers = route.parsers;
    if (parsers !== undefined) {
      // Its own scope: the JSON parser inherited, the row's own added.
      void app.register(async (scope) => {
        await parsers(scope);
        scope.route(options);
      });
    } else if (!route.ignoresBody) app.route(options);
    else {
      // Its own scope, whose one parser takes any type and drops the bytes.
      void app.register((scope, _opts, done) => {
        scope.removeAllContentTypeParsers();
        scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, parsed) => parsed(null, undefined));
        scope.route(options);
        done();
      });
    }
  }
}
