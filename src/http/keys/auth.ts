import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { errors, type ApiError } from '../../errors.js';
import type { KeyInfo, KeyRegistry } from '../../auth/api-keys.js';
import type { KeyLimits } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Id of the API key that made the request; set by the auth hook on /v1 routes. */
    owner: string;
    /** The key that made the request, with its settings; set with `owner`. */
    apiKey: KeyInfo;
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
 * costs a promise and a tick on every request. `role`: the role the route needs; a key of the
 * other role is refused (an admin key on a client operation: 401, as an unknown key; a client
 * key on an admin operation: 403 admin_key_required).
 */
export function authHook(keys: KeyRegistry, limits?: KeyLimits, role: 'client' | 'admin' = 'client') {
  const admit = (request: FastifyRequest, key: KeyInfo | undefined, done: HookHandlerDoneFunction): void => {
    if (key === undefined || (key.role !== role && role === 'client')) {
      done(errors.invalidApiKey('The API key is not valid.'));
      return;
    }
    if (key.role !== role) {
      done(errors.adminKeyRequired());
      return;
    }
    request.owner = key.id;
    request.apiKey = key;
    try {
      // After the key: a quota belongs to a key, and an unknown key is a 401, not a 429.
      limits?.takeRequest(key.id, key.rateLimitPerMin);
    } catch (error) {
      done(error as ApiError);
      return;
    }
    done();
  };
  const check = (request: FastifyRequest, done: HookHandlerDoneFunction): void => {
    const token = bearerToken(request.headers.authorization);
    if (typeof token !== 'string') {
      done(token);
      return;
    }
    const cached = keys.resolveCached(token);
    if (cached !== undefined) {
      admit(request, cached, done);
      return;
    }
    keys.resolve(token).then(
      (key) => admit(request, key, done),
      (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
    );
  };
  if (role === 'client') return (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => check(request, done);
  // The admin API is not there at all (404) until an admin key exists: a deployment that does
  // not use it shows nothing to probe.
  return (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    keys.hasAdminKeys().then(
      (present) => (present ? check(request, done) : done(errors.notFound(request.method, request.url))),
      (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
    );
  };
}

export type AuthHook = ReturnType<typeof authHook>;
