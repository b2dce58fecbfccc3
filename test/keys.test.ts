/**
 * Managed API keys: the key format (prefix, random body, checksum), refusal of malformed keys
 * before any database work, the `mediagate keys` commands, and a scan of the database files
 * for any key in clear.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_SHAPE, KeyRegistry, generateKey, hasValidChecksum, hashKey } from '../src/auth/api-keys.js';
import { openSqliteStore } from '../src/store/sqlite.js';
import type { Store } from '../src/store/store.js';
import { startServer } from './helpers/server.js';
import { CLI } from './helpers/process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);

async function cli(dataDir: string, args: readonly string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, 'keys', ...args], {
      cwd: ROOT,
      env: { ...process.env, MEDIAGATE_DATA_DIR: dataDir, MEDIAGATE_API_KEYS: '' },
    });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout: string; stderr: string; code: number };
    return { stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
  }
}

/** Flips one character of the random body, keeping the shape. */
function typo(key: string): string {
  const at = 10;
  const swapped = key[at] === 'a' ? 'b' : 'a';
  return key.slice(0, at) + swapped + key.slice(at + 1);
}

describe('key format', () => {
  it('is mg_ + 30 random base62 characters + a 6-character checksum', () => {
    const keys = new Set(Array.from({ length: 2000 }, generateKey));
    expect(keys.size).toBe(2000);
    for (const key of keys) {
      expect(key).toMatch(KEY_SHAPE);
      expect(hasValidChecksum(key)).toBe(true);
    }
  });

  it('a one-character typo fails the checksum', () => {
    for (let i = 0; i < 200; i += 1) expect(hasValidChecksum(typo(generateKey()))).toBe(false);
  });
});

describe('refusal before any database work', () => {
  let dir: string;
  let store: Store;
  let lookups = 0;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mediagate-keys-'));
    store = openSqliteStore({ path: join(dir, 'db.sqlite'), synchronous: 'NORMAL' });
    await store.migrate();
    const find = store.findKeyByHash.bind(store);
    store.findKeyByHash = async (hash) => {
      lookups += 1;
      return find(hash);
    };
  });
  afterAll(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ['a bad checksum', () => typo(generateKey())],
    ['a key too short', () => 'short'],
    ['a key too long', () => `mg_${'x'.repeat(300)}`],
    ['a key with non-ASCII characters', () => 'mg_schlüssel_0123456789'],
  ])('refuses %s without a lookup', async (_what, make) => {
    const registry = new KeyRegistry({ store, configured: [] });
    const before = lookups;
    expect(await registry.resolve(make())).toBeUndefined();
    expect(lookups).toBe(before);
    expect(registry.refusedUnseen).toBe(1);
  });

  it('keys of any other format go through the hash lookup and work when configured', async () => {
    const configured = ['mg_test_key_alpha_0123456789', 'sk-live-ABCdef_0123456789', 'plain-password-ish', `mg_${'A'.repeat(36)}`];
    const registry = new KeyRegistry({ store, configured });
    await registry.init();
    // The last one has our shape and a wrong checksum, but an operator configured it.
    for (const key of configured) expect((await registry.resolve(key))?.id, key).toMatch(/^key_/);
    const before = lookups;
    expect(await registry.resolve('not-a-configured-key')).toBeUndefined();
    expect(lookups).toBe(before + 1);
  });

  it('a created key with a valid checksum resolves', async () => {
    const registry = new KeyRegistry({ store, configured: [] });
    const key = generateKey();
    const id = await registry.create(key, 'test');
    expect((await registry.resolve(key))?.id).toBe(id);
  });
});

describe('mediagate keys', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mediagate-keys-cli-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('create, list, revoke; the database never holds a key in clear', async () => {
    const created = await cli(dataDir, ['create', '--name', 'ci robot', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const { id, key, name } = JSON.parse(created.stdout) as { id: string; key: string; name: string };
    expect(name).toBe('ci robot');
    expect(key).toMatch(KEY_SHAPE);
    expect(hasValidChecksum(key)).toBe(true);

    const human = await cli(dataDir, ['create']);
    expect(human.code).toBe(0);
    const secondKey = /\n {2}(mg_\S+)\n/.exec(human.stdout)?.[1] ?? '';
    expect(secondKey).toMatch(KEY_SHAPE);

    const listed = await cli(dataDir, ['list', '--json']);
    expect(listed.code).toBe(0);
    const rows = JSON.parse(listed.stdout) as { id: string; name: string; revokedAt: number | null }[];
    expect(rows.map((row) => row.id)).toContain(id);
    expect(listed.stdout).not.toContain(key);
    expect(listed.stdout).not.toContain(secondKey);

    // The server opens the same store and accepts the key (configured keys of other formats too).
    const configured = ['configured-key-of-any-format-1', 'mg_configured_key_2_0123456789'];
    const server = await startServer({ MEDIAGATE_DATA_DIR: dataDir, MEDIAGATE_API_KEYS: configured.join(',') });
    try {
      for (const presented of [key, secondKey, ...configured]) {
        const res = await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${presented}` } });
        expect(res.status, presented).toBe(200);
      }
      const forged = await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${typo(key)}` } });
      expect(forged.status).toBe(401);
    } finally {
      await server.app.close(500);
    }

    const revoked = await cli(dataDir, ['revoke', id]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect((await cli(dataDir, ['revoke', id])).code).toBe(1);
    expect((await cli(dataDir, ['revoke', 'key_nope'])).code).toBe(1);
    const after = JSON.parse((await cli(dataDir, ['list', '--json'])).stdout) as { id: string; revokedAt: number | null }[];
    expect(after.find((row) => row.id === id)?.revokedAt).toEqual(expect.any(Number));

    const again = await startServer({ MEDIAGATE_DATA_DIR: dataDir, MEDIAGATE_API_KEYS: configured.join(',') });
    try {
      const res = await fetch(`${again.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status, 'a revoked key').toBe(401);
      const other = await fetch(`${again.url}/v1/models`, { headers: { authorization: `Bearer ${secondKey}` } });
      expect(other.status).toBe(200);
    } finally {
      await again.app.close(500);
    }

    // Scan every file of the database (main, WAL, shared memory) for any key in clear.
    const files = (await readdir(dataDir)).filter((file) => file.startsWith('mediagate.db'));
    expect(files).toContain('mediagate.db');
    const bytes = Buffer.concat(await Promise.all(files.map((file) => readFile(join(dataDir, file)))));
    for (const secret of [key, secondKey, ...configured]) {
      expect(bytes.includes(secret), `${secret.slice(0, 6)}... found in clear`).toBe(false);
      expect(bytes.includes(secret.slice(3, 25)), 'no long fragment of a key either').toBe(false);
    }
    expect(bytes.includes(hashKey(key)), 'the hash is what is stored').toBe(true);
  }, 60_000);
});
