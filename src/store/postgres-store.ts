import pg from 'pg';
import type { ClaimedTask, InsertOutcome, NewTask, SubmitLimits, TaskError, TaskOutput, TaskUsage, UpstreamStep } from './records.js';
import type { JobQueueSql, Operation } from './dialect.js';
import { GroupCommit } from './group-commit.js';
import { migrationSteps } from './migrations.js';
import { TableStore } from './operations.js';
import { inClaimOrder, type Int, num, toClaimedTask, upstreamSaveParams, type UpstreamSaveParams } from './rows.js';
import { createVersionTable, isApplied, lockMigrations, recordApplied } from './sql/migrations.js';
import { requeueStranded } from './sql/recovery.js';
import { completeMany, fail, release, releaseWithJob } from './sql/settle.js';
import { HOT_PATHS } from './sql/hot-paths.js';
import { releaseInputBytes } from './sql/inputs.js';
import { insertKeyedTasks, insertKeyedTasksWithJobs, type InsertKeyedTasksParams } from './sql/idempotency.js';
import { insertTasksGuardedWithJobs, insertTasksWithJobs, type InsertTasksParams } from './sql/tasks-insert.js';
import { inFlightLimitOf } from './sql/key-guard.js';
import { releaseReservation } from './sql/usage.js';
import { ensureChannelLimit, saveUpstream, saveUpstreamWithJob } from './sql/upstream.js';
import { mayTakeSlot, slotsHeld, waitingKeysCap } from './slot-share.js';
import type { Store } from './store.js';
import { driveAsync, execute, type Runner, type Steps } from './table.js';

/** Tasks a reaper pass re-announces at most; the next pass takes the rest. */
const STRANDED_BATCH = 500;

/** Runs the store's statements on a pool or on one client (a transaction). */
class Executor {
  constructor(private readonly client: pg.Pool | pg.ClientBase) {}

  /**
   * Every statement is prepared once per connection (named): parse and plan were a large part
   * of what the database spent its time on in the PostgreSQL pipeline of `npm run bench`.
   */
  async rows<P extends object, R>(op: Operation<P, R>, params: P): Promise<R[]> {
    const sql = op.on('postgres');
    const result = await this.client.query<R & pg.QueryResultRow>({ name: `mediagate/${sql.name}`, text: sql.text, values: sql.values(params) });
    return result.rows;
  }

  async first<P extends object, R>(op: Operation<P, R>, params: P): Promise<R | undefined> {
    return (await this.rows(op, params))[0];
  }

  async changes<P extends object>(op: Operation<P, unknown>, params: P): Promise<number> {
    const sql = op.on('postgres');
    const result = await this.client.query({ name: `mediagate/${sql.name}`, text: sql.text, values: sql.values(params) });
    return result.rowCount ?? 0;
  }

  /** A multi-statement body of the operation table, each statement awaited in turn. */
  steps<T>(body: Steps<T>): Promise<T> {
    return driveAsync(body, (step) => Promise.resolve(execute(this, step)));
  }

  /** DDL: not prepared. */
  async execute(text: string): Promise<void> {
    await this.client.query(text);
  }
}

/** A batch of new tasks as the column arrays the `unnest` inserts take (keyed or not). */
function taskColumns(tasks: readonly NewTask[]): InsertTasksParams {
  return {
    ids: tasks.map((t) => t.id),
    kinds: tasks.map((t) => t.kind),
    models: tasks.map((t) => t.model),
    owners: tasks.map((t) => t.owner),
    createdAts: tasks.map((t) => t.createdAt),
    params: tasks.map((t) => JSON.stringify(t.params)),
    channels: tasks.map((t) => t.channel ?? 'sandbox'),
    reservedCosts: tasks.map((t) => t.reserve ?? 0),
    inputBytes: tasks.map((t) => t.inputBytes ?? 0),
    traceContexts: tasks.map((t) => t.traceContext ?? null),
  };
}

/**
 * The store on PostgreSQL, over a `pg` pool. On the pipeline's hot path each statement costs a
 * round trip and a commit, and in the PostgreSQL pipeline of `npm run bench` (2 cores shared
 * with the server) that per-statement cost (client writes, server wake-ups, WAL flush), not the
 * rows, was what the database spent its time on. So creations, claims by id and completions are
 * group-committed (group-commit.ts: one statement in flight, carrying the calls that came while
 * the previous one ran) as one statement over `unnest` of the callers' arguments (the batch
 * forms in sql/), and the job of a task made runnable is added in the same statement
 * (JobQueueSql), atomic without BEGIN/COMMIT round trips.
 *
 * Each row keeps the guard of its single-row form, and each caller learns from the rows
 * RETURNING gives back whether its own transition took effect, so batching changes what a round
 * trip carries, not what any task may do. Ids are sorted, so that batches that overlap (workers
 * racing on a taken-over task) lock their rows in one order rather than into a deadlock (should
 * PostgreSQL still report one, the rows are tried again alone), and a duplicate within a batch
 * gets nothing (it could not have won anyway).
 */
