/**
 * The URL signing secret rotates (`mediagate secrets rotate [--grace <s>]`).
 * The store's compare-and-set keeps the secret that was current as the previous one, even under
 * concurrent rotations; a running server picks a rotation up at its next refresh
 * (MEDIAGATE_SIGNING_REFRESH_S) without a restart; an old URL verifies during the grace and
 * is 403 invalid_signature after it; the CLI never prints a secret.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UrlSigner, readSigningState, rotateSigningSecret, type SigningMeta } from '../src/storage/signing.js';
import type { Store } from '../src/store/store.js';
import { eventually } from './helpers/eventually.js';
import { createTestDatabase, postgresAvailability, selectedBackends, type TestDatabase } from './helpers/postgres.js';
import { startServer, type TestServer } from './helpers/server.js';
import { STORE_BACKENDS, type OpenedStore } from './helpers/stores.js';
import { CLI } from './helpers/process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface Ran {
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number;
}

/** `mediagate <args>` as built (dist/), with exactly `env` on top of PATH and HOME. */
async function mediagate(args: readonly string[], env: Record<string, string>): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: ROOT, env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env }, timeout: 30_000 },
      (error, stdout, stderr) => resolve({ stdout, stderr, code: error ? (typeof error.code === 'number' ? error.code : 1) : 0 }),
    );
  });
}

/** The meta rows a store holds for the signing secret (what must never reach a terminal). */
async function storedSecrets(store: Store): Promise<string[]> {
  const state = await readSigningState(store);
  return state ? [state.current, ...(state.previous ? [state.previous.secret] : [])] : [];
}

describe('UrlSigner with a previous secret', () => {
  it('verifies the current secret always and the previous one only until its grace ends', () => {
    const old = new UrlSigner({ current: 'old-secret' });
    const exp = 2_000_000_000;
    const oldSig = old.sign('files/a/b.mp4', exp);
    const signer = new UrlSigner({ current: 'new-secret', previous: { secret: 'old-secret', untilMs: 1_000_000 } });
    const newSig = signer.sign('files/a/b.mp4', exp);
    expect(newSig).not.toBe(oldSig);
    expect(signer.check('files/a/b.mp4', String(exp), oldSig, 999)).toBe('valid');
    expect(signer.check('files/a/b.mp4', String(exp), oldSig, 1000)).toBe('invalid');
    expect(signer.check('files/a/b.mp4', String(exp), newSig, 1000)).toBe('valid');
    // Without a previous secret, the old one is a forgery.
    signer.use({ current: 'new-secret' });
    expect(signer.check('files/a/b.mp4', String(exp), oldSig, 0)).toBe('invalid');
  });
});

for (const fixture of STORE_BACKENDS) {
  describe(`signing secret rotation in the store (${fixture.name})`, () => {
    let opened: OpenedStore;
    beforeAll(async () => {
      opened = await fixture.open();
    });
    afterAll(async () => opened.cleanup());

    it('swapMeta replaces only the expected value and writes `also` in the same step; a stale swap writes nothing', async () => {
      const { store } = opened;
      await store.initMeta('swap_test', 'a');
      expect(await store.swapMeta('swap_test', 'a', 'b', [{ key: 'swap_test_also', value: '1' }])).toBe(true);
      expect(await store.swapMeta('swap_test', 'a', 'c', [{ key: 'swap_test_also', value: '2' }])).toBe(false);
      expect(await store.listMeta('swap_test%')).toEqual([
        { key: 'swap_test', value: 'b' },
        { key: 'swap_test_also', value: '1' },
      ]);
      // `also` replaces an existing row (the previous secret of an earlier rotation).
      expect(await store.swapMeta('swap_test', 'b', 'c', [{ key: 'swap_test_also', value: '3' }])).toBe(true);
      expect(await store.getMeta('swap_test_also')).toBe('3');
    });

    it('concurrent rotations lose no secret: each one replaces the one before, and the last replaced stays the previous', async () => {
      const { store } = opened;
      const first = (await rotateSigningSecret(store, 0), await readSigningState(store));
      const swaps: { expected: string; value: string }[] = [];
      const recording: SigningMeta = {
        listMeta: (pattern) => store.listMeta(pattern),
        initMeta: (key, value) => store.initMeta(key, value),
        async swapMeta(key, expected, value, also) {
          const done = await store.swapMeta(key, expected, value, also);
          if (done) swaps.push({ expected, value });
          return done;
        },
      };
      const rotations = await Promise.all(Array.from({ length: 6 }, () => rotateSigningSecret(recording, 60_000)));
      expect(rotations).toHaveLength(6);
      expect(swaps).toHaveLength(6);
      // One chain: every swap replaced exactly what the one before it wrote.
      let current = first?.current;
      for (const swap of swaps) {
        expect(swap.expected).toBe(current);
        current = swap.value;
      }
      const state = await readSigningState(store);
      expect(state?.current).toBe(current);
      expect(state?.previous?.secret).toBe(swaps.at(-1)?.expected);
      expect(state?.previous?.untilMs).toBeGreaterThan(Date.now());
    });
  });
}

