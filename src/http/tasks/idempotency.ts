import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { ModelKind } from '../../catalog/index.js';
import { errors } from '../../errors.js';

/** decisions §8: 1-255 printable ASCII characters (space through tilde). */
const KEY_FORMAT = /^[\x20-\x7e]{1,255}$/;

/** The request's Idempotency-Key, undefined when absent; a malformed one is a 400. */
export function idempotencyKeyOf(request: Pick<FastifyRequest, 'headers'>): string | undefined {
  const value = request.headers['idempotency-key'];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !KEY_FORMAT.test(value)) throw errors.invalidIdempotencyKey();
  return value;
}

/**
 * The hash a replay must match: the family and the body re-serialised with sorted keys, so
 * that whitespace and key order do not make "another body".
 */
export function requestHash(kind: ModelKind, body: unknown): string {
  return createHash('sha256').update(kind).update('\n').update(canonicalJson(body)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * Keys whose first request is still being processed in this process: a second request with
 * the same key meanwhile is 409 idempotency_key_in_use. (Across processes, the store's
 * primary key on (owner, key) decides; the loser replays the winner's task.)
 */
export class InFlightKeys {
  private readonly held = new Set<string>();

  /** Holds the key for `run`; 409 if it is held already. */
  async hold<T>(owner: string, key: string, run: () => Promise<T>): Promise<T> {
    const id = `${owner}\n${key}`;
    if (this.held.has(id)) throw errors.idempotencyKeyInUse();
    this.held.add(id);
    try {
      return await run();
    } finally {
      this.held.delete(id);
    }
  }
}
