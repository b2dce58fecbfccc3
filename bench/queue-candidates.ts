/**
 * Measures the two PostgreSQL job queues considered for the scale-out mode, on this machine:
 * enqueue rate (one job per statement, as task creation does), pickup latency of an idle worker,
 * and the rate at which no-op jobs drain with 8 handlers. Each library gets its own fresh database.
 *
 *   PGHOST=127.0.0.1 PGUSER=postgres npx tsx bench/queue-candidates.ts
 *
 * The decision and the figures are written down in docs/architecture.md ("Why graphile-worker").
 */
import { randomBytes } from 'node:crypto';
import { Logger, run, runMigrations } from 'graphile-worker';
import PgBoss from 'pg-boss';
import pg from 'pg';

const ENQUEUE = 1000;
const DRAIN = 400;
const LATENCY = 20;
const HANDLERS = 8;

const admin = `postgres://${process.env['PGUSER'] ?? 'postgres'}@${process.env['PGHOST'] ?? '127.0.0.1'}:${process.env['PGPORT'] ?? '5432'}`;

async function withDatabase(run: (url: string) => Promise<void>): Promise<void> {
  const name = `mediagate_bench_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: `${admin}/postgres` });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  try {
    await run(`${admin}/${name}`);
  } finally {
    await client.query(`DROP DATABASE ${name} WITH (FORCE)`);
    await client.end();
  }
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const rate = (count: number, ms: number): string => `${Math.round((count * 1000) / ms)}/s`;

async function graphile(url: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: HANDLERS + 4 });
  pool.on('error', () => {});
  await runMigrations({ pgPool: pool, logger: silentLogger() });
  let start = Date.now();
  for (let i = 0; i < ENQUEUE; i += 1) {
    await pool.query(`SELECT graphile_worker.add_job('noop', json_build_object('i', $1::int), job_key := $2)`, [i, `k${i}`]);
  }
  const enqueueMs = Date.now() - start;
  await pool.query('DELETE FROM graphile_worker._private_jobs');

  let seen = 0;
  let onSeen: (() => void) | undefined;
  const runner = await run({
    pgPool: pool,
    concurrency: HANDLERS,
    noHandleSignals: true,
    pollInterval: 2000,
    logger: silentLogger(),
    taskList: {
      noop: () => {
        seen += 1;
        onSeen?.();
      },
    },
  });
  const latencies: number[] = [];
  for (let i = 0; i < LATENCY; i += 1) {
    const target = seen + 1;
    const reached = new Promise<void>((resolve) => (onSeen = () => seen >= target && resolve()));
    const t0 = performance.now();
    await pool.query(`SELECT graphile_worker.add_job('noop', '{}'::json)`);
    await reached;
    latencies.push(performance.now() - t0);
  }
  const before = seen;
  start = Date.now();
  const drained = new Promise<void>((resolve) => (onSeen = () => seen >= before + DRAIN && resolve()));
  await pool.query(
    `SELECT graphile_worker.add_jobs(array_agg(('noop', '{}'::json, null, null, null, null, null, null)::graphile_worker.job_spec)) FROM generate_series(1, ${DRAIN})`,
  );
  await drained;
  const drainMs = Date.now() - start;
  await runner.stop();
  await pool.end();
  print('graphile-worker 0.17.3', enqueueMs, latencies, drainMs);
}

async function pgBoss(url: string, batchSize: number): Promise<void> {
  const boss = new PgBoss({ connectionString: url, max: HANDLERS + 4, supervise: false, schedule: false });
  boss.on('error', () => {});
  await boss.start();
  await boss.createQueue('noop');
  let start = Date.now();
  for (let i = 0; i < ENQUEUE; i += 1) await boss.send('noop', { i }, { singletonKey: `k${i}` });
  const enqueueMs = Date.now() - start;
  await boss.purgeQueue('noop');

  let seen = 0;
  let onSeen: (() => void) | undefined;
  for (let i = 0; i < HANDLERS; i += 1) {
    await boss.work('noop', { batchSize, pollingIntervalSeconds: 0.5 }, (jobs) => {
      seen += jobs.length;
      onSeen?.();
      return Promise.resolve();
    });
  }
  const latencies: number[] = [];
  for (let i = 0; i < LATENCY; i += 1) {
    const target = seen + 1;
    const reached = new Promise<void>((resolve) => (onSeen = () => seen >= target && resolve()));
    const t0 = performance.now();
    await boss.send('noop', {});
    await reached;
    latencies.push(performance.now() - t0);
  }
  const before = seen;
  start = Date.now();
  const drained = new Promise<void>((resolve) => (onSeen = () => seen >= before + DRAIN && resolve()));
  await boss.insert(Array.from({ length: DRAIN }, () => ({ name: 'noop', data: {} })));
  await drained;
  const drainMs = Date.now() - start;
  await boss.stop({ graceful: false, wait: true });
  await new Promise((resolve) => setTimeout(resolve, 500));
  print(`pg-boss 10.4.2 (batchSize ${batchSize}, polling 0.5 s)`, enqueueMs, latencies, drainMs);
}

function print(name: string, enqueueMs: number, latencies: number[], drainMs: number): void {
  process.stdout.write(
    `${name}\n  enqueue, one job per statement: ${rate(ENQUEUE, enqueueMs)}\n` +
      `  idle pickup latency: median ${median(latencies).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms\n` +
      `  drain ${DRAIN} no-op jobs, ${HANDLERS} handlers: ${rate(DRAIN, drainMs)}\n`,
  );
}

/** graphile-worker's logger with no output, so the figures are free of console I/O. */
function silentLogger(): Logger {
  return new Logger(() => () => {});
}

await withDatabase(graphile);
await withDatabase((url) => pgBoss(url, 1));
await withDatabase((url) => pgBoss(url, 10));
