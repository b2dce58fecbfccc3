// Cancelling a task routed upstream (decisions §8.1, docs/channels.md "Cancel"): the upstream job
// gets exactly one cancel where the protocol has one, whether the cancel lands while the task is
// processing upstream or while our scheduler is still waiting for the submission's answer; a
// protocol without a cancel gets nothing; our task stays cancelled whatever the upstream does
// next. On PostgreSQL also across processes: the cancel lands in an API-only process while the
// scheduler runs in another.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseChannelsConfig, type ChannelsConfig } from '../src/channels/config.js';
import { startDashscopeFake, type DashscopeFake } from './fakes/dashscope.js';
import { startPixverseFake, type PixverseFake } from './fakes/pixverse.js';
import type { FakeTask } from './fakes/upstream-kit.js';
import { eventually } from './helpers/eventually.js';
import { sample } from './helpers/prom.js';
import { createTestDatabase, postgresAvailability, selectedBackends, type TestDatabase } from './helpers/postgres.js';
import { startServer, type TestServer } from './helpers/server.js';

const split = process.env['MEDIAGATE_TEST_TOPOLOGY'] === 'split';
const DASHSCOPE_KEY = 'sk-dashscope-test';
const PIXVERSE_KEY = 'pixverse-test-key';
const TIMINGS = { pollStartMs: 100, pollMaxMs: 300, leaseMs: 5_000, idleMs: 100 };

interface TaskBody {
  id: string;
  status: string;
  outputs?: unknown[];
  error?: unknown;
}

let dashscope: DashscopeFake;
let pixverse: PixverseFake;
let upstreamMediagate: TestServer;

function channelsFor(): ChannelsConfig {
  return parseChannelsConfig(
    JSON.stringify({
      channels: {
        wan: { protocol: 'dashscope', base_url: dashscope.origin, api_key_env: 'T_DASHSCOPE' },
        pv: { protocol: 'pixverse', base_url: pixverse.origin, api_key_env: 'T_PIXVERSE' },
        partner: { protocol: 'mediagate', base_url: upstreamMediagate.url, api_key_env: 'T_PARTNER' },
      },
      routes: [
        { model: 'vendora/famw-2.7-t2v', to: [{ channel: 'wan', upstream_model: 'wan2.7-t2v' }] },
        { model: 'vendord/v6/image-to-video', to: [{ channel: 'pv', upstream_model: 'v6' }] },
        { model: 'vendora/famw-3.0-i2v-spicy', to: [{ channel: 'partner' }] },
        { model: '*', to: [{ channel: 'sandbox' }] },
      ],
    }),
    { T_DASHSCOPE: DASHSCOPE_KEY, T_PIXVERSE: PIXVERSE_KEY, T_PARTNER: upstreamMediagate.keys[0] },
  );
}

async function create(base: TestServer, body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${base.url}/v1/video/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${base.keys[0]}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { id?: string };
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json.id ?? '';
}

async function read(base: TestServer, id: string): Promise<TaskBody> {
  const res = await fetch(`${base.url}/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${base.keys[0]}` } });
  return (await res.json()) as TaskBody;
}

async function cancel(base: TestServer, id: string): Promise<TaskBody> {
  const res = await fetch(`${base.url}/v1/video/generations/${id}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${base.keys[0]}` } });
  const body = (await res.json()) as TaskBody;
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

/** The value of one series of the server's /metrics (0 when absent). */
async function metric(base: TestServer, name: string, labels: Record<string, string>): Promise<number> {
  return sample(await (await fetch(`${base.url}/metrics`)).text(), name, labels);
}

function fakeTask(fake: { book: { tasks: Map<string, FakeTask> } }, prompt: string): FakeTask | undefined {
  return [...fake.book.tasks.values()].find((task) => task.prompt === prompt);
}

const cancels = (fake: DashscopeFake): number => fake.http.stats.byRole.get('cancel') ?? 0;

const BACKENDS = [...(selectedBackends().includes('sqlite') ? ['sqlite'] : []), ...((await postgresAvailability()).enabled ? ['postgres'] : [])];

