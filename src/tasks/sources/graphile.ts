import { Logger, run, runMigrations, type JobHelpers, type LogLevel, type Runner } from 'graphile-worker';
import type pg from 'pg';
import { Loop } from '../../loop.js';
import type { TaskService } from '../service.js';
import type { JobQueueSql } from '../../store/store.js';
import type { Health } from '../../outages.js';
import type { TaskLog, TaskRunner, TaskSource } from './source.js';

/**
 * The PostgreSQL mode's queue: graphile-worker (why this library: docs/architecture.md).
 *
 * A job carries only a task id, under the job key = the task id, so a task has at most one
 * pending job. Task state stays in `tasks`: the handler claims the named task with a guarded
 * UPDATE (queued, or processing with an expired lease), renders it and settles it with the
 * attempt fence. A duplicate or late job finds nothing to claim and ends as a no-op.
 *
 * graphile-worker holds a job's lock for 4 hours and has no heartbeat, so a dead worker's job
 * is not what brings its task back: mediagate's lease is. A reaper pass (every worker process,
 * one at a time through an advisory lock) adds a new job for every runnable task that no live
 * job will deliver; adding a job under the key of a locked job makes a new job and retires the
 * old one (its retries stop), so when the old lock finally lapses nothing runs twice.
 */
export const RENDER_JOB = 'mediagate_render';

/** Takes the queue's migrations one process at a time (a session advisory lock). */
const QUEUE_MIGRATION_LOCK = 727013;

/** A job's flag naming its task's key: a worker skips the jobs of keys it holds enough of (forbiddenFlags). */
const KEY_FLAG = 'key:';

function keyFlag(owner: string): string {
  return `'${KEY_FLAG}' || ${owner}`;
}

/** A job's flag saying its task has `https://` inputs to fetch before the render. */
const FETCH_FLAG = 'fetch';

/**
 * add_jobs(specs, job_key_preserve_run_at) over `relation` (id, created_at, owner, priority):
 * one job per task, keyed by the task id. graphile-worker runs jobs by priority, then run_at:
 * a new task's priority is its distance from the front of the queue (fair order between keys,
 * migration 7), its run_at the task's creation time, so within a rank jobs run in task order,
 * and a task that comes back (a stopped worker's, a handed-back one: priority 0) runs before
 * tasks created after it. The job has no queue name on purpose: a named queue is locked with its
 * running job, for 4 hours when the worker dies, and would hold every other job of that queue back.
 */
function addJobs(relation: string): string {
  return `graphile_worker.add_jobs(
    ARRAY(SELECT ROW('${RENDER_JOB}', json_build_object('id', r.id), NULL, to_timestamp(r.created_at / 1000.0), NULL, r.id,
                      r.priority, CASE WHEN r.fetches_inputs THEN ARRAY[${keyFlag('r.owner')}, '${FETCH_FLAG}'] ELSE ARRAY[${keyFlag('r.owner')}] END)::graphile_worker.job_spec
            FROM ${relation} r),
    true)`;
}

/**
 * A job delivers its task if it is waiting (unlocked, retries left) or was locked less than
 * `staleMs` ago: a live worker claims its task within milliseconds of locking the job, and a
 * lease that expired means its job was locked more than a lease ago.
 */
function liveJob(task: string): string {
  return `EXISTS (
               SELECT 1 FROM graphile_worker.jobs j
                WHERE j.key = ${task}.id
                  AND ((j.locked_at IS NULL AND j.attempts < j.max_attempts)
                       OR j.locked_at > now() - @staleMs * interval '1 millisecond'))`;
}

export const graphileJobs: JobQueueSql = { addJobs, liveJob };

/**
 * graphile-worker ids ($1 the render task, $2 the stale bound in ms, $3 now in ms) that hold a
 * render job locked longer than the stale bound and nothing that shows them alive: no job
 * locked more recently (a live worker locks jobs for its local queue and returns them within a
 * third of the lease) and no job whose task is processing under a lease not yet expired (a
 * live worker's long render heartbeats its lease). A SIGKILLed worker leaves exactly such
 * locks, held for graphile-worker's 4 hours, and the jobs the reaper retired are kept after
 * that as permanently failed: the jobs table would only grow. It reads locked jobs only, through
 * the index QUEUE_INDEXES adds (`locked_at IS NOT NULL` in the subquery lets the planner take it).
 */
