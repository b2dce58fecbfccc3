// A step never waits for a rate (docs/channels.md "Limits"): a task whose submit_per_s or
// poll_per_s slot starts later is put back until then, so it holds none of the scheduler's 64
// step slots. Each case makes more than 64 tasks wait for a slot 100 s away (a rate of 0.01 a
// second), waits until at least 64 of them are out of the claim (put back, or leased by a step
// that would sleep), then shows the other kind of request still going, on each store: had the
// waits held step slots, nothing else would run before the first of them ended. The fake's
// counts show the rate kept meanwhile. The fake's tasks end only when its clock is moved.
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { parseChannelsConfig } from '../src/channels/config.js';
import { startDashscopeFake, type DashscopeFake } from './fakes/dashscope.js';
import { eventually } from './helpers/eventually.js';
import { createTestDatabase, postgresAvailability, selectedBackends, type TestDatabase } from './helpers/postgres.js';
import { startServer, type TestServer } from './helpers/server.js';
import { openSqlite } from '../src/store/sqlite-driver.js';

const split = process.env['MEDIAGATE_TEST_TOPOLOGY'] === 'split';
const KEY = 'sk-dashscope-test';
const MODEL = 'vendora/famw-2.7-t2v';
/** More than the scheduler's step slots (UpstreamScheduler `maxSteps`, 64). */
const STEP_SLOTS = 64;
const WAITING = 70;
const backends = [
  ...(selectedBackends().includes('sqlite') && process.env['MEDIAGATE_TEST_BACKEND'] !== 'postgres' ? ['sqlite' as const] : []),
  ...((await postgresAvailability()).enabled ? ['postgres' as const] : []),
];

describe.skipIf(split).each(backends)('waiting for a rate holds no step slot (%s)', (backend) => {
  let fake: DashscopeFake | undefined;
  let database: TestDatabase | undefined;
  let server: TestServer | undefined;
  /** Added to the fake's clock: its tasks (10 min) end when this moves past them. */
  let shift = 0;

  const start = async (rates: { submit_per_s: number; poll_per_s: number }): Promise<TestServer> => {
    shift = 0;
    fake = await startDashscopeFake({ apiKey: KEY, queuedMs: 0, runMs: 600_000, clock: () => Date.now() + shift });
    database = backend === 'postgres' ? await createTestDatabase() : undefined;
    const channels = parseChannelsConfig(
      JSON.stringify({
        channels: { wan: { protocol: 'dashscope', base_url: fake.origin, api_key_env: 'T_KEY', max_in_flight: 1_000, ...rates } },
        routes: [
          { model: MODEL, to: [{ channel: 'wan', upstream_model: 'wan2.7-t2v' }] },
          { model: '*', to: [{ channel: 'sandbox' }] },
        ],
      }),
      { T_KEY: KEY },
    );
    const env = { MEDIAGATE_ENGINE: 'instant', ...(database ? { DATABASE_URL: database.url } : {}) };
    server = await startServer(env, { channels, upstreamTimings: { pollStartMs: 50, pollMaxMs: 200, idleMs: 20 } });
    return server;
  };

  afterEach(async () => {
    await server?.close();
    await database?.drop();
    await fake?.close();
    server = undefined;
    database = undefined;
    fake = undefined;
  });

  const create = async (on: TestServer, prompt: string): Promise<string> => {
    const res = await fetch(`${on.url}/v1/video/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${on.keys[0]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, prompt }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { id: string }).id;
  };
  const count = (role: 'submit' | 'poll'): number => fake?.http.stats.byRole.get(role) ?? 0;

  /**
   * Tasks of the channel in `state` (null: not yet submitted) that no claim takes for the next
   * 10 s: put back until their rate slot, or leased by a step (60 s).
   */
  const outOfClaim = async (on: TestServer, state: 'accepted' | null): Promise<number> => {
    const sql = `SELECT count(*) AS n FROM tasks WHERE channel = 'wan' AND status IN ('queued', 'processing')
                   AND ${state === null ? 'upstream_state IS NULL' : "upstream_state = 'accepted'"} AND next_check_at > `;
    const after = Date.now() + 10_000;
    if (!database) {
      const db = openSqlite(join(on.dataDir, 'mediagate.db'), { readOnly: true });
      try {
        return Number((db.prepare(`${sql} ?`).get(after) as { n: number }).n);
      } finally {
        db.close();
      }
    }
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return Number((await client.query<{ n: string }>(`${sql} $1`, [after])).rows[0]?.n);
    } finally {
      await client.end();
    }
  };

  it('submits new tasks while more than 64 accepted tasks wait for poll_per_s', async () => {
    const on = await start({ submit_per_s: 1_000, poll_per_s: 0.01 });
    for (let i = 0; i < WAITING; i += 1) await create(on, `polled ${i}`);
    await eventually(() => fake?.http.stats.accepted === WAITING, { deadline: 20_000, what: 'every task accepted' });
    // Each accepted task is due for a poll 50 ms later: the first takes the free slot, the others
    // book theirs 100 s apart.
    await eventually(async () => (await outOfClaim(on, 'accepted')) >= STEP_SLOTS, { deadline: 20_000, what: '64 polls waiting for their slot' });
    expect(count('poll')).toBe(1);
    for (let i = 0; i < 5; i += 1) await create(on, `new ${i}`);
    await eventually(() => fake?.http.stats.accepted === WAITING + 5, { deadline: 20_000, what: 'the new tasks submitted' });
    expect(count('poll')).toBe(1);
  }, 60_000);

  it('polls an accepted task to completion while more than 64 tasks wait for submit_per_s', async () => {
    const on = await start({ submit_per_s: 0.01, poll_per_s: 1_000 });
    // The first submission takes the free slot; every task after it books one 100 s apart.
    const ids = new Map<string, string>();
    for (let i = 0; i < WAITING; i += 1) ids.set(`waiting ${i}`, await create(on, `waiting ${i}`));
    await eventually(async () => (await outOfClaim(on, null)) >= STEP_SLOTS, { deadline: 20_000, what: '64 submissions waiting for their slot' });
    const [accepted] = [...(fake?.book.tasks.values() ?? [])];
    const id = ids.get(accepted?.prompt ?? '');
    expect(id).toBeDefined();
    // The accepted task ends upstream; it is polled and its output copied.
    shift = 3_600_000;
    await eventually(
      async () => {
        const res = await fetch(`${on.url}/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${on.keys[0]}` } });
        return ((await res.json()) as { status: string }).status === 'completed';
      },
      { deadline: 20_000, interval: 50, what: 'the accepted task polled to completion' },
    );
    expect(count('submit')).toBe(1);
  }, 60_000);
});