export class PostgresStore extends TableStore implements Store, Runner {
  readonly dialect = 'postgres';
  private readonly db: Executor;
  private readonly inserts = new GroupCommit<NewTask, InsertOutcome>((batch) => this.insertBatch(batch), refusedByServer);
  private readonly claims = new GroupCommit<ClaimRequest, ClaimedTask | undefined>((batch) => this.claimBatch(batch), refusedByServer);
  private readonly completions = new GroupCommit<CompleteRequest, boolean>((batch) => this.completeBatch(batch), refusedByServer);
  private readonly withJobs:
    | {
        readonly insert: Operation<InsertTasksParams, { n: string }>;
        readonly insertGuarded: Operation<InsertTasksParams & BatchGuardParams, { inserted: string }>;
        readonly insertKeyed: Operation<InsertKeyedTasksParams, { id: string }>;
        readonly release: Operation<{ id: string; attempt: number }, { n: string }>;
        readonly stranded: Operation<{ now: number; staleMs: number; limit: number }, { id: string }>;
        readonly saveUpstream: Operation<UpstreamSaveParams, { n: Int }>;
      }
    | undefined;

  constructor(
    private readonly pool: pg.Pool,
    jobs?: JobQueueSql,
  ) {
    super();
    this.db = new Executor(pool);
    this.withJobs = jobs && {
      insert: insertTasksWithJobs(jobs),
      insertGuarded: insertTasksGuardedWithJobs(jobs),
      insertKeyed: insertKeyedTasksWithJobs(jobs),
      release: releaseWithJob(jobs),
      stranded: requeueStranded(jobs),
      saveUpstream: saveUpstreamWithJob(jobs),
    };
  }

