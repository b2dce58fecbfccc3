import type { FastifyError } from 'fastify';
import { ApiError, errors } from '../errors.js';
import { withoutPrompts } from '../logging.js';
import type { JsonBodyResult } from './body/json-body.js';
import type { HttpContext } from './context.js';
import { outageAnswer } from './server/outage-answer.js';

/**
 * What an error thrown while answering a request becomes: the one mapping of errors onto API
 * errors, for the router's error handler (server.ts) and the create fast path (fast-create.ts),
 * so that both give the same status, code and headers to the same failure.
 */
export function apiErrorOf(error: unknown, ctx: Pick<HttpContext, 'bodyLimitBytes' | 'health'>, contentType: string | undefined): ApiError {
  if (error instanceof ApiError) return error;
  return fromFrameworkError(error as Partial<FastifyError>, ctx.bodyLimitBytes, contentType) ?? outageAnswer(error, ctx.health) ?? errors.internal(error);
}

/** The line a server-side failure earns (client errors get none beyond the request's own line). */
export function logFailure(
  log: { info(fields: object, msg: string): void; warn(fields: object, msg: string): void; error(fields: object, msg: string): void },
  apiError: ApiError,
  error: unknown,
  body: unknown,
): void {
  if (apiError.code === 'service_unavailable') log.warn({ err: withoutPrompts(error, body) }, 'a dependency is unreachable');
  // A held request's wait ending (its bound, the server stopping, the client leaving) is an
  // answer the interface promises, not a fault: its task goes on.
  else if (apiError.code === 'wait_timeout') log.info({ err: withoutPrompts(error, body) }, 'a held request stopped waiting; its task goes on');
  else if (apiError.status >= 500) log.error({ err: withoutPrompts(error, body) }, 'unexpected error');
}

/** A request body the JSON parser refused, as the API error the client gets. */
export function parseError(result: Exclude<JsonBodyResult, { ok: true }>): ApiError {
  switch (result.problem) {
    case 'shape':
      return errors.bodyShapeLimit(result.param, result.message);
    case 'utf8':
      return errors.malformedJson('the body is not valid UTF-8.');
    case 'json':
      return errors.malformedJson(result.message);
    case 'lost':
      return errors.internal(new Error('the body parser thread stopped'));
  }
}

/** Framework errors a client can cause, mapped to our codes; anything else is a 500. */
function fromFrameworkError(error: Partial<FastifyError>, bodyLimit: number, contentType: string | undefined): ApiError | undefined {
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
        return new ApiError(error.statusCode, 'invalid_parameter', 'body', error.message ?? '');
      }
      return undefined;
  }
}
