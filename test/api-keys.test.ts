import { readFile, readdir } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KeyRegistry } from '../src/auth/api-keys.js';
import { openSqliteStore } from '../src/store/sqlite.js';
import type { Store } from '../src/store/store.js';

describe('API keys', () => {
  let dir: string;
  let store: Store;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mediagate-keys-'));
    store = openSqliteStore({ path: join(dir, 'db.sqlite'), synchronous: 'NORMAL' });
    await store.migrate();
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  describe('configured keys', () => {
    it('accepts each configured key under a stable owner id, and nothing else', async () => {
      const registry = new KeyRegistry({ store, configured: ['alpha-key-123', 'bravo-key-456'] });
      expect(await registry.init()).toBeUndefined();
      const alpha = (await registry.resolve('alpha-key-123'))?.id;
      const bravo = (await registry.resolve('bravo-key-456'))?.id;
      expect(alpha).toMatch(/^key_[0-9a-f]{16}$/);
      expect(bravo).not.toBe(alpha);
      expect(await registry.resolve('charlie-key-789')).toBeUndefined();
      const again = new KeyRegistry({ store, configured: ['alpha-key-123'] });
      await again.init();
      expect((await again.resolve('alpha-key-123'))?.id).toBe(alpha);
    });

    it('stops accepting a key removed from the configuration, and accepts it again when restored', async () => {
      await new KeyRegistry({ store, configured: ['alpha-key-123', 'bravo-key-456'] }).init();
      const without = new KeyRegistry({ store, configured: ['alpha-key-123'] });
      await without.init();
      expect(await without.resolve('bravo-key-456')).toBeUndefined();
      const restored = new KeyRegistry({ store, configured: ['bravo-key-456'] });
      await restored.init();
      expect(await restored.resolve('bravo-key-456')).toBeDefined();
    });
  });

  describe('a generated first key', () => {
    it('is created once when none is configured, and works', async () => {
      const registry = new KeyRegistry({ store, configured: [] });
      const key = await registry.init();
      expect(key).toMatch(/^mg_[A-Za-z0-9]{36}$/);
      expect(await registry.resolve(key ?? '')).toBeDefined();
      expect(await new KeyRegistry({ store, configured: [] }).init()).toBeUndefined();
    });

    it('is never written to the database in clear', async () => {
      const key = (await new KeyRegistry({ store, configured: ['configured-key-abc'] }).init()) ?? 'configured-key-abc';
      await store.close();
      store = openSqliteStore({ path: join(dir, 'db.sqlite'), synchronous: 'NORMAL' });
      for (const file of await readdir(dir)) {
        expect((await readFile(join(dir, file))).includes(Buffer.from(key))).toBe(false);
      }
    });
  });

  describe('the key cache', () => {
    it('answers from the cache until forgetAll(), then asks the store again', async () => {
      const registry = new KeyRegistry({ store, configured: [] });
      const id = await registry.create('mg_cached_key_0123456789', 'cached');
      expect(await registry.resolve('mg_cached_key_0123456789')).toBeDefined();
      expect(await store.updateKey(id, { disabled: true }, Date.now())).toBe(true);
      expect(registry.resolveCached('mg_cached_key_0123456789'), 'still cached').toBeDefined();
      registry.forgetAll();
      expect(registry.resolveCached('mg_cached_key_0123456789')).toBeUndefined();
      expect(await registry.resolve('mg_cached_key_0123456789')).toBeUndefined();
    });

    it('does not keep a lookup that a forgetAll() overtook: it may predate the change', async () => {
      const registry = new KeyRegistry({ store, configured: [] });
      await registry.create('mg_racing_key_0123456789', 'racing');
      const lookup = registry.resolve('mg_racing_key_0123456789');
      registry.forgetAll();
      expect(await lookup, 'answered').toBeDefined();
      expect(registry.resolveCached('mg_racing_key_0123456789'), 'not kept').toBeUndefined();
    });
  });
});
