/**
 * Webhook deliveries through the real server to a local HTTPS receiver with its own CA
 * (decisions 8.5): the six events with `data` equal to a status poll, signatures that the SDK and
 * an independent HMAC check accept, retries on the (shortened) schedule with one webhook-id
 * (500, no answer, a redirect that is not followed, then 2xx), the delivery log of every attempt,
 * failure after the last attempt and a manual redelivery, and the address policy on every
 * connection (a name that resolves to loopback at delivery gets nothing sent), and fairness:
 * one key's endpoints that never answer hold only its share of attempts.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Mediagate } from '../src/client/index.js';
import { verifyWebhook } from '../src/client/webhook-signature.js';
import { createInstantEngine } from '../src/engines/instant.js';
import { EngineError, type Engine } from '../src/engines/types.js';
import { eventually } from './helpers/eventually.js';
import { createTestDatabase, postgresAvailability, selectedBackends, type TestDatabase } from './helpers/postgres.js';
import { startServer, TEST_KEYS, type TestServer } from './helpers/server.js';
import { makeTestCa, startReceiver, type ReceivedWebhook, type TestCa, type WebhookReceiver } from './helpers/webhook-receiver.js';

const BACKENDS = [
  ...(selectedBackends().includes('sqlite') ? ['sqlite' as const] : []),
  ...((await postgresAvailability()).enabled ? ['postgres' as const] : []),
];

const SCHEDULE = [200, 300, 400];
const VIDEO = { model: 'vendora/famw-2.7-t2v', duration: 2, resolution: '480p' };
const IMAGE = { model: 'vendora/famz-image-spicy', width: 256, height: 256 };

type Body = Record<string, unknown>;

/** Instant renders; `fail` fails with invalid_input; `hold` runs until cancelled. */
function testEngine(): Engine {
  const instant = createInstantEngine({ delayMs: 0 });
  return {
    name: 'webhook-test',
    async render(job) {
      const prompt = job.params['prompt'];
      if (prompt === 'fail') throw new EngineError('invalid_input', 'prompt', 'asked to fail');
      if (prompt === 'hold') {
        await new Promise<void>((_, reject) => job.signal.addEventListener('abort', () => reject(new Error('cancelled')), { once: true }));
      }
      return instant.render(job);
    },
    close: () => instant.close(),
  };
}

/** hooks.example resolves to loopback when the service connects (a rebinding name). */
const rebindingLookup: LookupFunction = (_hostname, _options, callback) => {
  callback(null, [{ address: '127.0.0.1', family: 4 }]);
};

async function call(server: TestServer, method: string, path: string, body?: unknown): Promise<{ status: number; body: Body }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TEST_KEYS[0]}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Body };
}

/** Standard Webhooks, checked here without the SDK. */
function independentlyVerified(item: ReceivedWebhook, secret: string): boolean {
  const id = String(item.headers['webhook-id']);
  const timestamp = String(item.headers['webhook-timestamp']);
  const expected = createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64'))
    .update(`${id}.${timestamp}.${item.body}`)
    .digest();
  return String(item.headers['webhook-signature'])
    .split(' ')
    .some((part) => {
      const [version, value] = part.split(',');
      const given = Buffer.from(value ?? '', 'base64');
      return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
    });
}