describe.skipIf(split).each(BACKENDS)('cancelling upstream tasks (%s)', (backend) => {
  let database: TestDatabase | undefined;
  let server: TestServer;

  beforeAll(async () => {
    // Queued upstream 2.5 s (DashScope cancels only PENDING tasks), then running 2 s.
    dashscope = await startDashscopeFake({ apiKey: DASHSCOPE_KEY, queuedMs: 2_500, runMs: 2_000 });
    dashscope.http.slowSubmitMs = 600;
    pixverse = await startPixverseFake({ apiKey: PIXVERSE_KEY, queuedMs: 300, runMs: 3_000 });
    upstreamMediagate = await startServer({ MEDIAGATE_ENGINE: 'instant', MEDIAGATE_INSTANT_DELAY_MS: '20000' });
    if (backend === 'postgres' && process.env['MEDIAGATE_TEST_BACKEND'] !== 'postgres') database = await createTestDatabase();
    const env = { MEDIAGATE_ENGINE: 'instant', ...(database ? { DATABASE_URL: database.url } : {}) };
    server = await startServer(env, { channels: channelsFor(), upstreamTimings: TIMINGS, upstreamRequestTimeoutMs: 3_000 });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await database?.drop();
    await upstreamMediagate?.close();
    await dashscope?.close();
    await pixverse?.close();
  });

  it('a task processing upstream: exactly one cancel is sent; the upstream finishing later does not complete ours', async () => {
    const prompt = `cancel while processing (${backend})`;
    const id = await create(server, { model: 'vendora/famw-2.7-t2v', prompt });
    await eventually(async () => (await read(server, id)).status === 'processing', { deadline: 10_000, interval: 50, what: 'the task to run upstream' });
    const before = cancels(dashscope);
    expect((await cancel(server, id)).status).toBe('cancelled');
    await eventually(() => cancels(dashscope) === before + 1, { deadline: 5_000, interval: 20, what: 'the upstream cancel' });
    // RUNNING on DashScope cannot be cancelled: the upstream job goes on and succeeds.
    const upstream = fakeTask(dashscope, prompt);
    if (!upstream) throw new Error('the fake has no task for the prompt');
    await eventually(() => dashscope.book.state(upstream).phase === 'succeeded', { deadline: 10_000, interval: 50, what: 'the upstream job to succeed' });
    const files = dashscope.http.stats.byRole.get('file') ?? 0;
    // A poll of ours after the upstream succeeded would copy the output and complete; none comes.
    await eventually(async () => (await metric(server, 'mediagate_channel_cancels_total', { channel: 'wan', outcome: 'not_cancellable' })) >= 1, {
      deadline: 5_000,
      what: 'the cancel to be counted',
    });
    const after = await read(server, id);
    expect(after.status).toBe('cancelled');
    expect(after.outputs ?? []).toEqual([]);
    expect(dashscope.http.stats.byRole.get('file') ?? 0).toBe(files);
    expect(cancels(dashscope)).toBe(before + 1);
    expect(dashscope.acceptedByPrompt.get(prompt)).toBe(1);
  }, 30_000);

  it('a cancel the upstream does not answer (500) is tried again, within the channel limits, until it answers', async () => {
    const prompt = `cancel retried (${backend})`;
    const id = await create(server, { model: 'vendora/famw-2.7-t2v', prompt });
    await eventually(() => dashscope.acceptedByPrompt.get(prompt) === 1, { deadline: 10_000, interval: 20, what: 'the upstream to accept' });
    await eventually(async () => (await read(server, id)).status !== 'queued' || (dashscope.http.stats.byRole.get('poll') ?? 0) > 0, {
      deadline: 10_000,
      interval: 20,
      what: 'the upstream id to be stored',
    });
    const before = cancels(dashscope);
    const answered = async (): Promise<number> =>
      (await metric(server, 'mediagate_channel_cancels_total', { channel: 'wan', outcome: 'cancelled' })) +
      (await metric(server, 'mediagate_channel_cancels_total', { channel: 'wan', outcome: 'not_cancellable' }));
    const answeredBefore = await answered();
    const transientBefore = await metric(server, 'mediagate_channel_cancels_total', { channel: 'wan', outcome: 'transient' });
    dashscope.http.inject({ on: 'cancel', kind: '500' });
    expect((await cancel(server, id)).status).toBe('cancelled');
    // The first cancel gets the 500; the owed cancel is claimed again about 2 s later and answered.
    await eventually(() => cancels(dashscope) === before + 2, { deadline: 10_000, interval: 50, what: 'the retried cancel' });
    await eventually(async () => (await answered()) === answeredBefore + 1, { deadline: 5_000, interval: 50, what: 'the answer to be counted' });
    expect(await metric(server, 'mediagate_channel_cancels_total', { channel: 'wan', outcome: 'transient' })).toBe(transientBefore + 1);
    // Answered: nothing is owed any more, so no third cancel follows. A cancel still owed would be
    // claimed again after its doubled backoff (about 4 s) or its lease (5 s): watched for 8 s.
    await eventually(() => cancels(dashscope) > before + 2, { deadline: 8_000, interval: 50, what: 'a third cancel' }).catch(() => undefined);
    expect(cancels(dashscope)).toBe(before + 2);
    expect((await read(server, id)).status).toBe('cancelled');
  }, 30_000);

  it('a cancel while the submission is in flight: the scheduler cancels the job the upstream then accepted', async () => {
    const prompt = `cancel while submitting [fake:slow-submit] (${backend})`;
    const submits = dashscope.http.stats.byRole.get('submit') ?? 0;
    const before = cancels(dashscope);
    const id = await create(server, { model: 'vendora/famw-2.7-t2v', prompt });
    // The submission reached the fake, which holds its answer for 600 ms.
    await eventually(() => (dashscope.http.stats.byRole.get('submit') ?? 0) > submits, { deadline: 5_000, interval: 5, what: 'the submission' });
    expect(fakeTask(dashscope, prompt)).toBeDefined();
    expect((await cancel(server, id)).status).toBe('cancelled');
    await eventually(() => cancels(dashscope) === before + 1, { deadline: 5_000, interval: 20, what: 'the upstream cancel' });
    const upstream = fakeTask(dashscope, prompt);
    if (!upstream) throw new Error('the fake has no task for the prompt');
    // Still PENDING when the cancel came: DashScope cancelled it.
    expect(dashscope.book.state(upstream).phase).toBe('cancelled');
    expect(dashscope.acceptedByPrompt.get(prompt)).toBe(1);
    await eventually(async () => (await metric(server, 'mediagate_channel_cancels_total', { channel: 'wan', outcome: 'cancelled' })) >= 1, {
      deadline: 5_000,
      what: 'the cancel to be counted',
    });
    expect((await read(server, id)).status).toBe('cancelled');
    expect(cancels(dashscope)).toBe(before + 1);
  }, 30_000);

  it('a mediagate channel: the upstream mediagate task is cancelled too', async () => {
    const id = await create(server, {
      model: 'vendora/famw-3.0-i2v-spicy',
      prompt: `cancel through mediagate (${backend})`,
      image: 'https://example.com/a.png',
    });
    const upstreamId = await eventually(
      async () => {
        const res = await fetch(`${upstreamMediagate.url}/v1/video/generations?limit=100`, {
          headers: { authorization: `Bearer ${upstreamMediagate.keys[0]}` },
        });
        const list = (await res.json()) as { data: { id: string; prompt?: string; status: string }[] };
        return list.data.find((task) => task.status === 'processing' || task.status === 'queued')?.id;
      },
      { deadline: 10_000, interval: 50, what: 'the upstream mediagate task' },
    );
    expect((await cancel(server, id)).status).toBe('cancelled');
    await eventually(async () => (await read(upstreamMediagate, upstreamId)).status === 'cancelled', {
      deadline: 5_000,
      interval: 20,
      what: 'the upstream task to be cancelled',
    });
    expect((await read(server, id)).status).toBe('cancelled');
  }, 30_000);

  it('a protocol without a cancel (pixverse): ours is cancelled and nothing is sent upstream', async () => {
    const prompt = `cancel without upstream cancel (${backend})`;
    const polls0 = pixverse.http.stats.byRole.get('poll') ?? 0;
    // No image (optional): text-to-video, so nothing is uploaded (an https image would be fetched by us first).
    const id = await create(server, { model: 'vendord/v6/image-to-video', prompt });
    await eventually(() => pixverse.acceptedByPrompt.get(prompt) === 1, { deadline: 10_000, interval: 20, what: 'the upstream to accept' });
    // Polled: the upstream id is stored.
    await eventually(() => (pixverse.http.stats.byRole.get('poll') ?? 0) > polls0, { deadline: 10_000, interval: 20, what: 'a poll of the task' });
    const requests = pixverse.http.stats.requests;
    const polls = pixverse.http.stats.byRole.get('poll') ?? 0;
    expect((await cancel(server, id)).status).toBe('cancelled');
    await eventually(async () => (await metric(server, 'mediagate_channel_cancels_total', { channel: 'pv', outcome: 'unsupported' })) >= 1, {
      deadline: 5_000,
      what: 'the cancel to be counted as unsupported',
    });
    // At most a poll that was already in flight; no other request.
    expect(pixverse.http.stats.requests - requests).toBe((pixverse.http.stats.byRole.get('poll') ?? 0) - polls);
    expect(pixverse.http.stats.byRole.get('cancel')).toBeUndefined();
    expect((await read(server, id)).status).toBe('cancelled');
  }, 30_000);
});

