// A channel's limits as the upstream sees them: a fake counting requests per wall-clock second
// shows submit_per_s and poll_per_s kept, and no more than max_in_flight tasks are held upstream
// at once (docs/guides/channels.md#configuration), in one process and (PostgreSQL) in two sharing a database:
// two services in this process, and two real `mediagate worker` processes.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadChannelsConfig, parseChannelsConfig } from '../src/channels/config.js';
import { startDashscopeFake, type DashscopeFake } from './fakes/dashscope.js';
import { eventually } from './helpers/eventually.js';
import { createTestDatabase, postgresAvailability } from './helpers/postgres.js';
import { freePort, startWorkerProcess, type ServiceProcess } from './helpers/process.js';
import { sample } from './helpers/prom.js';
import { startServer, TEST_KEYS, type TestServer } from './helpers/server.js';
import { TINY_MP4 } from './fakes/upstream-kit.js';

const split = process.env['MEDIAGATE_TEST_TOPOLOGY'] === 'split';
const KEY = 'sk-dashscope-test';
let fake: DashscopeFake;
let server: TestServer;

beforeAll(async () => {
  if (split) return;
  fake = await startDashscopeFake({ apiKey: KEY, queuedMs: 300, runMs: 1_200 });
  const channels = parseChannelsConfig(
    JSON.stringify({
      channels: { wan: { protocol: 'dashscope', base_url: fake.origin, api_key_env: 'T_KEY', submit_per_s: 2, poll_per_s: 4, max_in_flight: 3 } },
      routes: [
        { model: 'vendora/famw-2.7-t2v', to: [{ channel: 'wan', upstream_model: 'wan2.7-t2v' }] },
        { model: '*', to: [{ channel: 'sandbox' }] },
      ],
    }),
    { T_KEY: KEY },
  );
  server = await startServer({ MEDIAGATE_ENGINE: 'instant' }, { channels, upstreamTimings: { pollStartMs: 50, pollMaxMs: 100, idleMs: 50 } });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await fake?.close();
});

describe.skipIf(split)('channel limits', () => {
  it('keeps submit_per_s, poll_per_s and max_in_flight', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 8; i += 1) {
      const res = await fetch(`${server.url}/v1/video/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.keys[0]}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt: `limits ${i}` }),
      });
      ids.push(((await res.json()) as { id: string }).id);
    }
    let maxHeld = 0;
    await eventually(
      async () => {
        const tasks = await Promise.all(
          ids.map(
            async (id) =>
              (await (await fetch(`${server.url}/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${server.keys[0]}` } })).json()) as {
                status: string;
              },
          ),
        );
        const settled = tasks.filter((task) => task.status === 'completed' || task.status === 'failed').length;
        // Accepted upstream and not yet settled here: held by the channel (a lower bound of ours).
        maxHeld = Math.max(maxHeld, fake.http.stats.accepted - settled);
        return tasks.every((task) => task.status === 'completed');
      },
      { deadline: 40_000, interval: 50, what: 'every task to complete' },
    );
    expect(fake.http.stats.accepted).toBe(8);
    expect(maxHeld).toBeGreaterThan(0);
    expect(maxHeld).toBeLessThanOrEqual(3);
    // Requests leave at most `rate` per second; a wall-clock second may catch one more at its
    // edge when network delays bunch two spaced requests together.
    expect(fake.http.stats.maxPerSecond('submit')).toBeLessThanOrEqual(3);
    expect(fake.http.stats.maxPerSecond('poll')).toBeLessThanOrEqual(5);
    expect(fake.http.stats.maxPerSecond('poll')).toBeGreaterThanOrEqual(2);
  }, 60_000);
});

const postgres = (await postgresAvailability()).enabled;

describe.skipIf(split || !postgres)('channel limits across processes (PostgreSQL)', () => {
  it('two services on one database share poll_per_s, submit_per_s and max_in_flight', async () => {
    const shared = await startDashscopeFake({ apiKey: KEY, queuedMs: 300, runMs: 1_500 });
    const database = await createTestDatabase();
    const channels = parseChannelsConfig(
      JSON.stringify({
        channels: { wan: { protocol: 'dashscope', base_url: shared.origin, api_key_env: 'T_KEY', submit_per_s: 2, poll_per_s: 4, max_in_flight: 3 } },
        routes: [
          { model: 'vendora/famw-2.7-t2v', to: [{ channel: 'wan', upstream_model: 'wan2.7-t2v' }] },
          { model: '*', to: [{ channel: 'sandbox' }] },
        ],
      }),
      { T_KEY: KEY },
    );
    const env = { MEDIAGATE_ENGINE: 'instant', DATABASE_URL: database.url };
    const timings = { upstreamTimings: { pollStartMs: 50, pollMaxMs: 100, idleMs: 50 } };
    const a = await startServer(env, { channels, ...timings });
    const b = await startServer(env, { channels, ...timings });
    try {
      const ids: [TestServer, string][] = [];
      let sharedMaxHeld = 0;
      for (let i = 0; i < 8; i += 1) {
        const target = i % 2 === 0 ? a : b;
        const res = await fetch(`${target.url}/v1/video/generations`, {
          method: 'POST',
          headers: { authorization: `Bearer ${target.keys[0]}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt: `shared limits ${i}` }),
        });
        ids.push([target, ((await res.json()) as { id: string }).id]);
      }
      await eventually(
        async () => {
          const tasks = await Promise.all(
            ids.map(
              async ([target, id]) =>
                (await (await fetch(`${target.url}/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${target.keys[0]}` } })).json()) as {
                  status: string;
                },
            ),
          );
          const settled = tasks.filter((task) => task.status === 'completed' || task.status === 'failed').length;
          sharedMaxHeld = Math.max(sharedMaxHeld, shared.http.stats.accepted - settled);
          return tasks.every((task) => task.status === 'completed');
        },
        { deadline: 40_000, interval: 50, what: 'every task to complete' },
      );
      expect(shared.http.stats.accepted).toBe(8);
      expect(sharedMaxHeld).toBeLessThanOrEqual(3);
      // One process alone would poll up to 4 a second; two without a shared bucket up to 8.
      expect(shared.http.stats.maxPerSecond('poll')).toBeLessThanOrEqual(5);
      expect(shared.http.stats.maxPerSecond('submit')).toBeLessThanOrEqual(3);
    } finally {
      await a.close();
      await b.close();
      await database.drop();
      await shared.close();
    }
  }, 90_000);
});

