/**
 * Exactly-once charging with real processes. A burst of creates from one key near its budget
 * never reserves past it (SQLite; PostgreSQL through two API processes behind a round-robin
 * proxy), and after SIGKILLs of the processes running tasks, restarts, cancels and idempotent
 * replays, the books agree for every key: spent = the cost of its final tasks, the daily rollup
 * = the tasks it sums, reserved = what its active tasks hold (0 once all are final).
 *
 * The `instant` engine with MEDIAGATE_INSTANT_DELAY_MS holds each task in `processing` for a
 * second (something to kill mid-task), and its video states the requested duration in its MP4
 * header, which is what metering reads: a 5 s task is billed 5 s.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from './helpers/eventually.js';
import { envKeyId, postgresDatabase, readBooks, setBudget, sqliteDatabase, type Books, type RawDatabase } from './helpers/ledger.js';
import { createTestDatabase, postgresAvailability, type TestDatabase } from './helpers/postgres.js';
import { freePort, startProcess, type ServiceProcess } from './helpers/process.js';
import { startScaledOut, type ScaledOut } from './helpers/scaled-out.js';

const availability = await postgresAvailability();
const BUDGETED = 'mg_usage_budgeted_key_0123456789';
const FREE = 'mg_usage_unbudgeted_key_0123456789';
const T2V = 'vendora/famw-2.7-t2v';
/** 0.1 + 5 s x 0.08 at 720p: what a 5 s task reserves and, delivered at 5 s, costs. */
const MAX_5S = 500_000;
const FITS = 20;
const PRICING = {
  currency: 'USD',
  models: { [T2V]: { per_task: 0.1, per_second: { '720p': 0.08, '*': 0.12 } }, '*': { per_image: 0.02, per_second: 0.1 } },
};

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