  private async transaction<T>(run: (db: Executor) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const result = await run(new Executor(client));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  // The Runner of the operation table (operations.ts): statements on the pool, atomic bodies
  // on one client inside BEGIN/COMMIT.
  readonly changes: Runner['changes'] = (op, params) => this.db.changes(op, params);
  readonly first: Runner['first'] = (op, params) => this.db.first(op, params);
  readonly rows: Runner['rows'] = (op, params) => this.db.rows(op, params);

  steps<T>(atomic: boolean, body: () => Steps<T>): Promise<T> {
    return atomic ? this.transaction((db) => db.steps(body())) : this.db.steps(body());
  }

  migrate(): Promise<number[]> {
    return this.transaction(async (db) => {
      await db.changes(lockMigrations, {});
      await db.execute(createVersionTable.on('postgres').text);
      const applied: number[] = [];
      for (const step of migrationSteps('postgres')) {
        if ((await db.rows(isApplied, { version: step.version })).length > 0) continue;
        for (const ddl of step.statements) await db.execute(ddl);
        await db.changes(recordApplied, { version: step.version, appliedAt: Date.now() });
        applied.push(step.version);
      }
      return applied;
    });
  }

  insertTask(task: NewTask): Promise<InsertOutcome> {
    return this.inserts.add(task);
  }

  private async insertBatch(tasks: readonly NewTask[]): Promise<InsertOutcome[]> {
    if (!tasks.some(reserves)) return this.insertRows(this.db, tasks);
    const guard = batchGuardOf(tasks);
    if (guard && (await this.insertGuarded(tasks, guard))) return tasks.map(() => 'inserted');
    return this.transaction((db) => this.insertReserving(db, tasks));
  }

  /**
   * The batch in one statement whose guard locks its keys and lets it in only when no key has
   * a budget to reserve against nor reaches its in-flight limit with the batch's tasks (the key
   * guard of sql/hot-paths.ts): all of it inserted (true), or none (false: the full guard's
   * transaction decides task by task). What a task reserves is 0, as for a key without a budget.
   */
  private async insertGuarded(tasks: readonly NewTask[], guard: BatchGuardParams): Promise<boolean> {
    const params = { ...taskColumns(tasks), reservedCosts: tasks.map(() => 0), ...guard };
    if (this.withJobs) {
      const [row] = await this.db.rows(this.withJobs.insertGuarded, params);
      return num(row?.inserted ?? 0) === tasks.length;
    }
    return (await this.db.rows(HOT_PATHS.insertTasksGuarded, params)).length === tasks.length;
  }

  /** One statement: the rows, with their jobs and idempotency keys. */
  private async insertRows(db: Executor, tasks: readonly NewTask[]): Promise<InsertOutcome[]> {
    if (tasks.length === 0) return [];
    if (!tasks.some((task) => task.idempotency)) {
      const params = taskColumns(tasks);
      if (this.withJobs) await db.rows(this.withJobs.insert, params);
      else await db.rows(HOT_PATHS.insertTasks, params);
      return tasks.map(() => 'inserted');
    }
    // Some take idempotency keys: the rows returned are the tasks inserted.
    const params: InsertKeyedTasksParams = {
      ...taskColumns(tasks),
      keys: tasks.map((t) => t.idempotency?.key ?? ''),
      hashes: tasks.map((t) => t.idempotency?.requestHash ?? ''),
      expiredBefore: Math.min(...tasks.map((t) => t.idempotency?.expiredBefore ?? Number.POSITIVE_INFINITY)),
    };
    const rows = await db.rows(this.withJobs?.insertKeyed ?? insertKeyedTasks, params);
    const inserted = new Set(rows.map((row) => row.id));
    return tasks.map((task) => (inserted.has(task.id) ? 'inserted' : 'key_taken'));
  }

  /**
   * A batch in which some tasks reserve (a budget, stored inputs) or are guarded by an in-flight
   * limit, in one transaction: first the input bytes (`key_inputs`), each a guarded write of
   * its key's row taken in key order; then the batch's key rows (`api_keys`) locked in id order
   * (the key guard of sql/hot-paths.ts), the order in which a settle's triggers take the same rows, so two
   * transactions never wait on each other's rows in opposite orders. Under those locks each
   * task's key is read as it is now: its active tasks (plus those of this batch before it)
   * against its in-flight limit, and whether it has a budget, whose reservation is then the
   * guarded write. Then the rows that fit, in one statement (whose trigger counts them,
   * migration 16); then the reservations of tasks whose idempotency key was held are given back.
   * Every lock is held until the commit, so creates of one key in any process decide one after
   * the other.
   */
  private async insertReserving(db: Executor, tasks: readonly NewTask[]): Promise<InsertOutcome[]> {
    const refused = new Map<NewTask, InsertOutcome>();
    const byOwner = [...tasks].sort((a, b) => (a.owner < b.owner ? -1 : a.owner > b.owner ? 1 : 0));
    for (const task of byOwner) {
      const bytes = task.inputBytes ?? 0;
      if (bytes > 0 && (await db.changes(HOT_PATHS.reserveInputBytes, { owner: task.owner, bytes, limit: task.inputLimit ?? 0 })) === 0) {
        refused.set(task, 'inputs_over_limit');
      }
    }
    const owners = [...new Set(tasks.map((task) => task.owner))];
    const keys = new Map((await db.rows(HOT_PATHS.guardKeys, { ids: owners })).map((row) => [row.id, row]));
    const admitted = new Map<string, number>();
    const reserved = new Map<NewTask, number>();
    for (const task of tasks) {
      if (refused.has(task)) continue;
      const key = keys.get(task.owner);
      const refuse = async (outcome: InsertOutcome): Promise<void> => {
        refused.set(task, outcome);
        const bytes = task.inputBytes ?? 0;
        if (bytes > 0) await db.changes(releaseInputBytes, { owner: task.owner, bytes });
      };
      if (key && task.inFlightLimit !== undefined) {
        const limit = inFlightLimitOf(key, task.inFlightLimit);
        if (limit > 0 && Number(key.active_tasks) + (admitted.get(task.owner) ?? 0) >= limit) {
          await refuse('tasks_over_limit');
          continue;
        }
      }
      if (key && Number(key.budgeted) === 1 && task.reserve !== undefined) {
        if ((await db.changes(HOT_PATHS.reserveBudget, { id: task.owner, amount: task.reserve, now: task.createdAt })) === 0) {
          await refuse('budget_exceeded');
          continue;
        }
        reserved.set(task, task.reserve);
      }
      admitted.set(task.owner, (admitted.get(task.owner) ?? 0) + 1);
    }
    // What a task reserves is what its row records: 0 for a key without a budget.
    const fitting = tasks.filter((task) => !refused.has(task)).map((task) => ({ task, row: { ...task, reserve: reserved.get(task) ?? 0 } }));
    const outcomes = new Map<NewTask, InsertOutcome>();
    (
      await this.insertRows(
        db,
        fitting.map((f) => f.row),
      )
    ).forEach((outcome, i) => {
      const task = fitting[i]?.task;
      if (task) outcomes.set(task, outcome);
    });
    for (const task of tasks) {
      if (outcomes.get(task) !== 'key_taken') continue;
      const amount = reserved.get(task);
      if (amount !== undefined) await db.changes(releaseReservation, { id: task.owner, amount });
      if ((task.inputBytes ?? 0) > 0) await db.changes(releaseInputBytes, { owner: task.owner, bytes: task.inputBytes ?? 0 });
    }
    return tasks.map((task) => outcomes.get(task) ?? refused.get(task) ?? 'budget_exceeded');
  }

  async claimTasks(workerId: string, now: number, leaseUntil: number, limit: number, skipKeys: readonly string[] = []): Promise<ClaimedTask[]> {
    const takeovers = await this.db.rows(HOT_PATHS.claimTakeovers, { owner: workerId, now, leaseUntil, limit });
    const rest = limit - takeovers.length;
    const queued = rest <= 0 ? [] : await this.db.rows(HOT_PATHS.claimQueued, { owner: workerId, now, leaseUntil, limit: rest, skipKeys });
    return inClaimOrder([...takeovers, ...queued]);
  }

  claimTaskById(id: string, workerId: string, now: number, leaseUntil: number): Promise<ClaimedTask | undefined> {
    return this.claims.add({ id, workerId, now, leaseUntil });
  }

  private async claimBatch(batch: readonly ClaimRequest[]): Promise<(ClaimedTask | undefined)[]> {
    const unique = new Set(firstOfEach(batch, (request) => request.id));
    const ordered = [...unique];
    const rows = await this.db.rows(HOT_PATHS.claimByIds, {
      ids: ordered.map((r) => r.id),
      owners: ordered.map((r) => r.workerId),
      nows: ordered.map((r) => r.now),
      leaseUntils: ordered.map((r) => r.leaseUntil),
    });
    const won = new Map(rows.map((row) => [row.id, row]));
    return batch.map((request) => {
      const row = unique.has(request) ? won.get(request.id) : undefined;
      return row ? toClaimedTask(row) : undefined;
    });
  }

  complete(id: string, attempt: number, outputs: readonly TaskOutput[], now: number, usage: TaskUsage): Promise<boolean> {
    return this.completions.add({ id, attempt, outputs: JSON.stringify(outputs), now, seconds: usage.seconds, images: usage.images, cost: usage.cost });
  }

  private async completeBatch(batch: readonly CompleteRequest[]): Promise<boolean[]> {
    // By attempt as well: a stale attempt's completion and the current one's may share a batch.
    const unique = new Set(firstOfEach(batch, (request) => `${request.attempt}:${request.id}`));
    const ordered = [...unique];
    const rows = await this.db.rows(completeMany, {
      ids: ordered.map((r) => r.id),
      attempts: ordered.map((r) => r.attempt),
      outputs: ordered.map((r) => r.outputs),
      nows: ordered.map((r) => r.now),
      seconds: ordered.map((r) => r.seconds),
      images: ordered.map((r) => r.images),
      costs: ordered.map((r) => r.cost),
    });
    const won = new Set(rows.map((row) => `${row.attempt}:${row.id}`));
    return batch.map((request) => unique.has(request) && won.has(`${request.attempt}:${request.id}`));
  }

  async fail(id: string, attempt: number, error: TaskError, now: number): Promise<boolean> {
    return (await this.db.changes(fail, { id, attempt, now, error: JSON.stringify(error) })) === 1;
  }

  async release(id: string, attempt: number): Promise<boolean> {
    if (!this.withJobs) return (await this.db.changes(release, { id, attempt })) === 1;
    const [row] = await this.db.rows(this.withJobs.release, { id, attempt });
    return num(row?.n ?? 0) === 1;
  }

  async requeueStranded(now: number, staleMs: number): Promise<string[]> {
    if (!this.withJobs) return [];
    return (await this.db.rows(this.withJobs.stranded, { now, staleMs, limit: STRANDED_BATCH })).map((row) => row.id);
  }

  async saveUpstream(id: string, attempt: number, step: UpstreamStep): Promise<boolean> {
    const params = upstreamSaveParams(id, attempt, step);
    if (!this.withJobs) return (await this.db.changes(saveUpstream, params)) === 1;
    const [row] = await this.db.rows(this.withJobs.saveUpstream, params);
    return num(row?.n ?? 0) === 1;
  }

  async markSubmitting(id: string, attempt: number, step: UpstreamStep, limits: SubmitLimits): Promise<'marked' | 'full' | 'lost'> {
    await this.db.changes(ensureChannelLimit, { channel: step.channel, bucket: 'submit' });
    return this.transaction(async (db) => {
      await db.rows(HOT_PATHS.lockChannelSubmit, { channel: step.channel });
      // New statements after the lock: their snapshots see every `submitting` committed before
      // (the counters only grow under this lock; a slot freed meanwhile is seen next time).
      if (!(await this.slotFree(db, step.channel, limits))) return 'full';
      return (await db.changes(saveUpstream, upstreamSaveParams(id, attempt, step))) === 1 ? 'marked' : 'lost';
    });
  }

  hasSlot(channel: string, limits: SubmitLimits): Promise<boolean> {
    return this.slotFree(this.db, channel, limits);
  }

  /** The channel's slot counters and waiting keys, through the rule of slot-share.ts. */
  private async slotFree(db: Executor, channel: string, limits: SubmitLimits): Promise<boolean> {
    const held = new Map((await db.rows(HOT_PATHS.channelHolders, { channel })).map((row) => [row.owner, num(row.held)]));
    if (slotsHeld(held) >= limits.maxInFlight) return false;
    // A key holding no slot is below any share: the waiting keys need not be read.
    if ((held.get(limits.owner) ?? 0) === 0) return true;
    const waiting = (await db.rows(HOT_PATHS.channelWaitingKeys, { channel, cap: waitingKeysCap(limits.maxInFlight) })).map((row) => row.owner);
    return mayTakeSlot(limits, { held, waiting }, limits.owner);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

interface ClaimRequest {
  readonly id: string;
  readonly workerId: string;
  readonly now: number;
  readonly leaseUntil: number;
}

interface CompleteRequest {
  readonly id: string;
  readonly attempt: number;
  readonly outputs: string;
  readonly now: number;
  readonly seconds: number;
  readonly images: number;
  readonly cost: number;
}

/**
 * The first request for each key, sorted by id (one lock order for every batch): a second
 * request for the same key could not have won anyway (a claim of a task another call of the
 * batch claims; a second settle of the same attempt).
 */
function firstOfEach<T extends { readonly id: string }>(batch: readonly T[], key: (request: T) => string): T[] {
  const first = new Map<string, T>();
  for (const request of batch) if (!first.has(key(request))) first.set(key(request), request);
  return [...first.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * Whether a failed batch statement certainly changed nothing, so its rows may each be tried
 * again alone: the server refused it (one statement is its own transaction, rolled back on any
 * error the server reports). A lost connection is different: the statement may have committed,
 * and a second try would find its rows changed and report the claims or settles as lost (a
 * completed render's outputs deleted, a claimed task left to its lease).
 */
function refusedByServer(error: unknown): boolean {
  return error instanceof pg.DatabaseError;
}

/** The guard of a batch that one statement can apply (insertGuarded): what it asks of each task, shared by all of them. */
interface BatchGuardParams {
  readonly reserves: 0 | 1;
  readonly inFlight: number | null;
}

/**
 * The batch's one guard, when the statement can decide it: no task takes an idempotency key or
 * stores inputs (those reservations come before the guard, task by task), and every task asks
 * the same of its key (the HTTP creates of one process do: its pricing and its default limit).
 */
function batchGuardOf(tasks: readonly NewTask[]): BatchGuardParams | undefined {
  const first = tasks[0];
  if (first === undefined) return undefined;
  const guard = { reserves: first.reserve === undefined ? (0 as const) : (1 as const), inFlight: first.inFlightLimit ?? null };
  const same = tasks.every(
    (task) =>
      task.idempotency === undefined &&
      (task.inputBytes ?? 0) === 0 &&
      (task.reserve === undefined ? 0 : 1) === guard.reserves &&
      (task.inFlightLimit ?? null) === guard.inFlight,
  );
  return same ? guard : undefined;
}

/** Whether a new task reserves or is guarded in its insert's transaction (a budget, stored input bytes, an in-flight limit). */
function reserves(task: NewTask): boolean {
  return task.reserve !== undefined || task.inFlightLimit !== undefined || (task.inputBytes ?? 0) > 0;
}