/** Each store the server runs on: SQLite in its data directory, PostgreSQL at DATABASE_URL. */
const SERVER_BACKENDS = [
  ...(selectedBackends().includes('sqlite') ? ['sqlite' as const] : []),
  ...((await postgresAvailability()).enabled ? ['postgres' as const] : []),
];

for (const backend of SERVER_BACKENDS) {
  describe(`a running server across rotations (${backend})`, () => {
    let server: TestServer;
    let database: TestDatabase | undefined;
    let cliEnv: Record<string, string>;
    const auth = (): Record<string, string> => ({ authorization: `Bearer ${server.keys[0]}` });

    beforeAll(async () => {
      database = backend === 'postgres' ? await createTestDatabase() : undefined;
      const env = { MEDIAGATE_ENGINE: 'instant', MEDIAGATE_SIGNING_REFRESH_S: '1', ...(database ? { DATABASE_URL: database.url } : {}) };
      server = await startServer(env);
      cliEnv = { MEDIAGATE_DATA_DIR: server.dataDir, LOG_LEVEL: 'silent', ...(database ? { DATABASE_URL: database.url } : {}) };
    });
    afterAll(async () => {
      await server.close();
      await database?.drop();
    });

    /** A completed task's id and its output URL as a status poll gives it now. */
    async function completedTask(): Promise<{ id: string; url: string }> {
      const created = await fetch(`${server.url}/v1/video/generations`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt: 'rotation', duration: 2 }),
      });
      const id = String(((await created.json()) as Record<string, unknown>)['id']);
      const url = await eventually(async () => (await outputUrl(id)) || undefined, { deadline: 10_000, interval: 20, what: 'an output URL' });
      return { id, url };
    }

    async function outputUrl(id: string): Promise<string> {
      const task = (await (await fetch(`${server.url}/v1/video/generations/${id}`, { headers: auth() })).json()) as { outputs?: { url: string }[] };
      return task.outputs?.[0]?.url ?? '';
    }

    async function status(url: string): Promise<{ status: number; code?: string }> {
      const response = await fetch(url);
      if (response.status === 200) {
        await response.arrayBuffer();
        return { status: 200 };
      }
      const body = (await response.json()) as { error?: { code?: string } };
      return { status: response.status, ...(body.error?.code === undefined ? {} : { code: body.error.code }) };
    }

    /** The URL a status poll gives once it differs from `before` (the server's refresh signed anew). */
    async function resigned(id: string, before: string): Promise<string> {
      return eventually(
        async () => {
          const url = await outputUrl(id);
          return url !== before && url;
        },
        { deadline: 10_000, interval: 50, what: 'the status poll to sign with the new secret' },
      );
    }

    it('with a grace: after the refresh the new URL works and the old one still does; a second rotation ends that grace', async () => {
      const { id, url: oldUrl } = await completedTask();
      expect(await status(oldUrl)).toEqual({ status: 200 });

      await rotateSigningSecret(server.app.store, 60_000);
      // The server signs with the new secret at its next refresh, without a restart.
      const newUrl = await resigned(id, oldUrl);
      expect(new URL(newUrl).searchParams.get('exp')).toBe(new URL(oldUrl).searchParams.get('exp'));
      expect(await status(newUrl)).toEqual({ status: 200 });
      expect(await status(oldUrl)).toEqual({ status: 200 });

      // Only one previous secret is kept: the oldest URL is refused, the one before is in its grace.
      await rotateSigningSecret(server.app.store, 60_000);
      const newest = await resigned(id, newUrl);
      expect(await status(oldUrl)).toEqual({ status: 403, code: 'invalid_signature' });
      expect(await status(newUrl)).toEqual({ status: 200 });
      expect(await status(newest)).toEqual({ status: 200 });
    });

    it('with a short grace: the old URL is 403 invalid_signature once the grace has ended, not before', async () => {
      const { id, url: oldUrl } = await completedTask();
      const rotation = await rotateSigningSecret(server.app.store, 2_000);
      const newUrl = await resigned(id, oldUrl);
      const refused = await eventually(
        async () => {
          const answer = await status(oldUrl);
          return answer.status !== 200 && { answer, at: Date.now() };
        },
        { deadline: 15_000, interval: 100, what: 'the old URL to be refused after the grace' },
      );
      expect(refused.at).toBeGreaterThanOrEqual(rotation.previousUntilMs);
      expect(refused.answer).toEqual({ status: 403, code: 'invalid_signature' });
      expect(await status(newUrl)).toEqual({ status: 200 });
    });

    it('`mediagate secrets rotate` without a grace: the old URL is 403 at the next refresh; no secret is printed', async () => {
      const { id, url: oldUrl } = await completedTask();
      expect(await status(oldUrl)).toEqual({ status: 200 });
      const before = await storedSecrets(server.app.store);

      const ran = await mediagate(['secrets', 'rotate'], cliEnv);
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.stderr).toBe(backend === 'postgres' ? 'store: PostgreSQL at DATABASE_URL\n' : `store: SQLite ${join(server.dataDir, 'mediagate.db')}\n`);
      expect(ran.stdout).toMatch(/^Rotated the URL signing secret at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\. .*stop working now\./);

      const refused = await eventually(
        async () => {
          const answer = await status(oldUrl);
          return answer.status !== 200 && answer;
        },
        { deadline: 10_000, interval: 50, what: 'the old URL to be refused' },
      );
      expect(refused).toEqual({ status: 403, code: 'invalid_signature' });
      const newUrl = await outputUrl(id);
      expect(newUrl).not.toBe(oldUrl);
      expect(await status(newUrl)).toEqual({ status: 200 });

      const after = await storedSecrets(server.app.store);
      const shown = await mediagate(['secrets', 'status'], cliEnv);
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toMatch(/^current secret: created \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\nprevious secret: none accepted\n$/);
      for (const secret of [...before, ...after]) {
        expect(ran.stdout + ran.stderr + shown.stdout + shown.stderr).not.toContain(secret);
      }
    });

    it('`secrets status` names when the previous secret stops being accepted; a bad --grace is refused', async () => {
      const ran = await mediagate(['secrets', 'rotate', '--grace', '3600'], cliEnv);
      expect(ran.code, ran.stderr).toBe(0);
      const until = /keep working until (\S+Z) \(3600 s\)/.exec(ran.stdout)?.[1];
      expect(until).toBeDefined();
      const shown = await mediagate(['secrets', 'status', '--json'], cliEnv);
      expect(JSON.parse(shown.stdout)).toEqual({ exists: true, createdAt: expect.stringMatching(/Z$/), previousUntil: until });

      const bad = await mediagate(['secrets', 'rotate', '--grace', 'soon'], cliEnv);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/--grace must be whole seconds/);
    });
  });
}
