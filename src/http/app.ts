import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { ApiError, errors } from '../errors.js';
import { authHook } from './auth.js';
import { checkJsonLimits } from './json-limits.js';
import { withoutPrompts } from '../logging.js';
import type { HttpContext } from './context.js';
import { renderDocsPage } from './docs-page.js';
import { errorBody, familyOf } from './envelopes.js';
import { buildOpenApi } from './openapi.js';
import { registerConsole } from './console-assets.js';
import { registerCors } from './cors.js';
import { createFastPoll } from './fast-poll.js';
import { LazyChildLogger } from './lazy-logger.js';
import { createOutputUrls } from './output-urls.js';
import { createRequestIds } from './request-ids.js';
import { createRequestRecorder } from './request-metrics.js';
import { allowedMethods } from './routes-table.js';
import { fileRoutes } from './routes/files.js';
import { modelRoutes } from './routes/models.js';
import { taskRoutes } from './routes/tasks.js';

/** Framework errors a client can cause, mapped to our codes; anything else is a 500. */
function fromFrameworkError(error: FastifyError, bodyLimit: number, contentType: string | undefined): ApiError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.bodyTooLarge(bodyLimit);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return errors.unsupportedMediaType(contentType);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.malformedJson('the body is empty.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return errors.malformedJson('the Content-Length does not match the body.');
    default:
      if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
        return new ApiError(error.statusCode, 'invalid_parameter', 'body', error.message);
      }
      return undefined;
  }
}

/**
 * Fastify sets these on a server it creates, and not on one from a serverFactory: the server
 * we create for it gets its defaults, so nothing changes for clients (keep-alive 72 s, no
 * overall request timeout, as before the fast path).
 */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;
const REQUEST_TIMEOUT_MS = 0;

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function buildHttpApp(ctx: HttpContext, logger: Logger): FastifyInstance {
  const debugEnabled = logger.isLevelEnabled('debug');
  const record = createRequestRecorder(ctx.metrics);
  const requestId = createRequestIds();
  const urlFor = createOutputUrls(ctx);
  let closing = false;
  const fastPoll = createFastPoll({
    keys: ctx.keys,
    limits: ctx.keyLimits,
    getTask: (owner, id) => ctx.service.get(owner, id),
    urlFor,
    requestId,
    record,
    answered: ctx.metrics.fastPolls,
    // At debug level every request gets its log line from the app's hook.
    enabled: () => !closing && !debugEnabled,
  });
  const app = Fastify({
    // Our server, so that a status poll can be answered before routing (http/fast-poll.ts).
    serverFactory: (handler) => {
      const server = createServer((req, res) => {
        if (cors.needsRouter(req) || !fastPoll(req, res, () => handler(req, res))) handler(req, res);
      });
      server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
      server.requestTimeout = REQUEST_TIMEOUT_MS;
      return server;
    },
    loggerInstance: logger as FastifyBaseLogger,
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
      const apiError = error.code === 'FST_ERR_BAD_URL' ? errors.notFound(request.method, request.url) : errors.malformedJson(error.message);
      void (reply as FastifyReply).code(apiError.status).send(errorBody(familyOf(request.url), apiError));
    },
    // Bytes that are not HTTP never reach a route; answer in the video envelope, then hang up.
    clientErrorHandler: (error: Error & { code?: string }, socket: Socket) => {
      if (!socket.writable || error.code === 'ECONNRESET') {
        socket.destroy();
        return;
      }
      const body = JSON.stringify(errorBody('video', errors.malformedJson('the request is not valid HTTP.')));
      socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 256 },
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  });

  const cors = registerCors(app, ctx.corsOrigins);

  // One JSON parser that also records the raw size (seed rule 2 limits one model's body).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const buffer = body as Buffer;
    request.bodyBytes = buffer.length;
    // An empty body is reported by the route (or ignored by a 404/405), not here.
    if (buffer.length === 0) {
      done(null, undefined);
      return;
    }
    // Shape bounds first, on the bytes: a hostile body is refused before it costs a parse.
    const problem = ctx.jsonLimits ? checkJsonLimits(buffer, ctx.jsonLimits) : undefined;
    if (problem) {
      done(errors.bodyShapeLimit(problem.param, problem.message), undefined);
      return;
    }
    let text: string;
    try {
      // JSON is UTF-8 (RFC 8259); invalid bytes are an error, not silently replaced.
      text = UTF8.decode(buffer);
    } catch {
      done(errors.malformedJson('the body is not valid UTF-8.'), undefined);
      return;
    }
    try {
      done(null, JSON.parse(text) as unknown);
    } catch (error) {
      done(errors.malformedJson(error instanceof Error ? error.message : 'parse error'), undefined);
    }
  });

  // Callback-style hooks: on every request, an async hook would cost a promise and a tick.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    record(request.routeOptions.url ?? 'unknown', request.method, reply.statusCode, reply.elapsedTime / 1000);
    if (reply.statusCode >= 500) request.log.error({ status: reply.statusCode, url: request.url.split('?')[0] }, 'request failed');
    else if (debugEnabled) {
      request.log.debug({ status: reply.statusCode, method: request.method, url: request.url.split('?')[0], ms: reply.elapsedTime }, 'request');
    }
    done();
  });

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    const family = familyOf(request.url);
    const apiError =
      error instanceof ApiError ? error : (fromFrameworkError(error, ctx.bodyLimitBytes, request.headers['content-type']) ?? errors.internal(error));
    if (apiError.status >= 500) request.log.error({ err: withoutPrompts(error, request.body) }, 'unexpected error');
    for (const [name, value] of Object.entries(apiError.headers)) reply.header(name, value);
    return reply.code(apiError.status).send(errorBody(family, apiError));
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = allowedMethods(path);
    const error = allowed ? errors.methodNotAllowed(request.method, allowed) : errors.notFound(request.method, request.url);
    for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
    return reply.code(error.status).send(errorBody(familyOf(request.url), error));
  });

  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });

  const auth = authHook(ctx.keys, ctx.keyLimits);
  taskRoutes(app, ctx, auth, urlFor);
  modelRoutes(app, auth);
  fileRoutes(app, ctx);
  registerConsole(app, { publicUrl: ctx.publicUrl, bodyLimitBytes: ctx.bodyLimitBytes });

  let openapi: string | undefined;
  app.get('/openapi.json', async (_request, reply) => {
    openapi ??= JSON.stringify(buildOpenApi(ctx.publicUrl()));
    return reply.type('application/json').send(openapi);
  });
  const docs = renderDocsPage();
  app.get('/docs', async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
      .header('x-content-type-options', 'nosniff')
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'no-referrer')
      .header('cross-origin-opener-policy', 'same-origin')
      .header('cross-origin-resource-policy', 'same-origin')
      .header('permissions-policy', 'camera=(), microphone=(), geolocation=()')
      .send(docs),
  );
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async () => {
    await ctx.store.countKeys();
    return { status: 'ready' };
  });
  app.get('/metrics', async (_request, reply) => {
    for (const [status, n] of Object.entries(await ctx.store.countByStatus())) ctx.metrics.tasksByStatus.set({ status }, n);
    return reply.type(ctx.metrics.registry.contentType).send(await ctx.metrics.registry.metrics());
  });
  return app;
}
