/**
 * Scale-out on PostgreSQL with real processes: one `mediagate serve --no-workers` and
 * `mediagate worker` processes on one database and one data directory. A few hundred tasks;
 * two workers are SIGKILLed mid-render (their tasks come back through the lease, within
 * lease + reaper interval), a new worker joins, and one leaves with SIGTERM and hands its
 * running tasks back. Every task completes exactly once.
 *
 * The `instant` engine with MEDIAGATE_INSTANT_DELAY_MS holds each task in `processing` for a
 * second without using the CPU, so there is always something to kill mid-render.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, postgresAvailability, type TestDatabase } from './helpers/postgres.js';
import { startWorkerProcess, type ServiceProcess } from './helpers/process.js';
import { startScaledOut, type ScaledOut } from './helpers/scaled-out.js';
import { eventually } from './helpers/eventually.js';

const availability = await postgresAvailability();
const KEY = 'mg_scale_out_key_0123456789';
const TASKS = 300;
const LEASE_S = 3;
const RENDER_MS = 1000;
/**
 * A stopped worker's task runs again within lease + one reaper pass (a third of the lease) + a
 * free slot (at most one render); the rest is slack for a loaded machine (the full suite on two
 * cores once took 10.1 s). What the bound tells apart is a lease-based takeover from a job lock
 * that only graphile-worker's 4-hour timeout would free.
 */
const TAKEOVER_BOUND_MS = (LEASE_S + LEASE_S / 3) * 1000 + RENDER_MS + 10_000;

interface Rendered {
  task: string;
  attempt: number;
  outcome: 'completed' | 'failed' | 'released';
  won: boolean;
}

function renderedLines(output: string): Rendered[] {
  return output
    .split('\n')
    .filter((line) => /"msg":"task (completed|failed|handed back)"/.test(line))
    .map((line) => JSON.parse(line) as Rendered);
}