describe.each(BACKENDS)('webhook deliveries on %s', (backend) => {
  let ca: TestCa;
  let receiver: WebhookReceiver;
  let server: TestServer;
  let database: TestDatabase | undefined;

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
      {
        engine: testEngine(),
        webhookTls: { ca: ca.ca },
        webhookPollIntervalMs: 50,
        webhookResolve: (host) => Promise.resolve(host === 'hooks.example' ? [{ address: '93.184.215.14' }] : []),
        webhookLookup: rebindingLookup,
      },
    );
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
    await database?.drop();
    await ca.remove();
  });

  const at = (path: string) => receiver.received.filter((item) => item.path === path);
  const waitFor = (path: string, count: number, what: string) =>
    eventually(() => at(path).length >= count && at(path), { deadline: 20_000, what, wake: { emitter: receiver.events } });

  async function register(path: string, events?: string[]): Promise<{ id: string; secret: string }> {
    const created = await call(server, 'POST', '/v1/webhooks', { url: `${receiver.origin}${path}`, ...(events ? { events } : {}) });
    expect(created.status).toBe(200);
    return { id: String(created.body['id']), secret: String(created.body['secret']) };
  }

  async function settled(path: string, id: string): Promise<Body> {
    return eventually(
      async () => {
        const task = (await call(server, 'GET', `${path}/${id}`)).body;
        const status = path.includes('images') ? (task['data'] as Body)['status'] : task['status'];
        return ['completed', 'failed', 'cancelled', 'SUCCESS', 'FAILURE', 'CANCELLED'].includes(String(status)) && task;
      },
      { deadline: 20_000, what: `task ${id} to settle` },
    );
  }

  async function deliveries(endpoint: string): Promise<Body[]> {
    const answer = await call(server, 'GET', `/v1/webhooks/${endpoint}/deliveries`);
    expect(answer.status).toBe(200);
    return answer.body['data'] as Body[];
  }

  describe('events', () => {
    it('sends each final state of both families as its event, data equal to a status poll, signed', async () => {
      const endpoint = await register('/events');
      const videoPath = '/v1/video/generations';
      const imagePath = '/v1/images/generations/async';
      const create = async (path: string, body: Body) => {
        const answer = await call(server, 'POST', path, body);
        expect(answer.status).toBe(200);
        return String(path === videoPath ? answer.body['id'] : (answer.body['data'] as Body)['task_id']);
      };
      const expected = new Map<string, { type: string; path: string }>();
      expected.set(await create(videoPath, { ...VIDEO, prompt: 'a fox' }), { type: 'video.completed', path: videoPath });
      expected.set(await create(videoPath, { ...VIDEO, prompt: 'fail' }), { type: 'video.failed', path: videoPath });
      expected.set(await create(imagePath, { ...IMAGE, prompt: 'a lighthouse' }), { type: 'image.completed', path: imagePath });
      expected.set(await create(imagePath, { ...IMAGE, prompt: 'fail' }), { type: 'image.failed', path: imagePath });
      const heldVideo = await create(videoPath, { ...VIDEO, prompt: 'hold' });
      const heldImage = await create(imagePath, { ...IMAGE, prompt: 'hold' });
      expect((await call(server, 'POST', `${videoPath}/${heldVideo}/cancel`)).status).toBe(200);
      expect((await call(server, 'POST', `${imagePath}/${heldImage}/cancel`)).status).toBe(200);
      expected.set(heldVideo, { type: 'video.cancelled', path: videoPath });
      expected.set(heldImage, { type: 'image.cancelled', path: imagePath });

      const received = await waitFor('/events', 6, 'six deliveries');
      expect(received).toHaveLength(6);
      const seen = new Set<string>();
      for (const item of received) {
        const body = JSON.parse(item.body) as { type: string; timestamp: string; data: Body };
        const taskId = String(body.data['id'] ?? (body.data['data'] as Body | undefined)?.['task_id']);
        const want = expected.get(taskId);
        expect(want, `a delivery for ${taskId}`).toBeDefined();
        if (want === undefined) continue;
        seen.add(taskId);
        expect(body.type).toBe(want.type);
        expect(Number.isNaN(Date.parse(body.timestamp))).toBe(false);
        expect(body.data).toEqual(await settled(want.path, taskId));
        expect(item.headers['content-type']).toBe('application/json');
        expect(item.headers['user-agent']).toMatch(/^mediagate/);
        expect(item.headers['webhook-id']).toMatch(/^msg_[A-Za-z0-9_-]{30}$/);
        expect(item.headers['webhook-timestamp']).toMatch(/^\d+$/);
        expect(() => verifyWebhook(item.body, item.headers, endpoint.secret)).not.toThrow();
        expect(independentlyVerified(item, endpoint.secret)).toBe(true);
        // Another secret does not verify.
        expect(independentlyVerified(item, `whsec_${Buffer.alloc(32, 1).toString('base64')}`)).toBe(false);
      }
      expect(seen.size).toBe(6);
      expect(new Set(received.map((item) => item.headers['webhook-id'])).size).toBe(6);

      // The log: one succeeded delivery per event, one attempt each. The receiver sees a request
      // before the sender has written its 204, so the log is awaited until every row is settled.
      const log = await eventually(
        async () => {
          const rows = await deliveries(endpoint.id);
          return rows.length === 6 && rows.every((row) => row['status'] !== 'pending') && rows;
        },
        { deadline: 20_000, what: 'six settled deliveries in the log' },
      );
      expect(log).toHaveLength(6);
      for (const delivery of log) {
        expect(delivery).toMatchObject({
          object: 'webhook.delivery',
          webhook_id: endpoint.id,
          status: 'succeeded',
          attempts: 1,
          last_status_code: 204,
          last_error: null,
          next_attempt_at: null,
        });
        expect(delivery['attempt_log']).toEqual([{ attempt: 1, at: expect.any(Number), status_code: 204, error: null, duration_ms: expect.any(Number) }]);
      }
      await call(server, 'DELETE', `/v1/webhooks/${endpoint.id}`);
    });

    it('sends only the events an endpoint asked for', async () => {
      const failedOnly = await register('/failed-only', ['video.failed']);
      const all = await register('/all-events');
      await call(server, 'POST', '/v1/video/generations', { ...VIDEO, prompt: 'a fox' });
      const failing = await call(server, 'POST', '/v1/video/generations', { ...VIDEO, prompt: 'fail' });
      await waitFor('/all-events', 2, 'both events at the endpoint that takes all');
      const [only] = await waitFor('/failed-only', 1, 'the failed event');
      expect((JSON.parse(only?.body ?? '{}') as Body)['type']).toBe('video.failed');
      expect(((JSON.parse(only?.body ?? '{}') as Body)['data'] as Body)['id']).toBe(failing.body['id']);
      expect(await deliveries(failedOnly.id)).toHaveLength(1);
      await call(server, 'DELETE', `/v1/webhooks/${failedOnly.id}`);
      await call(server, 'DELETE', `/v1/webhooks/${all.id}`);
    });
  });

  describe('retries', () => {
    it('retries a 500, no answer and a redirect (not followed) on the schedule with one webhook-id, then succeeds', async () => {
      const answers = ['fail', 'hang', 'redirect', 'ok'] as const;
      receiver.answer = (path, count) => (path === '/retry' ? (answers[count] ?? 'ok') : 'ok');
      const endpoint = await register('/retry', ['video.completed']);
      await call(server, 'POST', '/v1/video/generations', { ...VIDEO, prompt: 'retry me' });
      const received = await waitFor('/retry', 4, 'four attempts');
      expect(received.map((item) => item.answer)).toEqual(['fail', 'hang', 'redirect', 'ok']);
      expect(new Set(received.map((item) => item.headers['webhook-id'])).size).toBe(1);
      for (const item of received) expect(verifyWebhook(item.body, item.headers, endpoint.secret)).toBeUndefined();
      expect(new Set(received.map((item) => item.body)).size).toBe(1);
      // Never sooner than the schedule less its jitter (20%).
      for (let i = 1; i < received.length; i += 1) {
        expect((received[i]?.at ?? 0) - (received[i - 1]?.at ?? 0)).toBeGreaterThanOrEqual(Math.floor((SCHEDULE[i - 1] ?? 0) * 0.8));
      }
      expect(at('/ok')).toHaveLength(0);

      const [delivery] = await eventually(
        async () => {
          const log = await deliveries(endpoint.id);
          return log[0]?.['status'] === 'succeeded' && log;
        },
        { deadline: 10_000, what: 'the delivery to be succeeded' },
      );
      expect(delivery).toMatchObject({
        id: received[0]?.headers['webhook-id'],
        type: 'video.completed',
        status: 'succeeded',
        attempts: 4,
        last_status_code: 204,
      });
      const attempts = delivery?.['attempt_log'] as Body[];
      expect(attempts.map((attempt) => attempt['attempt'])).toEqual([1, 2, 3, 4]);
      expect(attempts.map((attempt) => attempt['status_code'])).toEqual([500, null, 302, 204]);
      expect(String(attempts[1]?.['error'])).toMatch(/^timeout/);
      expect(String(attempts[2]?.['error'])).toMatch(/redirects are not followed/);
      await call(server, 'DELETE', `/v1/webhooks/${endpoint.id}`);
    });

    it('fails a delivery after the last attempt; a redelivery sends it again with the same webhook-id', async () => {
      let healthy = false;
      receiver.answer = (path) => (path === '/dead' && !healthy ? 'fail' : 'ok');
      const endpoint = await register('/dead', ['image.completed']);
      await call(server, 'POST', '/v1/images/generations/async', { ...IMAGE, prompt: 'a lighthouse' });
      const [delivery] = await eventually(
        async () => {
          const log = await deliveries(endpoint.id);
          return log[0]?.['status'] === 'failed' && log;
        },
        { deadline: 20_000, what: 'the delivery to fail' },
      );
      expect(delivery).toMatchObject({ status: 'failed', attempts: SCHEDULE.length + 1, last_status_code: 500, next_attempt_at: null });
      expect((delivery?.['attempt_log'] as Body[]).map((attempt) => attempt['status_code'])).toEqual([500, 500, 500, 500]);
      expect(at('/dead')).toHaveLength(SCHEDULE.length + 1);

      healthy = true;
      const id = String(delivery?.['id']);
      const redelivered = await call(server, 'POST', `/v1/webhooks/${endpoint.id}/deliveries/${id}/redeliver`);
      expect(redelivered.status).toBe(200);
      expect(redelivered.body).toMatchObject({ id, status: 'pending' });
      const received = await waitFor('/dead', SCHEDULE.length + 2, 'the redelivery');
      expect(received.at(-1)?.headers['webhook-id']).toBe(id);
      expect(received.at(-1)?.body).toBe(received[0]?.body);
      const [after] = await eventually(
        async () => {
          const log = await deliveries(endpoint.id);
          return log[0]?.['status'] === 'succeeded' && log;
        },
        { deadline: 10_000, what: 'the redelivery to succeed' },
      );
      expect(after).toMatchObject({ id, status: 'succeeded', attempts: SCHEDULE.length + 2, last_status_code: 204 });

      // The SDK reads the log and asks for a redelivery too.
      const client = new Mediagate({ apiKey: TEST_KEYS[0], baseURL: server.url });
      const page = await client.webhooks.deliveries(endpoint.id, { limit: 1 });
      expect(page.data[0]).toMatchObject({ id, status: 'succeeded', attempts: SCHEDULE.length + 2 });
      expect(page.data[0]?.attempt_log).toHaveLength(SCHEDULE.length + 2);
      expect(await client.webhooks.redeliver(endpoint.id, id)).toMatchObject({ id, status: 'pending' });
      const third = await waitFor('/dead', SCHEDULE.length + 3, 'the redelivery asked for by the SDK');
      expect(third.at(-1)?.headers['webhook-id']).toBe(id);
      await expect(client.webhooks.redeliver(endpoint.id, 'msg_0000000000000000000000000000AA')).rejects.toMatchObject({
        status: 404,
        code: 'webhook_delivery_not_found',
      });

      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      expect(metrics).toMatch(/mediagate_webhook_attempts_total\{outcome="retried"\} [1-9]/);
      expect(metrics).toMatch(/mediagate_webhook_attempts_total\{outcome="failed"\} [1-9]/);
      expect(metrics).toMatch(/mediagate_webhook_attempts_total\{outcome="succeeded"\} [1-9]/);
      await call(server, 'DELETE', `/v1/webhooks/${endpoint.id}`);
    });

    it('stops the pending deliveries of a deleted endpoint', async () => {
      receiver.answer = (path) => (path === '/deleted' ? 'fail' : 'ok');
      const endpoint = await register('/deleted', ['video.completed']);
      await call(server, 'POST', '/v1/video/generations', { ...VIDEO, prompt: 'a fox' });
      await waitFor('/deleted', 1, 'the first attempt');
      expect((await call(server, 'DELETE', `/v1/webhooks/${endpoint.id}`)).status).toBe(200);
      const sent = at('/deleted').length;
      // Its deliveries are gone from the outbox: nothing is due for it any more.
      expect(await server.app.store.listWebhookDeliveries(endpoint.id, undefined, 10)).toEqual([]);
      // A later endpoint's delivery, made after the deleted one's first retry was due, arrives alone.
      const later = await register('/after-delete', ['video.completed']);
      await call(server, 'POST', '/v1/video/generations', { ...VIDEO, prompt: 'a fox' });
      await waitFor('/after-delete', 1, 'a delivery to the later endpoint');
      // At most the attempt that was in flight when it was deleted.
      expect(at('/deleted').length).toBeLessThanOrEqual(sent + 1);
      await call(server, 'DELETE', `/v1/webhooks/${later.id}`);
    });
  });

  describe('address policy at delivery', () => {
    it('refuses a name that resolves to loopback when connecting: the attempt fails, nothing is sent', async () => {
      const before = receiver.received.length;
      const created = await call(server, 'POST', '/v1/webhooks', { url: `https://hooks.example:${receiver.port}/rebind`, events: ['video.completed'] });
      expect(created.status).toBe(200);
      const id = String(created.body['id']);
      await call(server, 'POST', '/v1/video/generations', { ...VIDEO, prompt: 'a fox' });
      const [delivery] = await eventually(
        async () => {
          const log = await deliveries(id);
          return (log[0]?.['attempts'] as number) >= 2 && (log[0]?.['attempt_log'] as Body[]).length >= 2 && log;
        },
        { deadline: 20_000, what: 'two refused attempts' },
      );
      for (const attempt of delivery?.['attempt_log'] as Body[]) {
        expect(attempt['status_code']).toBeNull();
        expect(String(attempt['error'])).toMatch(/^address_refused/);
      }
      expect(at('/rebind')).toHaveLength(0);
      expect(receiver.received.slice(before).every((item) => item.path !== '/rebind')).toBe(true);
      await call(server, 'DELETE', `/v1/webhooks/${id}`);
    });
  });
});

