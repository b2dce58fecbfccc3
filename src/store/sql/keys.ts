import { operation } from '../dialect.js';
import type { CountRow, KeyRow } from '../rows.js';

export const findKeyByHash = operation<{ hash: string }, { id: string; revoked_at: number | string | null }>(
  'find-key-by-hash',
  () => `SELECT id, revoked_at FROM api_keys WHERE hash = @hash`,
);

/** A key whose hash is stored already is not inserted again (0 rows). */
export const insertKey = operation<{ id: string; hash: string; name: string; createdAt: number }>(
  'insert-key',
  () => `INSERT INTO api_keys (id, hash, name, created_at, revoked_at) VALUES (@id, @hash, @name, @createdAt, NULL) ON CONFLICT (hash) DO NOTHING`,
);

export const countKeys = operation<object, CountRow>('count-keys', () => `SELECT count(*) AS n FROM api_keys`);

export const listKeys = operation<object, KeyRow>('list-keys', () => `SELECT id, name, created_at, revoked_at FROM api_keys ORDER BY created_at`);

export const revokeKey = operation<{ id: string; now: number }>(
  'revoke-key',
  () => `UPDATE api_keys SET revoked_at = @now WHERE id = @id AND revoked_at IS NULL`,
);

/*
 * syncEnvKeys, in one transaction: every active `env` key is revoked, then those still
 * configured are reactivated; a statement per configured key keeps the text fixed (no list).
 */
export const revokeEnvKeys = operation<{ now: number }>(
  'revoke-env-keys',
  () => `UPDATE api_keys SET revoked_at = @now WHERE name = 'env' AND revoked_at IS NULL`,
);

export const activateEnvKey = operation<{ hash: string }>(
  'activate-env-key',
  () => `UPDATE api_keys SET revoked_at = NULL WHERE name = 'env' AND hash = @hash`,
);
