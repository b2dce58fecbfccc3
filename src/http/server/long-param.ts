import type { FastifyReply, FastifyRequest } from 'fastify';
import { errors, type ApiError } from '../../errors.js';
import { errorBody, familyOf } from '../../wire/envelopes.js';
import { bearerToken } from '../keys/auth.js';
import type { HttpContext } from '../context.js';

/**
 * A path parameter longer than the router takes (256 characters: no id is that long) matches no
 * route, and is answered as a route would answer an unknown id: the key is checked first (401
 * without a valid one, so an anonymous caller learns nothing about the paths), then 404 in the
 * family's envelope. Fastify hands such a request to `frameworkErrors`, before any hook.
 */
export function answerLongParam(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply): void {
  const send = (error: ApiError): void => {
    for (const [name, value] of Object.entries(error.headers)) void reply.header(name, value);
    void reply.code(error.status).send(errorBody(familyOf(request.url), error));
  };
  const token = bearerToken(request.headers.authorization);
  if (typeof token !== 'string') {
    send(token);
    return;
  }
  ctx.keys.resolve(token).then(
    (key) => send(key === undefined ? errors.invalidApiKey('The API key is not valid.') : errors.notFound(request.method, request.url)),
    (error: unknown) => send(errors.internal(error)),
  );
}