export const DEAD_JOB_WORKERS = `SELECT COALESCE(array_agg(DISTINCT s.locked_by), '{}') AS ids
    FROM graphile_worker.jobs s
   WHERE s.task_identifier = $1 AND s.locked_at < now() - $2 * interval '1 millisecond'
     AND NOT EXISTS (
       SELECT 1 FROM graphile_worker.jobs j LEFT JOIN tasks t ON t.id = j.key
        WHERE j.locked_by = s.locked_by AND j.locked_at IS NOT NULL
          AND (j.locked_at >= now() - $2 * interval '1 millisecond'
               OR (t.status = 'processing' AND t.lease_expires_at >= $3)))`;

/**
 * Render jobs that can never run again: retired by the reaper (adding a job under the key of a
 * locked one takes the key away and spends its attempts) and no longer locked. Their task has
 * its new job, so removing them loses nothing.
 */
export const RETIRED_JOBS = `SELECT count(*)::int AS removed FROM graphile_worker.complete_jobs(ARRAY(
    SELECT id FROM graphile_worker.jobs
     WHERE task_identifier = $1 AND key IS NULL AND locked_at IS NULL AND attempts >= max_attempts))`;

/** Creates or upgrades graphile-worker's schema (`graphile_worker`), one process at a time. */
export async function migrateQueue(pool: pg.Pool, log: TaskLog): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [QUEUE_MIGRATION_LOCK]);
    try {
      await runMigrations({ pgPool: pool, logger: graphileLogger(log) });
      for (const statement of QUEUE_INDEXES) await client.query(statement);
      await seedJobStatistics(client, log);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [QUEUE_MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}

/**
 * Indexes of ours on graphile-worker's job table, for the dead-worker pass (DEAD_JOB_WORKERS,
 * RETIRED_JOBS): graphile-worker indexes only the jobs waiting to run, so without these each pass
 * read every job, a cost that grew with the queue's backlog (1,318 pages with 20,000 jobs waiting
 * against 6 with 100; test/growth.test.ts). Both are partial, over the few jobs locked or retired,
 * so they cost the queue's inserts and fetches next to nothing. Made after graphile-worker's
 * migrations, under the same lock; a migration of its that rebuilds the table drops them, and
 * the next start makes them again.
 */
const QUEUE_INDEXES = [
  `CREATE INDEX IF NOT EXISTS mediagate_jobs_locked ON graphile_worker._private_jobs (locked_by, locked_at) WHERE locked_at IS NOT NULL`,
  `CREATE INDEX IF NOT EXISTS mediagate_jobs_retired ON graphile_worker._private_jobs (task_id) WHERE key IS NULL AND locked_at IS NULL AND attempts >= max_attempts`,
];

/** The key of the job that seedJobStatistics adds and removes within one transaction. */
const STATISTICS_SEED_KEY = 'mediagate:statistics-seed';

/**
 * Gives graphile-worker's jobs table its first planner statistics. Without any (a new database,
 * until autovacuum analyzes the table, a minute or more after the first jobs), the planner
 * guesses graphile-worker's job fetch matches almost nothing, and reads and sorts every waiting
 * job instead of taking the first few from the queue's index: per fetch, a cost that grows
 * with the backlog (EXPLAIN ANALYZE during the PostgreSQL pipeline of `npm run bench`: 2 ms a
 * fetch with 6k jobs waiting, 27 ms with 14k, against 0.1-0.3 ms with statistics; before this,
 * the pipeline's database spent most of its time there). Analyzing the empty table does not
 * help (it records no column statistics), so the statistics come from one job that this
 * transaction adds, analyzes and removes: nobody else ever sees it. Once any statistics exist,
 * even from a table of running jobs only, the fetch takes the index (checked with EXPLAIN),
 * and autovacuum keeps them. A role that does not own the table gets a warning from ANALYZE
 * and nothing else.
 */
async function seedJobStatistics(client: pg.ClientBase, log: TaskLog): Promise<void> {
  const { rows } = await client.query<{ missing: boolean }>(
    `SELECT NOT EXISTS (SELECT 1 FROM pg_stats WHERE schemaname = 'graphile_worker' AND tablename = '_private_jobs' AND attname = 'task_id') AS missing`,
  );
  if (rows[0]?.missing !== true) return;
  try {
    await client.query('BEGIN');
    await client.query(
      `SELECT count(*) FROM graphile_worker.add_jobs(ARRAY[ROW($1, '{}'::json, NULL, NULL, NULL, $2, NULL, NULL)::graphile_worker.job_spec])`,
      [RENDER_JOB, STATISTICS_SEED_KEY],
    );
    await client.query('ANALYZE graphile_worker._private_jobs');
    await client.query('SELECT count(*) FROM graphile_worker.remove_job($1)', [STATISTICS_SEED_KEY]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    log.warn({ err: error }, 'could not give the job table its first statistics; fetching jobs may be slow until autovacuum analyzes it');
  }
}

export interface GraphileSourceOptions {
  readonly pool: pg.Pool;
  readonly service: TaskService;
  /** Jobs run at once (MEDIAGATE_CONCURRENCY). */
  readonly concurrency: number;
  readonly leaseMs: number;
  readonly maxAttempts: number;
  /** How often to look for stranded tasks. Default a third of the lease, at most 5 s. */
  readonly reapMs?: number;
  /**
   * Jobs a worker process fetches (and locks) in one statement, to hand to its free slots
   * without a round trip each. Default `concurrency`; 1 fetches one job per free slot.
   */
  readonly localQueueSize?: number;
  readonly log: TaskLog;
  /** Where a stopped job runner is reported (readiness, metrics) until it runs again. */
  readonly health?: Health;
}

/**
 * graphile-worker's default fetch, one job per free slot, costs a statement and a commit per
 * task; a worker process fetches a batch instead (graphile-worker's local queue: in the
 * PostgreSQL pipeline of `npm run bench`, 1 fetch per 16 tasks instead of 1 per task). Its
 * jobs are locked while they wait for a slot of this process, which our design accounts for:
 * - nothing is claimed until a slot takes the job: waiting tasks stay `queued`, hold no lease,
 *   and lose no attempt;
 * - a graceful stop returns the waiting jobs at once (graphile-worker unlocks them when its
 *   runner stops, before the running renders drain), and so does `localQueueTtlMs` on a busy
 *   process, so that an idle process elsewhere gets them (`GraphileTaskSource.localQueueTtlMs`);
 * - a process that dies with jobs waiting leaves them locked, and the reaper sees them as it
 *   sees a job whose worker died before claiming (locked longer than a lease): new jobs, so
 *   the takeover bound is unchanged.
 * Default `concurrency`, graphile-worker's recommended minimum (measured at 16 and 32 per
 * process in the pipeline bench: no difference beyond noise), except for a runner that fetches
 * inputs: it skips keys with `forbiddenFlags`, and graphile-worker serves a fetch with flags
 * straight from the table, past the batch, while the batch goes on taking new jobs on each
 * notification; another key's job held there waited for an idle worker's poll (1 s) or the
 * batch's TTL (lease/3, up to 5 s) (test/fairness.test.ts). Such a runner fetches one job per
 * free slot unless `localQueueSize` is given.
 */
export function localQueueSize(configured: number | undefined, concurrency: number, runner: Pick<TaskRunner, 'fetchesInputs'>): number {
  return Math.max(1, Math.floor(configured ?? (runner.fetchesInputs ? 1 : concurrency)));
}

/** Waits before starting a stopped job runner again: doubling from the first, up to the last. */
const RESTART_BACKOFF_MS = { first: 250, max: 30_000 } as const;

/**
 * Tasks from graphile-worker jobs. A stopped worker's task is back in at most
 * lease + reapMs (+ the pickup of the new job, milliseconds through LISTEN/NOTIFY when a worker
 * has room): 15 s + 5 s with the defaults.
 */
export class GraphileTaskSource implements TaskSource {
  private graphile: Runner | undefined;
  /** The reaper: every reapMs, and at start. */
  private reaper: Loop | undefined;
  private stopping = false;
  private stopped: Promise<void> | undefined;
  private releasedAt = 0;
  private runner: TaskRunner | undefined;
  /** A start of the job runner under way (the first, a restart, or a resume). */
  private starting: Promise<void> | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private restarts = 0;
  /** Claiming is paused (the worker pool's disk is full): the runner stays stopped until resume(). */
  private paused = false;
  /** The stop of the runner that pause() stopped, awaited by stop(). */
  private pausing: Promise<void> | undefined;

  constructor(private readonly options: GraphileSourceOptions) {}

  get reapMs(): number {
    return this.options.reapMs ?? Math.max(200, Math.min(5000, Math.floor(this.options.leaseMs / 3)));
  }

  /**
   * How long fetched jobs may wait in the local queue before they go back to the database:
   * well under the lease, so that the reaper (which calls a job locked for a lease stranded)
   * never takes the waiting jobs of a live process, and short enough that a busy process does
   * not sit on jobs for long while another has free slots.
   */
  get localQueueTtlMs(): number {
    return Math.max(100, Math.min(5000, Math.floor(this.options.leaseMs / 3)));
  }

  async start(runner: TaskRunner): Promise<void> {
    this.runner = runner;
    // The first start fails the process's start: a database that is not there at start is the
    // operator's to see. Later stops are supervised (runnerStopped).
    await this.startRunner(runner);
    this.reaper = new Loop({
      name: 'reaper',
      intervalMs: this.reapMs,
      turn: () => this.reapOnce(),
      onError: (error) => this.options.log.warn({ err: error }, 'looking for stranded tasks failed'),
    }).start();
  }

  /**
   * graphile-worker's runner stops for good when its worker pool fails, e.g. when completing
   * jobs finds the database gone, and the process would then live on and claim nothing. A
   * runner that stops unasked for is started again, after a backoff that doubles while the
   * starts fail; it is logged, counted (mediagate_job_runner_restarts_total) and reported in
   * readiness until it runs again. Its jobs in flight lose nothing: their tasks settle through
   * the store as before, and the jobs it held locked are released by the dead-worker pass.
   */
  private runnerStopped(graphile: Runner): void {
    if (this.graphile !== graphile) return;
    this.graphile = undefined;
    if (this.stopping || this.paused) return;
    const { log, health } = this.options;
    log.error({ component: 'graphile-worker' }, 'the job runner stopped; starting it again');
    health?.set('job_runner', 'the job runner stopped and is being started again');
    health?.count('job_runner_restart');
    this.scheduleRestart();
  }

  private scheduleRestart(): void {
    const delay = Math.min(RESTART_BACKOFF_MS.max, RESTART_BACKOFF_MS.first * 2 ** this.restarts);
    this.restarts += 1;
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => void this.restart(), delay);
  }

  private async restart(): Promise<void> {
    const runner = this.runner;
    if (this.stopping || this.paused || this.graphile !== undefined || this.starting !== undefined || runner === undefined) return;
    const { log, health } = this.options;
    try {
      await this.startRunner(runner);
      this.restarts = 0;
      health?.set('job_runner', undefined);
      log.info({ component: 'graphile-worker' }, 'the job runner runs again');
    } catch (error) {
      health?.set(
        'job_runner',
        `the job runner is stopped and could not be started again: ${error instanceof Error ? error.message.slice(0, 200) : 'unknown error'}`,
      );
      log.warn({ err: error, component: 'graphile-worker' }, 'starting the job runner again failed; trying later');
      if (!this.stopping && !this.paused) this.scheduleRestart();
    }
  }

  /** Stops claiming (the worker cannot take work now); running jobs finish as they would. */
  pause(): void {
    if (this.paused) return;
    this.paused = true;
    clearTimeout(this.restartTimer);
    const graphile = this.graphile;
    this.graphile = undefined;
    this.pausing = graphile?.stop().catch(() => {});
  }

  /** Claims again after pause(). */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.restarts = 0;
    void this.restart();
  }

  private async startRunner(runner: TaskRunner): Promise<void> {
    this.starting = this.runGraphile(runner);
    try {
      await this.starting;
    } finally {
      this.starting = undefined;
    }
  }

  private async runGraphile(runner: TaskRunner): Promise<void> {
    const { pool, log } = this.options;
    const batch = localQueueSize(this.options.localQueueSize, this.options.concurrency, runner);
    const graphile = await run({
      pgPool: pool,
      // Handlers hold a task from its claim to its settle, fetch stage included (worker-pool.ts).
      concurrency: runner.capacity,
      // The jobs of keys this process holds enough of are left to others (or to later); with
      // none to skip, null keeps the local queue's batched fetch.
      forbiddenFlags: () => {
        const keys = runner.skipKeys;
        return keys.length === 0 ? null : keys.map((key) => `${KEY_FLAG}${key}`);
      },
      noHandleSignals: true,
      // New jobs arrive through LISTEN/NOTIFY; polling only finds retries that came due.
      pollInterval: 1000,
      logger: graphileLogger(log),
      taskList: { [RENDER_JOB]: (payload, helpers) => this.handle(payload, helpers, runner) },
      // No cron (graphile-worker would otherwise read a `crontab` file in the working directory).
      parsedCronItems: [],
      preset: {
        worker: {
          // Fetch and lock up to `batch` jobs in one statement, hand them to free slots from
          // memory, and return the unclaimed ones after `localQueueTtlMs` (and at stop): see
          // localQueueSize.
          ...(batch > 1 ? { localQueue: { size: batch, ttl: this.localQueueTtlMs } } : {}),
          // Finished jobs are deleted in batches (those of one timer tick) instead of one
          // statement and commit each. A job whose task is settled delivers nothing, so one left
          // behind by a crash between the settle and the deletion is a no-op when it runs again.
          completeJobBatchDelay: 0,
          // Failed jobs the same way. This also routes a failure to record a job's failure (the
          // database gone) to graphile-worker's handler, which stops the runner (and ours starts
          // it again), where the unbatched call leaves an unhandled rejection that ends the process.
          failJobBatchDelay: 0,
        },
      },
    });
    if (this.stopping || this.paused) {
      // Stopped or paused while it started: it must not claim.
      await graphile.stop().catch(() => {});
      return;
    }
    this.graphile = graphile;
    // Settles when the runner stops, asked to or not (a failure is logged by graphile-worker).
    void graphile.promise.catch(() => {}).then(() => this.runnerStopped(graphile));
    // A failing worker pool shuts down "gracefully": it returns its locked jobs and fails its
    // unfinished ones, each with up to 20 retries over minutes while the database is gone, and
    // claims nothing meanwhile. The runner counts as stopped from the start of that shutdown
    // (ours start after the flags are set, so this is graphile-worker's own), and the next one
    // starts without waiting for it: the jobs it still holds are released by the dead-worker pass.
    graphile.events.on('pool:gracefulShutdown', () => {
      if (!this.stopping && !this.paused) this.runnerStopped(graphile);
    });
  }

  private async handle(payload: unknown, helpers: JobHelpers, runner: TaskRunner): Promise<void> {
    const { service, leaseMs, maxAttempts, log } = this.options;
    const id = taskIdOf(payload);
    if (id === undefined) {
      log.warn({ payload }, 'dropped a job that names no task');
      return;
    }
    const flags = Object.keys(helpers.job.flags ?? {});
    // Back to the queue unclaimed, as it was (a new job under the task's key retires this one),
    // for another process or for later.
    const putBack = () => helpers.addJob(RENDER_JOB, { id }, { jobKey: id, priority: helpers.job.priority, runAt: helpers.job.run_at, flags });
    const key = flags.find((flag) => flag.startsWith(KEY_FLAG))?.slice(KEY_FLAG.length);
    if (key !== undefined && runner.skipKeys.includes(key)) {
      // Fetched in a batch before its key filled its share of this process's fetch stage.
      await putBack();
      return;
    }
    // A task with inputs to fetch takes its key's place in the fetch stage before the claim;
    // one with nothing to fetch needs a render slot: it is claimed only when one is free, so
    // that it stays queued rather than processing while it waits (a job held past a lease
    // unclaimed is given to another process by the reaper).
    let place: (() => void) | undefined;
    let room: (() => void) | undefined;
    if (flags.includes(FETCH_FLAG) && key !== undefined) {
      place = runner.takeFetchPlace(key);
      if (place === undefined) {
        await putBack();
        return;
      }
    } else {
      room = await runner.renderRoom();
      if (room === undefined) {
        await putBack();
        return;
      }
    }
    let done: Promise<void>;
    try {
      const task = await service.claimById(id, runner.workerId, leaseMs, maxAttempts);
      if (!task) {
        place?.();
        log.debug?.({ task: id }, 'job found nothing to claim (settled, or running elsewhere)');
        return;
      }
      done = runner.run(task, place);
    } catch (error) {
      place?.();
      throw error;
    } finally {
      room?.();
    }
    await done;
  }

  /** One pass: fail tasks whose workers keep dying, give stranded tasks a new job. */
  private async reapOnce(): Promise<void> {
    if (this.stopping) return;
    const { service, leaseMs, maxAttempts, log } = this.options;
    const failed = await service.failAbandoned(maxAttempts);
    if (failed > 0) log.warn({ tasks: failed }, 'failed tasks whose workers stopped too many times');
    const requeued = await service.requeueStranded(leaseMs);
    if (requeued.length > 0) log.info({ tasks: requeued.length }, 'gave new jobs to tasks whose worker stopped');
    // After the requeue: a dead worker's jobs are retired by then, or run again once unlocked.
    // Once a lease, not every pass: it reads every locked job (no index on the lock columns),
    // and a lock is not called dead before it is a lease old anyway.
    if (Date.now() - this.releasedAt >= leaseMs) {
      this.releasedAt = Date.now();
      await this.releaseDeadWorkers();
    }
  }

  /**
   * Unlocks the jobs of workers that died (graphile-worker's own force_unlock_workers) and
   * removes the retired ones among them. An unlocked job that still has its key runs again and
   * claims its task if the task is runnable, else ends as a no-op: no task is lost or run twice.
   */
  private async releaseDeadWorkers(): Promise<void> {
    const { pool, leaseMs, log } = this.options;
    const { rows } = await pool.query<{ ids: string[] }>(DEAD_JOB_WORKERS, [RENDER_JOB, leaseMs, Date.now()]);
    const ids = rows[0]?.ids ?? [];
    if (ids.length > 0) {
      await pool.query('SELECT graphile_worker.force_unlock_workers($1::text[])', [ids]);
      log.info({ workers: ids }, 'unlocked the queue jobs of workers that stopped');
    }
    const removed = (await pool.query<{ removed: number }>(RETIRED_JOBS, [RENDER_JOB])).rows[0]?.removed ?? 0;
    if (removed > 0) log.info({ jobs: removed }, 'removed queue jobs replaced by new ones');
  }

  notify(): void {
    // The task's job was added with it; graphile-worker hears of it through LISTEN/NOTIFY.
  }

  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.stopping = true;
      clearTimeout(this.restartTimer);
      await this.reaper?.stop();
      await this.starting?.catch(() => {});
      // Stops fetching jobs and waits for running handlers (the pool ends or hands back their
      // renders by its drain deadline). A runner that stopped by itself is stopped already.
      await this.graphile?.stop().catch(() => {});
      await this.pausing;
    })();
    return this.stopped;
  }
}

function taskIdOf(payload: unknown): string | undefined {
  if (typeof payload !== 'object' || payload === null || !('id' in payload)) return undefined;
  return typeof payload.id === 'string' ? payload.id : undefined;
}

/** graphile-worker's log lines into ours: its per-job lines at debug, problems as they are. */
function graphileLogger(log: TaskLog): Logger {
  return new Logger(() => (level: LogLevel, message: string, meta?: unknown) => {
    const obj = { component: 'graphile-worker', ...(meta instanceof Object ? { meta: summary(meta) } : {}) };
    // LogLevel is an ambient const enum, which isolatedModules cannot name: compare its strings.
    const name: string = level;
    if (name === 'error') log.error(obj, message);
    else if (name === 'warning') log.warn(obj, message);
    else log.debug?.(obj, message);
  });
}

/** graphile-worker's meta objects hold pools and jobs; keep the log line small. */
function summary(meta: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(meta)) {
    if (value instanceof Error) out[key] = { message: value.message, name: value.name };
    else if (typeof value !== 'object' || value === null) out[key] = value;
  }
  return out;
}
