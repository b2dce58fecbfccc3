import { operation } from '../dialect.js';

export const getMeta = operation<{ key: string }, { value: string }>('get-meta', () => `SELECT value FROM meta WHERE key = @key`);

/** Sets a value only if none is set (the caller reads the stored one back). */
export const initMeta = operation<{ key: string; value: string }>(
  'init-meta',
  () => `INSERT INTO meta (key, value) VALUES (@key, @value) ON CONFLICT (key) DO NOTHING`,
);
