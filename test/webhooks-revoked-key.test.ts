/**
 * A disabled or revoked key's webhooks stop: its pending deliveries, retries included, end as
 * `failed` with a `key_revoked` error in the transaction that disables or revokes it, nothing
 * more is sent, and enabling the key again makes them due again (same webhook-id). A key
 * disabled behind the store's back (another process, the raw database) is caught by the check
 * before each attempt: its delivery is ended there, never sent. On both stores.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInstantEngine } from '../src/engines/instant.js';
import { eventually } from './helpers/eventually.js';
import { envKeyId, postgresDatabase, sqliteDatabase, type RawDatabase } from './helpers/ledger.js';
import { createTestDatabase, postgresAvailability, selectedBackends, type TestDatabase } from './helpers/postgres.js';
import { startServer, TEST_KEYS, type TestServer } from './helpers/server.js';
import { makeTestCa, startReceiver, type TestCa, type WebhookReceiver } from './helpers/webhook-receiver.js';

const BACKENDS = [
  ...(selectedBackends().includes('sqlite') ? ['sqlite' as const] : []),
  ...((await postgresAvailability()).enabled ? ['postgres' as const] : []),
];

const SCHEDULE = [200, 300, 400, 500, 600, 700];
const VIDEO = { model: 'vendora/famw-2.7-t2v', duration: 2, resolution: '480p', prompt: 'a lighthouse' };
const KEY = TEST_KEYS[1];
const OTHER = TEST_KEYS[0];

type Body = Record<string, unknown>;

describe.each(BACKENDS)('webhooks of a disabled or revoked key on %s', (backend) => {
  let ca: TestCa;
  let receiver: WebhookReceiver;
  let server: TestServer;
  let database: TestDatabase | undefined;
  let raw: RawDatabase;

  beforeAll(async () => {
    ca = await makeTestCa();
    receiver = await startReceiver(ca);
    database = backend === 'postgres' ? await createTestDatabase() : undefined;
    server = await startServer(
      {
        MEDIAGATE_FETCH_ALLOW_HOSTS: '127.0.0.1',
        MEDIAGATE_WEBHOOK_RETRY_SCHEDULE_MS: SCHEDULE.join(','),
        MEDIAGATE_WEBHOOK_TIMEOUT_S: '1',
        ...(database ? { DATABASE_URL: database.url } : {}),
      },
      { engine: createInstantEngine({ delayMs: 0 }), webhookTls: { ca: ca.ca }, webhookPollIntervalMs: 50 },
    );
    raw = database ? postgresDatabase(database.url) : sqliteDatabase(join(server.dataDir, 'mediagate.db'));
  });
  afterAll(async () => {
    await raw.close();
    await server.close();
    await receiver.close();
    await database?.drop();
    await ca.remove();
  });

  const at = (path: string) => receiver.received.filter((item) => item.path === path);
  const waitFor = (path: string, count: number, what: string) =>
    eventually(() => at(path).length >= count && at(path), { deadline: 20_000, what, wake: { emitter: receiver.events } });

  async function call(key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Body }> {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Body };
  }

  async function register(key: string, path: string): Promise<string> {
    const created = await call(key, 'POST', '/v1/webhooks', { url: `${receiver.origin}${path}`, events: ['video.completed'] });
    expect(created.status).toBe(200);
    return String(created.body['id']);
  }

  const log = async (endpoint: string) => (await server.app.store.listWebhookDeliveries(endpoint, undefined, 10)).map((item) => item.delivery);

  /** Proof that the dispatcher kept working past every retry the held delivery would have had: another key's delivery, sent later. */
  async function dispatcherMovedOn(path: string): Promise<void> {
    const before = at(path).length;
    const endpoint = await register(OTHER, path);
    // Past the whole schedule of the held delivery, measured by the receiver's clock.
    const until = Date.now() + SCHEDULE.reduce((a, b) => a + b, 0);
    for (let n = 0; at(path).at(-1)?.at === undefined || (at(path).at(-1)?.at ?? 0) < until; n += 1) {
      await call(OTHER, 'POST', '/v1/video/generations', VIDEO);
      await waitFor(path, before + n + 1, "another key's delivery");
    }
    await call(OTHER, 'DELETE', `/v1/webhooks/${endpoint}`);
  }

  it('disabling ends the pending deliveries at once (key_revoked); enabling makes them due again', async () => {
    let healthy = false;
    receiver.answer = (path) => (path === '/held' && !healthy ? 'fail' : 'ok');
    const endpoint = await register(KEY, '/held');
    await call(KEY, 'POST', '/v1/video/generations', VIDEO);
    await waitFor('/held', 1, 'the first attempt');
    expect(await server.app.store.updateKey(envKeyId(KEY), { disabled: true }, Date.now())).toBe(true);
    const sent = at('/held').length;

    const [ended] = await log(endpoint);
    expect(ended).toMatchObject({ status: 'failed', nextAttemptAt: null });
    expect(ended?.lastError).toMatch(/^key_revoked: /);
    await dispatcherMovedOn('/other-1');
    // At most the attempt that was on the wire when the key was disabled.
    expect(at('/held').length).toBeLessThanOrEqual(sent + 1);

    healthy = true;
    expect(await server.app.store.updateKey(envKeyId(KEY), { disabled: false }, Date.now())).toBe(true);
    const resumed = await waitFor('/held', at('/held').length + 1, 'the delivery to resume');
    expect(resumed.at(-1)?.headers['webhook-id']).toBe(ended?.id);
    await eventually(async () => (await log(endpoint))[0]?.status === 'succeeded', { deadline: 10_000, what: 'the resumed delivery to succeed' });
    await call(KEY, 'DELETE', `/v1/webhooks/${endpoint}`);
  });

  it('a key disabled behind the store (another process) is checked before each attempt: its retry is ended, not sent', async () => {
    receiver.answer = (path) => (path === '/raced' ? 'fail' : 'ok');
    const endpoint = await register(KEY, '/raced');
    await call(KEY, 'POST', '/v1/video/generations', VIDEO);
    await waitFor('/raced', 1, 'the first attempt');
    // As another process would: the key's row alone, the outbox left as it is.
    await raw.query(`UPDATE api_keys SET disabled = ${backend === 'postgres' ? 'true' : '1'} WHERE id = $1`, [envKeyId(KEY)]);
    const sent = at('/raced').length;
    const [ended] = await eventually(
      async () => {
        const found = await log(endpoint);
        return found[0]?.status === 'failed' && found;
      },
      { deadline: 20_000, what: 'the retry to be ended' },
    );
    expect(ended?.lastError).toMatch(/^key_revoked: /);
    expect(at('/raced').length).toBeLessThanOrEqual(sent + 1);
    await dispatcherMovedOn('/other-2');
    expect(at('/raced').length).toBeLessThanOrEqual(sent + 1);
    await raw.query(`UPDATE api_keys SET disabled = ${backend === 'postgres' ? 'false' : '0'} WHERE id = $1`, [envKeyId(KEY)]);
  });

  it('revoking ends them for good', async () => {
    receiver.answer = (path) => (path === '/revoked' ? 'fail' : 'ok');
    const endpoint = await register(KEY, '/revoked');
    await call(KEY, 'POST', '/v1/video/generations', VIDEO);
    await waitFor('/revoked', 1, 'the first attempt');
    expect(await server.app.store.revokeKey(envKeyId(KEY), Date.now())).toBe(true);
    const sent = at('/revoked').length;
    const [ended] = await log(endpoint);
    expect(ended).toMatchObject({ status: 'failed', nextAttemptAt: null });
    expect(ended?.lastError).toMatch(/^key_revoked: /);
    await dispatcherMovedOn('/other-3');
    expect(at('/revoked').length).toBeLessThanOrEqual(sent + 1);
  });
});