describe.skipIf(!availability.enabled)(`scale-out: 1 API + worker processes on one PostgreSQL ${availability.reason}`, () => {
  let database: TestDatabase | undefined;
  let dataDir = '';
  let cluster: ScaledOut | undefined;
  const extra: ServiceProcess[] = [];
  let sql: pg.Pool | undefined;

  afterAll(async () => {
    for (const service of [...(cluster?.workers ?? []), ...extra]) service.child.kill('SIGKILL');
    await cluster?.close();
    await sql?.end();
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('completes every task exactly once while workers are killed, join and leave', async () => {
    database = await createTestDatabase();
    dataDir = await mkdtemp(join(tmpdir(), 'mediagate-scale-'));
    sql = new pg.Pool({ connectionString: database.url, max: 2 });
    sql.on('error', () => {}); // connections end when the database is dropped
    const db = sql;
    const env = {
      DATABASE_URL: database.url,
      MEDIAGATE_DATA_DIR: dataDir,
      MEDIAGATE_API_KEYS: KEY,
      MEDIAGATE_ENGINE: 'instant',
      MEDIAGATE_INSTANT_DELAY_MS: String(RENDER_MS),
      MEDIAGATE_CONCURRENCY: '6',
      MEDIAGATE_LEASE_S: String(LEASE_S),
      LOG_LEVEL: 'info',
    };
    cluster = await startScaledOut(env, { apis: 1, workers: 3 });
    const { proxy, workers } = cluster;
    const [w0, w1, w2] = workers;
    if (!w0 || !w1 || !w2) throw new Error('workers did not start');

    // A few hundred tasks of both families, 20 requests at a time.
    const ids: string[] = [];
    const create = async (n: number): Promise<void> => {
      const video = n % 3 !== 0;
      const response = await fetch(`${proxy.url}${video ? '/v1/video/generations' : '/v1/images/generations/async'}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(video ? { model: 'vendora/famw-2.7-t2v', prompt: `task ${n}` } : { model: 'vendora/famz-image-spicy-pro', prompt: `task ${n}` }),
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { id?: string; data?: { task_id?: string } };
      const id = body.id ?? body.data?.task_id;
      if (!id) throw new Error('no task id');
      ids.push(id);
    };
    for (let n = 0; n < TASKS; n += 20) await Promise.all(Array.from({ length: Math.min(20, TASKS - n) }, (_, i) => create(n + i)));

    const counts = async (): Promise<Record<string, number>> =>
      Object.fromEntries(
        (await db.query<{ status: string; n: string }>('SELECT status, count(*) AS n FROM tasks GROUP BY status')).rows.map((row) => [
          row.status,
          Number(row.n),
        ]),
      );
    const completed = async (): Promise<number> => (await counts())['completed'] ?? 0;
    const runningOn = async (worker: ServiceProcess): Promise<string[]> =>
      (await db.query<{ id: string }>(`SELECT id FROM tasks WHERE status = 'processing' AND lease_owner LIKE $1`, [`%:${worker.child.pid}:%`])).rows.map(
        (row) => row.id,
      );

    /** SIGKILLs a worker mid-render; resolves with the tasks it held, and the moment it died. */
    const kill = async (worker: ServiceProcess): Promise<{ held: string[]; at: number }> => {
      let held: string[] = [];
      await eventually(async () => (held = await runningOn(worker)).length > 0, { deadline: 20_000, what: 'the worker to be rendering' });
      worker.child.kill('SIGKILL');
      expect(await worker.exited).toBe('SIGKILL');
      return { held, at: Date.now() };
    };
    /** Resolves with the time from the kill until every held task runs again under a later attempt (or is done). */
    const takenOver = async ({ held, at }: { held: string[]; at: number }): Promise<number> => {
      await eventually(
        async () => {
          const rows = (await db.query<{ status: string; attempt: number }>('SELECT status, attempt FROM tasks WHERE id = ANY($1)', [held])).rows;
          return rows.every((row) => row.status === 'completed' || row.attempt >= 2);
        },
        { deadline: TAKEOVER_BOUND_MS * 2, what: 'the killed worker’s tasks to be taken over' },
      );
      return Date.now() - at;
    };

    await eventually(async () => (await completed()) >= TASKS * 0.1, { deadline: 60_000, what: '10% of the tasks' });
    const first = await kill(w0);
    // Watched from the moment of the kill, while the run goes on.
    const firstTakeover = takenOver(first);
    firstTakeover.catch(() => {}); // awaited below; this only keeps an early failure from being "unhandled"
    await eventually(async () => (await completed()) >= TASKS * 0.25, { deadline: 60_000, what: '25% of the tasks' });
    const second = await kill(w1);
    const takeovers = [await firstTakeover, await takenOver(second)];
    for (const ms of takeovers) expect(ms).toBeLessThan(TAKEOVER_BOUND_MS);

    // A new worker joins; then one leaves gracefully with no time to drain: it hands back.
    const joined = await startWorkerProcess(env);
    extra.push(joined);
    await eventually(async () => (await completed()) >= TASKS * 0.5, { deadline: 60_000, what: '50% of the tasks' });
    const leaving = await startWorkerProcess({ ...env, MEDIAGATE_DRAIN_S: '0' });
    extra.push(leaving);
    await eventually(async () => (await runningOn(leaving)).length > 0, { deadline: 20_000, what: 'the leaving worker to be rendering' });
    leaving.child.kill('SIGTERM');
    expect(await leaving.exited).toBe(0);
    const handedBack = renderedLines(leaving.output()).filter((line) => line.outcome === 'released' && line.won);
    expect(handedBack.length).toBeGreaterThan(0);

    await eventually(async () => (await completed()) === TASKS, { deadline: 90_000, what: 'every task to complete' });

    // Nothing left queued or processing, nothing failed.
    expect(await counts()).toEqual({ completed: TASKS });
    // Every task reads as completed through the API, with an output URL that serves the file.
    for (const id of ids) {
      const video = id.startsWith('vid_');
      const response = await fetch(`${proxy.url}${video ? '/v1/video/generations' : '/v1/images/generations/async'}/${id}`, {
        headers: { authorization: `Bearer ${KEY}` },
      });
      const body = (await response.json()) as { status?: string; data?: { status?: string } };
      expect(video ? body.status : body.data?.status).toBe(video ? 'completed' : 'SUCCESS');
    }
    // Exactly one output file per task: the winner's; files of killed attempts were cleared.
    const folders = await readdir(join(dataDir, 'outputs'));
    expect(folders.sort()).toEqual([...ids].sort());
    const recorded = (await db.query<{ id: string; outputs: string }>('SELECT id, outputs FROM tasks')).rows;
    for (const { id, outputs } of recorded) {
      const keys = (JSON.parse(outputs) as { key: string }[]).map((output) => output.key);
      expect((await readdir(join(dataDir, 'outputs', id))).map((file) => `${id}/${file}`)).toEqual(keys);
    }

    // Engine runs that settled: at most one per task, across every worker that ever ran.
    const everyone = [w0, w1, w2, joined, leaving];
    const settled = everyone.flatMap((worker) => renderedLines(worker.output())).filter((line) => line.won && line.outcome === 'completed');
    const perTask = new Map<string, number>();
    for (const line of settled) perTask.set(line.task, (perTask.get(line.task) ?? 0) + 1);
    expect([...perTask.values()].every((n) => n === 1)).toBe(true);
    // The database names the worker that settled each task: a task with no settle line was
    // settled by a killed worker, between its commit and its log line.
    const settledBy = new Map(
      (await db.query<{ id: string; lease_owner: string }>(`SELECT id, lease_owner FROM tasks`)).rows.map((row) => [row.id, row.lease_owner]),
    );
    const killedPids = [w0, w1].map((worker) => `:${worker.child.pid}:`);
    const unlogged = ids.filter((id) => !perTask.has(id));
    expect(unlogged.filter((id) => !killedPids.some((pid) => settledBy.get(id)?.includes(pid)))).toEqual([]);
    expect(settled.length + unlogged.length).toBe(TASKS);
    // And every settle line is the one the database recorded.
    for (const worker of everyone) {
      for (const line of renderedLines(worker.output()).filter((entry) => entry.won && entry.outcome === 'completed')) {
        expect(settledBy.get(line.task)).toContain(`:${worker.child.pid}:`);
      }
    }
    process.stdout.write(
      `scale-out: ${TASKS} tasks; takeover after SIGKILL in ${takeovers.join(' and ')} ms (bound ${TAKEOVER_BOUND_MS} ms); ` +
        `${handedBack.length} handed back at SIGTERM; API requests ${[...proxy.counts.values()].join('/')}\n`,
    );
  }, 180_000);
});
