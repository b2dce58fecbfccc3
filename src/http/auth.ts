import type { FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../errors.js';
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

export function authHook(keys: KeyRegistry, limits?: KeyLimits) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const header = request.headers.authorization;
    if (header === undefined || header === '') throw errors.invalidApiKey('Missing Authorization header; send `Authorization: Bearer <API_KEY>`.');
    const match = BEARER.exec(header);
    if (!match?.[1]) throw errors.invalidApiKey('The Authorization header must be `Bearer <API_KEY>`.');
    const owner = await keys.resolve(match[1]);
    if (!owner) throw errors.invalidApiKey('The API key is not valid.');
    request.owner = owner;
    // After the key: a quota belongs to a key, and an unknown key is a 401, not a 429.
    limits?.takeRequest(owner);
  };
}

export type AuthHook = ReturnType<typeof authHook>;