const postgres = (await postgresAvailability()).enabled;

describe.skipIf(split || !postgres)('a cancel won by a process without the channels loaded (PostgreSQL)', () => {
  it("is sent by the other process's scheduler once the task's next check is due", async () => {
    const fake = await startDashscopeFake({ apiKey: DASHSCOPE_KEY, queuedMs: 8_000, runMs: 2_000 });
    const database = await createTestDatabase();
    const channels = parseChannelsConfig(
      JSON.stringify({
        channels: { wan: { protocol: 'dashscope', base_url: fake.origin, api_key_env: 'T_DASHSCOPE' } },
        routes: [
          { model: 'vendora/famw-2.7-t2v', to: [{ channel: 'wan', upstream_model: 'wan2.7-t2v' }] },
          { model: '*', to: [{ channel: 'sandbox' }] },
        ],
      }),
      { T_DASHSCOPE: DASHSCOPE_KEY },
    );
    const env = { MEDIAGATE_ENGINE: 'instant', DATABASE_URL: database.url };
    const worker = await startServer(env, { channels, upstreamTimings: TIMINGS });
    // No channels file: this process has no adapters and no canceller.
    const bare = await startServer({ ...env, MEDIAGATE_WORKERS: 'false' });
    try {
      const prompt = 'cancel in a process without channels';
      const id = await create(worker, { model: 'vendora/famw-2.7-t2v', prompt });
      await eventually(() => fake.acceptedByPrompt.get(prompt) === 1, { deadline: 10_000, interval: 20, what: 'the upstream to accept' });
      await eventually(() => (fake.http.stats.byRole.get('poll') ?? 0) > 0, { deadline: 10_000, interval: 20, what: 'a poll' });
      expect((await cancel(bare, id)).status).toBe('cancelled');
      await eventually(() => cancels(fake) === 1, { deadline: 10_000, interval: 20, what: 'the upstream cancel from the worker' });
      const upstream = fakeTask(fake, prompt);
      expect(upstream && fake.book.state(upstream).phase).toBe('cancelled');
      expect(await metric(worker, 'mediagate_channel_cancels_total', { channel: 'wan', outcome: 'cancelled' })).toBe(1);
    } finally {
      await bare.close();
      await worker.close();
      await database.drop();
      await fake.close();
    }
  }, 60_000);
});

