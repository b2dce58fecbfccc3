import { operation } from '../dialect.js';

export const getMeta = operation<{ key: string }, { value: string }>('get-meta', () => `SELECT value FROM meta WHERE key = @key`);

/** Rows whose key matches a LIKE pattern, in one statement: related settings read as one snapshot. */
export const listMeta = operation<{ pattern: string }, { key: string; value: string }>(
  'list-meta',
  () => `SELECT key, value FROM meta WHERE key LIKE @pattern ORDER BY key`,
);

/** Sets a value only if none is set (the caller reads the stored one back). */
export const initMeta = operation<{ key: string; value: string }>(
  'init-meta',
  () => `INSERT INTO meta (key, value) VALUES (@key, @value) ON CONFLICT (key) DO NOTHING`,
);

/** Sets a value, replacing any. */
export const setMeta = operation<{ key: string; value: string }>(
  'set-meta',
  () => `INSERT INTO meta (key, value) VALUES (@key, @value) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
);

/**
 * Compare-and-set: replaces the value only if it is still `expected` (0 rows: someone else
 * changed it first). On PostgreSQL the updated row stays locked until the transaction ends, so
 * what the caller writes after it in the same transaction is ordered with other swaps.
 */
export const swapMeta = operation<{ key: string; expected: string; value: string }>(
  'swap-meta',
  () => `UPDATE meta SET value = @value WHERE key = @key AND value = @expected`,
);