describe.each(BACKENDS)('fair deliveries between keys on %s', (backend) => {
  let ca: TestCa;
  let receiver: WebhookReceiver;
  let server: TestServer;
  let database: TestDatabase | undefined;

  beforeAll(async () => {
    ca = await makeTestCa();
    receiver = await startReceiver(ca);
    // Every path under /hang never answers; the others answer 204 at once.
    receiver.answer = (path) => (path.startsWith('/hang/') ? 'hang' : 'ok');
    database = backend === 'postgres' ? await createTestDatabase() : undefined;
    server = await startServer(
      { MEDIAGATE_FETCH_ALLOW_HOSTS: '127.0.0.1', MEDIAGATE_WEBHOOK_TIMEOUT_S: '5', ...(database ? { DATABASE_URL: database.url } : {}) },
      { engine: testEngine(), webhookTls: { ca: ca.ca }, webhookPollIntervalMs: 50 },
    );
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
    await database?.drop();
    await ca.remove();
  });

  async function as(key: string, method: string, path: string, body?: unknown): Promise<Body> {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as Body;
  }

  /** Creates a task of `key` and answers how long its delivery to `path` took after the task ended. */
  async function deliveryLatency(key: string, path: string): Promise<number> {
    const created = await as(key, 'POST', '/v1/video/generations', { ...VIDEO, prompt: 'fair' });
    const id = String(created['id']);
    const item = await eventually(() => receiver.received.find((got) => got.path === path && got.body.includes(id)), {
      deadline: 40_000,
      what: `the delivery of ${id} to ${path}`,
      wake: { emitter: receiver.events },
    });
    const task = await as(key, 'GET', `/v1/video/generations/${id}`);
    return item.at - Number(task['completed_at']) * 1000;
  }

  it("keeps another key's delivery prompt while one key's 18 endpoints never answer", async () => {
    const [flooder, other] = TEST_KEYS;
    await as(other, 'POST', '/v1/webhooks', { url: `${receiver.origin}/calm`, events: ['video.completed'] });
    // Unloaded: the other key alone (whole seconds of completed_at: up to 1 s of slack).
    const alone = await deliveryLatency(other, '/calm');

    for (let i = 0; i < 18; i += 1) await as(flooder, 'POST', '/v1/webhooks', { url: `${receiver.origin}/hang/${i}`, events: ['video.completed'] });
    for (let i = 0; i < 3; i += 1) await as(flooder, 'POST', '/v1/video/generations', { ...VIDEO, prompt: `flood ${i}` });
    // The flooder's attempts are hanging (54 due, far more than the dispatcher's 16 slots).
    await eventually(() => receiver.received.filter((got) => got.path.startsWith('/hang/')).length >= 4, {
      deadline: 20_000,
      what: 'the flooding key holding its attempts',
      wake: { emitter: receiver.events },
    });
    const loaded = await deliveryLatency(other, '/calm');
    // Before the caps it waited for the hanging attempts' timeouts (5 s each, rounds of 16).
    expect(loaded).toBeLessThan(3 * Math.max(alone, 0) + 2000);
    // The flooding key holds no more than its share of attempts at once (MEDIAGATE_WEBHOOK_PER_KEY, 4).
    expect(receiver.received.filter((got) => got.path.startsWith('/hang/')).length).toBeLessThanOrEqual(4);
  }, 90_000);
});