async function call(url: string, key: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const createVideo = (url: string, key: string, n: number, headers: Record<string, string> = {}) =>
  call(url, key, '/v1/video/generations', { model: T2V, prompt: `task ${n}`, duration: 5 }, headers);

/** The books agree for every key; returns them. */
async function expectBooksAgree(db: RawDatabase): Promise<Books> {
  const books = await readBooks(db);
  expect(books.rollupMismatches).toEqual([]);
  for (const key of books.keys) {
    expect({ id: key.id, spent: key.spent, reserved: key.reserved }).toEqual({ id: key.id, spent: key.tasksCost, reserved: key.activeReserved });
  }
  return books;
}

async function allFinal(db: RawDatabase, deadline: number): Promise<void> {
  await eventually(
    async () => Number((await db.query<{ n: unknown }>(`SELECT count(*) AS n FROM tasks WHERE status IN ('queued', 'processing')`))[0]?.n) === 0,
    { deadline, what: 'every task to be final' },
  );
}

/**
 * The scenario on one deployment: the burst (only FITS creates of the budgeted key succeed),
 * unbudgeted creates with idempotent replays, cancels sent twice, and `crash` (SIGKILLs and
 * restarts) while tasks run; then the books.
 */
async function scenario(url: () => string, db: RawDatabase, crash: () => Promise<void>): Promise<void> {
  await setBudget(db, envKeyId(BUDGETED), FITS * MAX_5S, null);
  const burst = await Promise.all(Array.from({ length: FITS * 3 }, (_, n) => createVideo(url(), BUDGETED, n)));
  expect(burst.filter((answer) => answer.status === 200)).toHaveLength(FITS);
  expect(burst.filter((answer) => answer.status === 402)).toHaveLength(FITS * 2);
  const budgeted = burst.flatMap((answer) => (answer.status === 200 ? [String(answer.body['id'])] : []));
  let books = await expectBooksAgree(db);
  // Workers run meanwhile, and on a loaded machine some of the burst may already be final: what
  // is held plus what was charged is the whole budget (the instant engine delivers exactly the
  // requested 5 s, so each task's cost is its reservation).
  const afterBurst = books.keys.find((key) => key.id === envKeyId(BUDGETED));
  expect(afterBurst).toBeDefined();
  expect((afterBurst?.reserved ?? 0) + (afterBurst?.spent ?? 0)).toBe(FITS * MAX_5S);

  // Unbudgeted tasks, each created twice under one Idempotency-Key (the replay makes nothing).
  const keyed = await Promise.all(Array.from({ length: 15 }, (_, n) => createVideo(url(), FREE, n, { 'idempotency-key': `once-${n}` })));
  const replays = await Promise.all(Array.from({ length: 15 }, (_, n) => createVideo(url(), FREE, n, { 'idempotency-key': `once-${n}` })));
  expect(replays.map((answer) => answer.body['id'])).toEqual(keyed.map((answer) => answer.body['id']));

  // Cancels, each sent twice: a second cancel charges nothing more.
  for (const id of budgeted.slice(0, 4)) {
    await call(url(), BUDGETED, `/v1/video/generations/${id}/cancel`, {});
    await call(url(), BUDGETED, `/v1/video/generations/${id}/cancel`, {});
  }
  await crash();
  await allFinal(db, 120_000);
  // The kills hit running tasks: some completed only under a later attempt.
  const retaken = await db.query<{ n: unknown }>(`SELECT count(*) AS n FROM tasks WHERE status = 'completed' AND attempt >= 2`);
  expect(Number(retaken[0]?.n)).toBeGreaterThan(0);

  books = await expectBooksAgree(db);
  const own = books.keys.find((key) => key.id === envKeyId(BUDGETED));
  const free = books.keys.find((key) => key.id === envKeyId(FREE));
  expect(own).toMatchObject({ final: FITS, reserved: 0 });
  expect(free).toMatchObject({ final: 15, reserved: 0, spent: 15 * MAX_5S });
  // Never more than the budget: every task was billed what it reserved (5 s delivered).
  expect(own?.spent).toBeLessThanOrEqual(FITS * MAX_5S);
  const completed = Number(
    (await db.query<{ n: unknown }>(`SELECT count(*) AS n FROM tasks WHERE owner = $1 AND status = 'completed'`, [envKeyId(BUDGETED)]))[0]?.n,
  );
  expect(own?.spent).toBe(completed * MAX_5S);

  // What the key sees agrees: its report, its budget, and each task's usage.
  const report = await call(url(), BUDGETED, '/v1/usage');
  expect(report.body['totals']).toMatchObject({ tasks: FITS, seconds: completed * 5, cost: (completed * MAX_5S) / 1e6 });
  expect(report.body['budget']).toMatchObject({ budget: (FITS * MAX_5S) / 1e6, spent: (completed * MAX_5S) / 1e6, reserved: 0 });
  let billed = 0;
  for (const id of budgeted) {
    const task = await call(url(), BUDGETED, `/v1/video/generations/${id}`);
    const usage = task.body['usage'] as { seconds: number; cost: number };
    expect(usage.seconds).toBe(task.body['status'] === 'completed' ? 5 : 0);
    billed += Math.round(usage.cost * 1e6);
  }
  expect(billed).toBe(own?.spent);
}

describe('charged exactly once on SQLite, across SIGKILL and restarts', () => {
  const started: ServiceProcess[] = [];
  let dataDir = '';
  let db: RawDatabase | undefined;
  afterAll(async () => {
    for (const service of started) service.child.kill('SIGKILL');
    await db?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('never overspends a burst, and keeps the books after two SIGKILLs mid-task', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mediagate-usage-crash-'));
    await writeFile(join(dataDir, 'pricing.json'), JSON.stringify(PRICING));
    const env = {
      PORT: String(await freePort()),
      MEDIAGATE_DATA_DIR: dataDir,
      MEDIAGATE_API_KEYS: `${BUDGETED},${FREE}`,
      MEDIAGATE_PRICING_FILE: join(dataDir, 'pricing.json'),
      MEDIAGATE_ENGINE: 'instant',
      MEDIAGATE_INSTANT_DELAY_MS: '1000',
      MEDIAGATE_CONCURRENCY: '4',
      MEDIAGATE_RATE_LIMIT_PER_MIN: '0',
      MEDIAGATE_MAX_TASKS_IN_FLIGHT: '0',
    };
    let current = await startProcess(['serve'], env);
    started.push(current);
    const opened = sqliteDatabase(join(dataDir, 'mediagate.db'));
    db = opened;
    const running = async (): Promise<number> =>
      Number((await opened.query<{ n: unknown }>(`SELECT count(*) AS n FROM tasks WHERE status = 'processing'`))[0]?.n);
    await scenario(
      () => current.url,
      opened,
      async () => {
        for (let round = 0; round < 2; round += 1) {
          await eventually(async () => (await running()) > 0, { deadline: 30_000, what: 'tasks to be processing' });
          current.child.kill('SIGKILL');
          expect(await current.exited).toBe('SIGKILL');
          current = await startProcess(['serve'], env);
          started.push(current);
        }
      },
    );
    current.child.kill('SIGTERM');
    expect(await current.exited).toBe(0);
  }, 240_000);
});

describe.skipIf(!availability.enabled)(`charged exactly once on PostgreSQL, two API processes and killed workers ${availability.reason}`, () => {
  let database: TestDatabase | undefined;
  let dataDir = '';
  let cluster: ScaledOut | undefined;
  let db: RawDatabase | undefined;

  afterAll(async () => {
    for (const service of cluster?.workers ?? []) service.child.kill('SIGKILL');
    await cluster?.close();
    await db?.close();
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('never overspends a burst through two API processes, and keeps the books while workers are SIGKILLed', async () => {
    database = await createTestDatabase();
    dataDir = await mkdtemp(join(tmpdir(), 'mediagate-usage-scale-'));
    await writeFile(join(dataDir, 'pricing.json'), JSON.stringify(PRICING));
    const opened = postgresDatabase(database.url);
    db = opened;
    const started = await startScaledOut(
      {
        DATABASE_URL: database.url,
        MEDIAGATE_DATA_DIR: dataDir,
        MEDIAGATE_API_KEYS: `${BUDGETED},${FREE}`,
        MEDIAGATE_PRICING_FILE: join(dataDir, 'pricing.json'),
        MEDIAGATE_ENGINE: 'instant',
        MEDIAGATE_INSTANT_DELAY_MS: '1000',
        MEDIAGATE_CONCURRENCY: '4',
        MEDIAGATE_LEASE_S: '3',
        MEDIAGATE_RATE_LIMIT_PER_MIN: '0',
        MEDIAGATE_MAX_TASKS_IN_FLIGHT: '0',
        LOG_LEVEL: 'info',
      },
      { apis: 2, workers: 2 },
    );
    cluster = started;
    const runningOn = async (worker: ServiceProcess): Promise<number> =>
      Number(
        (
          await opened.query<{ n: unknown }>(`SELECT count(*) AS n FROM tasks WHERE status = 'processing' AND lease_owner LIKE $1`, [`%:${worker.child.pid}:%`])
        )[0]?.n,
      );
    await scenario(
      () => started.proxy.url,
      opened,
      async () => {
        for (const index of [0, 1]) {
          const worker = started.workers[index];
          if (!worker) throw new Error('no worker');
          await eventually(async () => (await runningOn(worker)) > 0, { deadline: 30_000, what: `worker ${index} to be running tasks` });
          await started.replaceWorker(index);
        }
      },
    );
    // Both API processes took creates.
    expect([...started.proxy.counts.values()].every((count) => count > 10)).toBe(true);
  }, 240_000);
});