describe.skipIf(split || !postgres)('channel limits across two mediagate worker processes (PostgreSQL)', () => {
  it('two spawned workers on one database keep submit_per_s, poll_per_s and max_in_flight together, and serve the channel series', async () => {
    // Upstream tasks of ~3 s with the workers' default poll schedule: six in flight ask for more
    // than 2 polls a second, twenty tasks for more than 2 submissions a second.
    const fake = await startDashscopeFake({ apiKey: KEY, queuedMs: 300, runMs: 3_000 });
    const database = await createTestDatabase();
    const dir = await mkdtemp(join(tmpdir(), 'mediagate-limits-workers-'));
    const file = join(dir, 'channels.json');
    await writeFile(
      file,
      JSON.stringify({
        channels: { wan: { protocol: 'dashscope', base_url: fake.origin, api_key_env: 'T_KEY', submit_per_s: 2, poll_per_s: 2, max_in_flight: 6 } },
        routes: [
          { model: 'vendora/famw-2.7-t2v', to: [{ channel: 'wan', upstream_model: 'wan2.7-t2v' }] },
          { model: '*', to: [{ channel: 'sandbox' }] },
        ],
      }),
    );
    const shared = {
      DATABASE_URL: database.url,
      MEDIAGATE_DATA_DIR: join(dir, 'data'),
      MEDIAGATE_API_KEYS: TEST_KEYS.join(','),
      MEDIAGATE_ENGINE: 'instant',
      MEDIAGATE_CHANNELS_FILE: file,
      T_KEY: KEY,
    };
    const workers: ServiceProcess[] = [];
    let api: TestServer | undefined;
    try {
      for (let i = 0; i < 2; i += 1) workers.push(await startWorkerProcess({ ...shared, MEDIAGATE_METRICS_PORT: String(await freePort()) }));
      const metricsUrls = workers.map((worker) => /"metrics":"([^"]+)"/.exec(worker.output())?.[1] ?? '');
      expect(metricsUrls.every((url) => url.startsWith('http://'))).toBe(true);
      // The API process in this test runs no scheduler: every upstream request comes from the workers.
      api = await startServer({ ...shared, MEDIAGATE_WORKERS: 'false' }, { channels: loadChannelsConfig(file, { T_KEY: KEY }) });
      const server = api;
      const ids: string[] = [];
      for (let i = 0; i < 20; i += 1) {
        const res = await fetch(`${server.url}/v1/video/generations`, {
          method: 'POST',
          headers: { authorization: `Bearer ${server.keys[0]}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt: `worker limits ${i}` }),
        });
        expect(res.status).toBe(200);
        ids.push(((await res.json()) as { id: string }).id);
      }
      let maxHeld = 0;
      let maxGauge = 0;
      await eventually(
        async () => {
          const tasks = await Promise.all(
            ids.map(
              async (id) =>
                (await (await fetch(`${server.url}/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${server.keys[0]}` } })).json()) as {
                  status: string;
                },
            ),
          );
          const settled = tasks.filter((task) => task.status === 'completed' || task.status === 'failed').length;
          maxHeld = Math.max(maxHeld, fake.http.stats.accepted - settled);
          for (const url of metricsUrls)
            maxGauge = Math.max(maxGauge, sample(await (await fetch(url)).text(), 'mediagate_channel_in_flight', { channel: 'wan' }));
          return tasks.every((task) => task.status === 'completed');
        },
        { deadline: 120_000, interval: 100, what: 'every task to complete' },
      );
      expect(fake.http.stats.accepted).toBe(20);
      expect(maxHeld).toBeGreaterThan(0);
      expect(maxHeld).toBeLessThanOrEqual(6);
      expect(maxGauge).toBeGreaterThan(0);
      expect(maxGauge).toBeLessThanOrEqual(6);
      // Over any 2 s, at most the rate's 4 requests plus two sent up to a second after their slots
      // (a claim delayed by a loaded machine); two processes each keeping the rate alone would
      // send 8. Per wall-clock second the same margin is one request, which two late sends exceed.
      expect(fake.http.stats.maxInWindow('submit', 2000)).toBeLessThanOrEqual(6);
      expect(fake.http.stats.maxInWindow('poll', 2000)).toBeLessThanOrEqual(6);
      expect(fake.http.stats.maxPerSecond('poll')).toBeGreaterThanOrEqual(2);

      // Each worker serves the channel series of what it did; together they account for every task.
      const texts = await Promise.all(metricsUrls.map(async (url) => (await fetch(url)).text()));
      const total = (name: string, labels: Record<string, string>): number => texts.reduce((sum, text) => sum + sample(text, name, labels), 0);
      expect(total('mediagate_channel_submissions_total', { channel: 'wan', outcome: 'accepted' })).toBe(20);
      expect(total('mediagate_channel_polls_total', { channel: 'wan', outcome: 'succeeded' })).toBe(20);
      expect(total('mediagate_channel_copy_bytes_total', { channel: 'wan' })).toBe(20 * TINY_MP4.length);
      expect(total('mediagate_channel_upstream_seconds_count', { channel: 'wan', operation: 'poll' })).toBe(fake.http.stats.byRole.get('poll') ?? 0);
    } finally {
      await api?.close();
      await Promise.all(
        workers.map(async (worker) => {
          worker.child.kill('SIGTERM');
          await worker.exited;
        }),
      );
      await database.drop();
      await fake.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);
});

describe.skipIf(split)("a key's share of a channel's slots", () => {
  let shareFake: DashscopeFake;
  let shared: TestServer;

  beforeAll(async () => {
    shareFake = await startDashscopeFake({ apiKey: KEY, queuedMs: 100, runMs: 1_500 });
    const channels = parseChannelsConfig(
      JSON.stringify({
        channels: {
          wan: { protocol: 'dashscope', base_url: shareFake.origin, api_key_env: 'T_KEY', submit_per_s: 50, max_in_flight: 2, max_in_flight_per_key: 1 },
        },
        routes: [
          { model: 'vendora/famw-2.7-t2v', to: [{ channel: 'wan', upstream_model: 'wan2.7-t2v' }] },
          { model: '*', to: [{ channel: 'sandbox' }] },
        ],
      }),
      { T_KEY: KEY },
    );
    shared = await startServer({ MEDIAGATE_ENGINE: 'instant' }, { channels, upstreamTimings: { pollStartMs: 50, pollMaxMs: 100, idleMs: 20 } });
  }, 60_000);
  afterAll(async () => {
    await shared?.close();
    await shareFake?.close();
  });

  const create = async (key: string, prompt: string): Promise<void> => {
    const res = await fetch(`${shared.url}/v1/video/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt }),
    });
    expect(res.status).toBe(200);
  };
  const submitted = (prefix: string) =>
    [...shareFake.book.tasks.values()].filter((task) => task.prompt.startsWith(prefix)).sort((a, b) => a.createdAt - b.createdAt);

  it("gives a waiting key the next free slot, not the flooding key's next task", async () => {
    const [flooder, other] = TEST_KEYS;
    for (let i = 0; i < 10; i += 1) await create(flooder, `flood ${i}`);
    // Alone, the flooding key uses every slot.
    await eventually(() => submitted('flood').length === 2, { deadline: 10_000, what: 'the flooding key holding both slots' });
    await create(other, 'waiting');
    const [waiting] = await eventually(() => submitted('waiting').length === 1 && submitted('waiting'), {
      deadline: 20_000,
      what: "the other key's submission",
    });
    // The slots freed first went to the waiting key: of the flooding key's next tasks, at most one
    // (its two tasks may end together, freeing two slots) reached the upstream before it.
    // Without the share, its ten tasks' retries would race the one waiting task for each slot.
    const before = submitted('flood').filter((task) => task.createdAt < (waiting?.createdAt ?? 0));
    expect(before.length).toBeLessThanOrEqual(3);
  }, 60_000);
});
