// A channel's limits as the upstream sees them: a fake counting requests per wall-clock second
// shows submit_per_s and poll_per_s kept, and no more than max_in_flight tasks are held upstream
// at once (CHANNELS.md section 1), in one process and (PostgreSQL) in two sharing a database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseChannelsConfig } from '../src/channels/config.js';
import { startDashscopeFake, type DashscopeFake } from './fakes/dashscope.js';
import { eventually } from './helpers/eventually.js';
import { createTestDatabase, postgresAvailability } from './helpers/postgres.js';
import { startServer, type TestServer } from './helpers/server.js';

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
