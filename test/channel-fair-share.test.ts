// A key's fair share of a channel's slots, end to end on each store (docs/channels.md "Limits"):
// a real server, a DashScope fake whose tasks keep running (10 min), the default share
// (max_in_flight_per_key unset). Slots are freed by cancelling a task through the API, so
// every step waits on a condition, never on time.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseChannelsConfig } from '../src/channels/config.js';
import { startDashscopeFake, type DashscopeFake } from './fakes/dashscope.js';
import { eventually } from './helpers/eventually.js';
import { createTestDatabase, postgresAvailability, selectedBackends, type TestDatabase } from './helpers/postgres.js';
import { startServer, TEST_KEYS, type TestServer } from './helpers/server.js';

const split = process.env['MEDIAGATE_TEST_TOPOLOGY'] === 'split';
const KEY = 'sk-dashscope-test';
const MODEL = 'vendora/famw-2.7-t2v';
const backends = [
  ...(selectedBackends().includes('sqlite') && process.env['MEDIAGATE_TEST_BACKEND'] !== 'postgres' ? ['sqlite' as const] : []),
  ...((await postgresAvailability()).enabled ? ['postgres' as const] : []),
];

describe.skipIf(split).each(backends)("a key's fair share of a channel's slots (%s)", (backend) => {
  let fake: DashscopeFake;
  let database: TestDatabase | undefined;
  let server: TestServer;
  /** Our task id by prompt. */
  const ids = new Map<string, string>();

  beforeEach(async () => {
    ids.clear();
    fake = await startDashscopeFake({ apiKey: KEY, queuedMs: 0, runMs: 600_000 });
    database = backend === 'postgres' ? await createTestDatabase() : undefined;
    const channels = parseChannelsConfig(
      JSON.stringify({
        channels: { wan: { protocol: 'dashscope', base_url: fake.origin, api_key_env: 'T_KEY', submit_per_s: 100, max_in_flight: 3 } },
        routes: [
          { model: MODEL, to: [{ channel: 'wan', upstream_model: 'wan2.7-t2v' }] },
          { model: '*', to: [{ channel: 'sandbox' }] },
        ],
      }),
      { T_KEY: KEY },
    );
    const env = { MEDIAGATE_ENGINE: 'instant', ...(database ? { DATABASE_URL: database.url } : {}) };
    server = await startServer(env, { channels, upstreamTimings: { pollStartMs: 200, pollMaxMs: 1_000, idleMs: 20 } });
  }, 60_000);

  afterEach(async () => {
    await server?.close();
    await database?.drop();
    await fake?.close();
  });

  const create = async (key: string, prompt: string): Promise<void> => {
    const res = await fetch(`${server.url}/v1/video/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, prompt }),
    });
    expect(res.status).toBe(200);
    ids.set(prompt, ((await res.json()) as { id: string }).id);
  };
  const cancel = async (key: string, prompt: string): Promise<void> => {
    const res = await fetch(`${server.url}/v1/video/generations/${ids.get(prompt) ?? ''}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
  };
  /** Prompts the upstream accepted, in acceptance order (a task cancelled upstream stays counted). */
  const submitted = (prefix: string): string[] => [...fake.acceptedByPrompt.keys()].filter((prompt) => prompt.startsWith(prefix));
  const status = async (key: string, prompt: string): Promise<string> => {
    const res = await fetch(`${server.url}/v1/video/generations/${ids.get(prompt) ?? ''}`, { headers: { authorization: `Bearer ${key}` } });
    return ((await res.json()) as { status: string }).status;
  };

  it('gives one key alone every slot of an idle channel, and each slot that frees', async () => {
    const [alone] = TEST_KEYS;
    for (let i = 0; i < 4; i += 1) await create(alone, `alone ${i}`);
    const first = await eventually(() => submitted('alone').length === 3 && submitted('alone'), { deadline: 20_000, what: 'three slots taken' });
    await cancel(alone, first[0] ?? '');
    await eventually(() => submitted('alone').length === 4, { deadline: 20_000, what: 'the freed slot taken by the same key' });
  }, 60_000);

  it("gives a waiting key the next free slot, without waiting for the other key's tasks to end", async () => {
    const [flooder, other] = TEST_KEYS;
    for (let i = 0; i < 6; i += 1) await create(flooder, `flood ${i}`);
    const held = await eventually(() => submitted('flood').length === 3 && submitted('flood'), {
      deadline: 20_000,
      what: 'the flooding key holding every slot',
    });
    await create(other, 'waiting 0');
    await create(other, 'waiting 1');
    // Slots held are not taken back: the waiting key gets the first one that frees.
    await cancel(flooder, held[0] ?? '');
    const [first] = await eventually(() => submitted('waiting').length === 1 && submitted('waiting'), {
      deadline: 20_000,
      what: "the waiting key's first submission",
    });
    // The flooding key's queued tasks did not take the freed slot, and its other two still run (upstream).
    expect(submitted('flood')).toHaveLength(3);
    for (const prompt of held.slice(1)) expect(['queued', 'processing']).toContain(await status(flooder, prompt));
    // Share ceil(3 / 2) = 2, which the flooding key holds: the next slot that frees (here the
    // other key's own) is the other key's again, not the flooding key's third.
    await cancel(other, first ?? '');
    await eventually(() => submitted('waiting').length === 2, { deadline: 20_000, what: "the waiting key's second submission" });
    expect(submitted('flood')).toHaveLength(3);
    // Nothing of the other key waits any more: the next free slot goes back to the flooding key.
    await cancel(flooder, held[1] ?? '');
    await eventually(() => submitted('flood').length === 4, { deadline: 20_000, what: "the flooding key's next submission" });
  }, 60_000);
});