describe.skipIf(split || !postgres)('cancelling upstream across processes (PostgreSQL)', () => {
  it('the API-only process that wins the cancel sends it; the scheduler in the other process does not cancel again', async () => {
    const fake = await startDashscopeFake({ apiKey: DASHSCOPE_KEY, queuedMs: 3_000, runMs: 2_000 });
    const database = await createTestDatabase();
    const channels = parseChannelsConfig(
      JSON.stringify({
        channels: { wan: { protocol: 'dashscope', base_url: fake.origin, api_key_env: 'T_DASHSCOPE' } },
        routes: [
          { model: 'vendora/famw-2.7-t2v', to: [{ channel: 'wan', upstream_model: 'wan2.7-t2v' }] },
          { model: '*', to: [{ channel: 'sandbox' }] },
        ],
      }),
      { T_DASHSCOPE: DASHSCOPE_KEY },
    );
    const env = { MEDIAGATE_ENGINE: 'instant', DATABASE_URL: database.url };
    const api = await startServer({ ...env, MEDIAGATE_WORKERS: 'false' }, { channels, upstreamTimings: TIMINGS });
    const worker = await startServer(env, { channels, upstreamTimings: TIMINGS });
    try {
      const prompt = 'cancel in the API process';
      const id = await create(api, { model: 'vendora/famw-2.7-t2v', prompt });
      await eventually(() => fake.acceptedByPrompt.get(prompt) === 1, { deadline: 10_000, interval: 20, what: 'the upstream to accept' });
      // The id is stored once the worker's scheduler polls (queued upstream: our task stays queued).
      await eventually(() => (fake.http.stats.byRole.get('poll') ?? 0) > 0, { deadline: 10_000, interval: 20, what: 'a poll' });
      expect((await cancel(api, id)).status).toBe('cancelled');
      await eventually(() => cancels(fake) === 1, { deadline: 5_000, interval: 20, what: 'the upstream cancel' });
      const upstream = fakeTask(fake, prompt);
      if (!upstream) throw new Error('the fake has no task for the prompt');
      expect(fake.book.state(upstream).phase).toBe('cancelled');
      // Sent by the process that won the cancel, and counted there.
      expect(await metric(api, 'mediagate_channel_cancels_total', { channel: 'wan', outcome: 'cancelled' })).toBe(1);
      // Wait until the worker's poll schedule has passed the task several times, then count again.
      const polls = fake.http.stats.byRole.get('poll') ?? 0;
      const other = await create(api, { model: 'vendora/famw-2.7-t2v', prompt: 'a later task' });
      await eventually(async () => (await read(api, other)).status === 'completed', { deadline: 15_000, interval: 50, what: 'a later task to complete' });
      expect(fake.http.stats.byRole.get('poll') ?? 0).toBeGreaterThan(polls);
      expect(cancels(fake)).toBe(1);
      expect(await metric(worker, 'mediagate_channel_cancels_total', { channel: 'wan', outcome: 'cancelled' })).toBe(0);
      expect((await read(api, id)).status).toBe('cancelled');
    } finally {
      await api.close();
      await worker.close();
      await database.drop();
      await fake.close();
    }
  }, 60_000);
});
