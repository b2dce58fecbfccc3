/**
 * A webhook event is never lost to a crash (decisions 8.5): the real service, as a child process,
 * settles tasks while the receiver refuses connections, is SIGKILLed, and is started again; once
 * the receiver is up, every task's event arrives (at least once), with the webhook-id the delivery
 * log shows. And on PostgreSQL, `mediagate worker` processes deliver (the outbox shared with SKIP
 * LOCKED: each event once), while an API-only process runs no dispatcher.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from './helpers/eventually.js';
import { createTestDatabase, postgresAvailability, selectedBackends, type TestDatabase } from './helpers/postgres.js';
import { freePort, startProcess, startWorkerProcess, type ServiceProcess } from './helpers/process.js';
import { startServer, TEST_KEYS, type TestServer } from './helpers/server.js';
import { makeTestCa, startReceiver, type TestCa, type WebhookReceiver } from './helpers/webhook-receiver.js';

const KEY = 'mg_webhook_crash_key_0123456789';
const availability = await postgresAvailability();
const BACKENDS = [...(selectedBackends().includes('sqlite') ? ['sqlite' as const] : []), ...(availability.enabled ? ['postgres' as const] : [])];

type Body = Record<string, unknown>;

async function call(base: string, method: string, path: string, body?: unknown, key: string = KEY): Promise<Body> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (response.status !== 200) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as Body;
}

describe.each(BACKENDS)('webhook deliveries survive SIGKILL on %s', (backend) => {
  const started: ServiceProcess[] = [];
  let ca: TestCa | undefined;
  let receiver: WebhookReceiver | undefined;
  let database: TestDatabase | undefined;
  let dataDir = '';
  afterAll(async () => {
    for (const service of started) service.child.kill('SIGKILL');
    await receiver?.close();
    await database?.drop();
    await ca?.remove();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('delivers every event settled before the crash once the service is back and the receiver is up', async () => {
    ca = await makeTestCa();
    database = backend === 'postgres' ? await createTestDatabase() : undefined;
    dataDir = await mkdtemp(join(tmpdir(), 'mediagate-webhook-crash-'));
    const receiverPort = await freePort();
    const env = {
      PORT: String(await freePort()),
      MEDIAGATE_DATA_DIR: dataDir,
      MEDIAGATE_API_KEYS: KEY,
      MEDIAGATE_ENGINE: 'instant',
      MEDIAGATE_CONCURRENCY: '2',
      MEDIAGATE_FETCH_ALLOW_HOSTS: '127.0.0.1',
      MEDIAGATE_WEBHOOK_TIMEOUT_S: '2',
      // A retry every second for 50 s: the receiver is down for the crash and the restart.
      MEDIAGATE_WEBHOOK_RETRY_SCHEDULE_MS: Array.from({ length: 50 }, () => '1000').join(','),
      NODE_EXTRA_CA_CERTS: ca.caFile,
      ...(database ? { DATABASE_URL: database.url } : {}),
    };
    const first = await startProcess(['serve'], env);
    started.push(first);
    // Nothing listens on the receiver's port yet: every attempt is refused.
    const endpoint = await call(first.url, 'POST', '/v1/webhooks', { url: `https://127.0.0.1:${receiverPort}/crash` });
    const taskIds: string[] = [];
    for (let i = 0; i < 8; i += 1) {
      taskIds.push(
        String((await call(first.url, 'POST', '/v1/video/generations', { model: 'vendora/famw-2.7-t2v', prompt: `crash ${i}`, duration: 2 }))['id']),
      );
      const image = await call(first.url, 'POST', '/v1/images/generations/async', {
        model: 'vendora/famz-image-spicy',
        prompt: `crash ${i}`,
        width: 256,
        height: 256,
      });
      taskIds.push(String((image['data'] as Body)['task_id']));
    }
    await eventually(
      async () => {
        for (const id of taskIds) {
          const task = await call(first.url, 'GET', id.startsWith('vid_') ? `/v1/video/generations/${id}` : `/v1/images/generations/async/${id}`);
          const status = id.startsWith('vid_') ? task['status'] : (task['data'] as Body)['status'];
          if (status !== 'completed' && status !== 'SUCCESS') return false;
        }
        return true;
      },
      { deadline: 30_000, interval: 50, what: 'every task to complete' },
    );
    // Deliveries are pending (attempted, refused, due again) when the process dies.
    await eventually(
      async () => {
        const log = (await call(first.url, 'GET', `/v1/webhooks/${String(endpoint['id'])}/deliveries?limit=100`))['data'] as Body[];
        return log.some((delivery) => delivery['status'] === 'pending' && (delivery['attempts'] as number) >= 1);
      },
      { deadline: 20_000, interval: 50, what: 'a pending delivery with a refused attempt' },
    );
    first.child.kill('SIGKILL');
    await first.exited;

    const second = await startProcess(['serve'], env);
    started.push(second);
    receiver = await startReceiver(ca, receiverPort);
    const current = receiver;
    const delivered = await eventually(
      () => {
        const ids = new Set(
          current.received.map((item) => {
            const data = (JSON.parse(item.body) as { data: Body }).data;
            return String(data['id'] ?? (data['data'] as Body)['task_id']);
          }),
        );
        return taskIds.every((id) => ids.has(id)) && ids;
      },
      { deadline: 60_000, what: 'an event for every task', wake: { emitter: current.events } },
    );
    expect(delivered.size).toBe(taskIds.length);

    // Every delivery in the log reached the receiver under its webhook-id.
    const log = (await call(second.url, 'GET', `/v1/webhooks/${String(endpoint['id'])}/deliveries?limit=100`))['data'] as Body[];
    expect(log).toHaveLength(taskIds.length);
    const seenIds = new Set(current.received.map((item) => String(item.headers['webhook-id'])));
    for (const delivery of log) expect(seenIds.has(String(delivery['id']))).toBe(true);
  });
});

describe.skipIf(!availability.enabled)(`webhook deliveries by mediagate worker processes (PostgreSQL) ${availability.reason}`, () => {
  const workers: ServiceProcess[] = [];
  let ca: TestCa | undefined;
  let receiver: WebhookReceiver | undefined;
  let database: TestDatabase | undefined;
  let api: TestServer | undefined;
  afterAll(async () => {
    for (const worker of workers) worker.child.kill('SIGKILL');
    await api?.close();
    await receiver?.close();
    await database?.drop();
    await ca?.remove();
  });

  it('sends each event once from two workers sharing the outbox; the API process sends none', async () => {
    ca = await makeTestCa();
    receiver = await startReceiver(ca);
    database = await createTestDatabase();
    api = await startServer({ DATABASE_URL: database.url, MEDIAGATE_WORKERS: 'false', MEDIAGATE_FETCH_ALLOW_HOSTS: '127.0.0.1' });
    for (let i = 0; i < 2; i += 1) {
      workers.push(
        await startWorkerProcess({
          DATABASE_URL: database.url,
          MEDIAGATE_DATA_DIR: api.dataDir,
          MEDIAGATE_API_KEYS: TEST_KEYS.join(','),
          MEDIAGATE_ENGINE: 'instant',
          MEDIAGATE_CONCURRENCY: '2',
          MEDIAGATE_FETCH_ALLOW_HOSTS: '127.0.0.1',
          NODE_EXTRA_CA_CERTS: ca.caFile,
        }),
      );
    }
    expect(api.app.webhooks).toBeUndefined();
    const key = TEST_KEYS[0];
    await call(api.url, 'POST', '/v1/webhooks', { url: `${receiver.origin}/workers`, events: ['video.completed'] }, key);
    const ids: string[] = [];
    for (let i = 0; i < 12; i += 1) {
      ids.push(
        String((await call(api.url, 'POST', '/v1/video/generations', { model: 'vendora/famw-2.7-t2v', prompt: `worker ${i}`, duration: 2 }, key))['id']),
      );
    }
    const current = receiver;
    const received = await eventually(() => current.received.length >= ids.length && current.received, {
      deadline: 30_000,
      what: 'an event per task',
      wake: { emitter: current.events },
    });
    const taskIds = received.map((item) => String((JSON.parse(item.body) as { data: Body }).data['id']));
    expect(taskIds.sort()).toEqual([...ids].sort());
    expect(new Set(received.map((item) => String(item.headers['webhook-id']))).size).toBe(ids.length);
  });
});
