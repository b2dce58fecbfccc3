import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { errors, type ApiError } from '../errors.js';
import type { KeyRegistry } from '../auth/api-keys.js';
import type { KeyLimits } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Id of the API key that made the request; set by the auth hook on /v1 routes. */
    owner: string;
  }
}

// The scheme word is case-insensitive (decisions §7); the key is one token.
const BEARER = /^bearer +([^\s]+) *$/i;

/** The key an `Authorization` header presents, or the 401 it earns. */
export function bearerToken(header: string | undefined): string | ApiError {
  if (header === undefined || header === '') return errors.invalidApiKey('Missing Authorization header; send `Authorization: Bearer <API_KEY>`.');
  const key = BEARER.exec(header)?.[1];
  return key ? key : errors.invalidApiKey('The Authorization header must be `Bearer <API_KEY>`.');
}

/**
 * The onRequest hook of /v1 routes: the key's owner on `request.owner`, then its request quota.
 * Callback-style, and synchronous for a key looked up in the last few seconds: an async hook
 * costs a promise and a tick on every request.
 */
export function authHook(keys: KeyRegistry, limits?: KeyLimits) {
  const admit = (request: FastifyRequest, owner: string | undefined, done: HookHandlerDoneFunction): void => {
    if (owner === undefined) {
      done(errors.invalidApiKey('The API key is not valid.'));
      return;
    }
    request.owner = owner;
    try {
      // After the key: a quota belongs to a key, and an unknown key is a 401, not a 429.
      limits?.takeRequest(owner);
    } catch (error) {
      done(error as ApiError);
      return;
    }
    done();
  };
  return (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const key = bearerToken(request.headers.authorization);
    if (typeof key !== 'string') {
      done(key);
      return;
    }
    const cached = keys.resolveCached(key);
    if (cached !== undefined) {
      admit(request, cached, done);
      return;
    }
    keys.resolve(key).then(
      (owner) => admit(request, owner, done),
      (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
    );
  };
}

export type AuthHook = ReturnType<typeof authHook>;
