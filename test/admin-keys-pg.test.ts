import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './helpers/eventually.js';
import { createTestDatabase, postgresAvailability, type TestDatabase } from './helpers/postgres.js';
import { CLI, freePort, startProcess, type ServiceProcess } from './helpers/process.js';
import { startServer, TEST_KEYS, type TestServer } from './helpers/server.js';

/**
 * A change made through the admin API on one process, or by the CLI, reaches every process
 * sharing the PostgreSQL database: a raised budget at the next create, a disabled or revoked
 * key at once (migration 14's notification), though each holds it in its key cache. Process A
 * runs in this test process; B is a `mediagate serve` child.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);
const ADMIN = 'mg_test_admin_key_0123456789';
const T2V = 'vendora/famw-2.7-t2v';
const PRICING = { currency: 'USD', models: { [T2V]: { per_task: 0.4 } } };
const postgres = await postgresAvailability();

describe.skipIf(!postgres.enabled)('key administration across two API processes on PostgreSQL', () => {
  let database: TestDatabase;
  let dataDir: string;
  let a: TestServer;
  let b: ServiceProcess;
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = await mkdtemp(join(tmpdir(), 'mediagate-admin-pg-'));
    await writeFile(join(dataDir, 'pricing.json'), JSON.stringify(PRICING));
    env = {
      DATABASE_URL: database.url,
      MEDIAGATE_DATA_DIR: dataDir,
      MEDIAGATE_API_KEYS: TEST_KEYS.join(','),
      MEDIAGATE_ADMIN_KEYS: ADMIN,
      MEDIAGATE_PRICING_FILE: join(dataDir, 'pricing.json'),
      MEDIAGATE_WORKERS: 'false',
    };
    a = await startServer(env);
    b = await startProcess(['serve', '--no-workers'], { ...env, PORT: String(await freePort()), HOST: '127.0.0.1' });
  }, 90_000);
  afterAll(async () => {
    b?.child.kill('SIGTERM');
    await b?.exited;
    await a?.close();
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const call = async (base: string, key: string, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const createOn = (base: string, key: string) => call(base, key, 'POST', '/v1/video/generations', { model: T2V, prompt: 'two processes' });

  it('a budget raised on A takes effect on the next create on B', async () => {
    const made = await call(a.url, ADMIN, 'POST', '/v1/admin/keys', { name: 'shared', budget: 0.4 });
    expect(made.status).toBe(201);
    const key = String(made.body['key']);
    const id = String(made.body['id']);
    expect((await createOn(b.url, key)).status).toBe(200);
    expect((await createOn(b.url, key)).status).toBe(402);
    expect((await call(a.url, ADMIN, 'PATCH', `/v1/admin/keys/${id}`, { budget: 0.8 })).status).toBe(200);
    expect((await createOn(b.url, key)).status, 'the next create on B').toBe(200);
    expect((await createOn(a.url, key)).status).toBe(402);
    expect((await call(b.url, ADMIN, 'GET', `/v1/admin/keys/${id}`)).body).toMatchObject({ budget: 0.8, reserved: 0.8 });
  });

  it("a create's budget reservation notifies nobody; a change of a key's settings notifies once", async () => {
    const listener = new pg.Client({ connectionString: database.url });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (message) => heard.push(message.channel));
    try {
      await listener.query('LISTEN mediagate_key');
      const made = await call(a.url, ADMIN, 'POST', '/v1/admin/keys', { name: 'busy', budget: 100 });
      const key = String(made.body['key']);
      for (let i = 0; i < 3; i += 1) expect((await createOn(b.url, key)).status).toBe(200);
      expect((await call(a.url, ADMIN, 'GET', `/v1/admin/keys/${String(made.body['id'])}`)).body).toMatchObject({ reserved: 1.2 });
      expect((await call(a.url, ADMIN, 'PATCH', `/v1/admin/keys/${String(made.body['id'])}`, { rate_limit_per_min: 600 })).status).toBe(200);
      // Notifications arrive in commit order: the PATCH's comes after any the creates had sent.
      await eventually(() => heard.length > 0, { what: "the PATCH's notification" });
      expect(heard).toEqual(['mediagate_key']);
    } finally {
      await listener.end();
    }
  });

  // Well under the key cache's 5 s: B answers from its cache until the notification drops it.
  const AT_ONCE = { deadline: 2_500 };

  it('a key disabled on A is refused by B at once (a notification), and a key revoked by the CLI on both', async () => {
    const made = await call(a.url, ADMIN, 'POST', '/v1/admin/keys', { name: 'to stop' });
    const key = String(made.body['key']);
    const id = String(made.body['id']);
    // B has the key in its cache when it is disabled.
    expect((await call(b.url, key, 'GET', '/v1/models')).status).toBe(200);
    expect((await call(a.url, ADMIN, 'PATCH', `/v1/admin/keys/${id}`, { disabled: true })).status).toBe(200);
    await eventually(async () => (await call(b.url, key, 'GET', '/v1/models')).status === 401, { ...AT_ONCE, what: 'B to refuse the disabled key' });

    expect((await call(b.url, ADMIN, 'PATCH', `/v1/admin/keys/${id}`, { disabled: false })).status).toBe(200);
    await eventually(async () => (await call(a.url, key, 'GET', '/v1/models')).status === 200, { ...AT_ONCE, what: 'A to accept the enabled key' });
    expect((await call(b.url, key, 'GET', '/v1/models')).status).toBe(200);
    // Both processes hold the key in their caches when the CLI, a third process, revokes it.
    const revoked = await run(process.execPath, [CLI, 'keys', 'revoke', id], {
      cwd: ROOT,
      env: { ...process.env, ...env },
    });
    expect(revoked.stdout).toContain(`Revoked ${id}`);
    for (const [name, server] of [
      ['A', a.url],
      ['B', b.url],
    ] as const) {
      await eventually(async () => (await call(server, key, 'GET', '/v1/models')).status === 401, { ...AT_ONCE, what: `${name} to refuse the revoked key` });
    }
  }, 30_000);
});
