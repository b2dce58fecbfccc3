import type { ClaimedTask, InsertOutcome, NewTask, SubmitLimits, TaskError, TaskOutput, TaskUsage, UpstreamStep } from './records.js';
import type { Operation, Sql } from './dialect.js';
import { GroupCommit } from './group-commit.js';
import type { SqliteConnection, SqliteDriverName, SqliteStatement } from './sqlite-driver.js';
import { migrationSteps } from './migrations.js';
import { TableStore } from './operations.js';
import { inClaimOrder, num, toClaimedTask, upstreamSaveParams } from './rows.js';
import { createVersionTable, isApplied, recordApplied } from './sql/migrations.js';
import { complete, fail, release } from './sql/settle.js';
import { takeIdempotencyKey } from './sql/idempotency.js';
import { HOT_PATHS, type InsertTaskGuardedParams } from './sql/hot-paths.js';
import { releaseInputBytes } from './sql/inputs.js';
import { inFlightLimitOf } from './sql/key-guard.js';
import { releaseReservation } from './sql/usage.js';
import { saveUpstream } from './sql/upstream.js';
import { mayTakeSlot, slotsHeld, waitingKeysCap } from './slot-share.js';
import type { Store } from './store.js';
import { drive, execute, type Runner, type Steps } from './table.js';

/** A settle (processing -> completed | failed) waiting for its group commit. */
type Settle =
  | {
      readonly to: 'completed';
      readonly id: string;
      readonly attempt: number;
      readonly now: number;
      readonly outputs: string;
      readonly seconds: number;
      readonly images: number;
      readonly cost: number;
    }
  | { readonly to: 'failed'; readonly id: string; readonly attempt: number; readonly now: number; readonly error: string };

/**
 * The store on SQLite (node:sqlite or better-sqlite3: sqlite-driver.ts). Both drivers are
 * synchronous: each operation runs its statements (sql/, prepared once on first use and kept)
 * to the end before returning, and a transaction is a synchronous function, so nothing else
 * runs on the connection in between and every call takes the same path. Statements are prepared
 * on first use, which is after migrate() (start-up), when their tables exist.
 *
 * The operations of the table (operations.ts) run through `changes`, `first`, `rows` and
 * `steps` (a multi-statement body, driven synchronously in one transaction); written here is
 * only what SQLite does its own way.
 *
 * Group commits (group-commit.ts): creations, and settles, of one event-loop turn go in one
 * transaction; a commit (a WAL append of every page touched) is what costs, not the row
 * (measured: 30 µs a task alone, 5.4 µs in commits of 40).
 */
export class SqliteStore extends TableStore implements Store, Runner {
  readonly dialect = 'sqlite';
  /** Which SQLite library this store's connection runs on (sqlite-driver.ts). */
  readonly driver: SqliteDriverName;
  private readonly statements = new Map<Sql<never, unknown>, SqliteStatement>();
  private readonly inserts = new GroupCommit<NewTask, InsertOutcome>(
    async (batch) => this.insertBatch(batch),
    () => true,
  );
  private readonly settles = new GroupCommit<Settle, boolean>(
    async (batch) => this.settleBatch(batch),
    () => true,
  );
  private readonly insertBatch: (tasks: readonly NewTask[]) => InsertOutcome[];
  private readonly settleBatch: (settles: readonly Settle[]) => boolean[];
  private readonly claimBatch: (owner: string, now: number, leaseUntil: number, limit: number, skipKeys: readonly string[]) => ClaimedTask[];
  private readonly transactionOf: <T>(body: Steps<T>) => T;

  constructor(private readonly database: SqliteConnection) {
    super();
    this.driver = database.driver;
    // One transaction per batch (group-commit.ts); each task as insertOne says.
    // The batch's new tasks are counted into their keys' `active_tasks` once per key after the
    // rows (HOT_PATHS.countInserted, migration 17), and each guard adds the ones counted so far.
    this.insertBatch = database.transaction((tasks: readonly NewTask[]) => {
      const counted = new Map<string, number>();
      const outcomes = tasks.map((task) => {
        const pending = counted.get(task.owner) ?? 0;
        const outcome = this.insertOne(task, pending);
        if (outcome === 'inserted') counted.set(task.owner, pending + 1);
        return outcome;
      });
      for (const [owner, count] of counted) this.changes(HOT_PATHS.countInserted, { owner, count });
      return outcomes;
    });
    this.settleBatch = database.transaction((settles: readonly Settle[]) =>
      settles.map((settle) => (settle.to === 'completed' ? this.changes(complete, settle) : this.changes(fail, settle)) === 1),
    );
    // One transaction for the batch: a commit per task was the polling worker's main write cost.
    this.claimBatch = database.transaction((owner: string, now: number, leaseUntil: number, limit: number, skipKeys: readonly string[]) => {
      const takeovers = this.rows(HOT_PATHS.claimTakeovers, { owner, now, leaseUntil, limit });
      const rest = limit - takeovers.length;
      return inClaimOrder(rest <= 0 ? takeovers : [...takeovers, ...this.rows(HOT_PATHS.claimQueued, { owner, now, leaseUntil, limit: rest, skipKeys })]);
    });
    const bodies = database.transaction((body: Steps<unknown>) => drive(body, (step) => execute(this, step)));
    // A body's value is the T of its own Steps<T>: `bodies` only passes it through.
    this.transactionOf = bodies as <T>(body: Steps<T>) => T;
  }

  /**
   * One task of an insert batch, in its transaction: the input bytes' reservation (guarded by the
   * limit), then the key's row (the key guard of sql/hot-paths.ts: its active tasks, with the
   * `pending` ones of this batch, against its in-flight limit, and whether it has a budget now),
   * the budget reservation (guarded), the idempotency key, the row; a refusal gives back what was
   * reserved before it. The order is PostgreSQL's (postgres-store.ts), so a create over several
   * limits gets the same answer on both stores. A guarded create without an idempotency key
   * first tries the one-statement insert whose WHERE is the guard (insertTaskGuarded): most keys
   * have no budget and are below their limit, and the key row's read then costs no statement of
   * its own. When it inserts nothing, the full path runs and says why. One parameter object
   * serves every statement (each binds the names it uses): a create is the hottest write, and
   * copies of the task per statement showed in its profile.
   */
  private insertOne(task: NewTask, pending: number): InsertOutcome {
    const { owner, idempotency, reserve, inFlightLimit } = task;
    const inputBytes = task.inputBytes ?? 0;
    if (inputBytes > 0 && this.changes(HOT_PATHS.reserveInputBytes, { owner, bytes: inputBytes, limit: task.inputLimit ?? 0 }) === 0) {
      return 'inputs_over_limit';
    }
    const row: InsertTaskGuardedParams = {
      id: task.id,
      kind: task.kind,
      model: task.model,
      owner,
      createdAt: task.createdAt,
      params: JSON.stringify(task.params),
      channel: task.channel ?? 'sandbox',
      reservedCost: 0,
      inputBytes,
      traceContext: task.traceContext ?? null,
      reserves: reserve === undefined ? 0 : 1,
      inFlight: inFlightLimit ?? null,
      pending,
    };
    const guarded = reserve !== undefined || inFlightLimit !== undefined;
    if (guarded && !idempotency && this.changes(HOT_PATHS.insertTaskGuarded, row) === 1) return 'inserted';
    const giveInputsBack = (): void => {
      if (inputBytes > 0) this.changes(releaseInputBytes, { owner, bytes: inputBytes });
    };
    const key = guarded ? this.first(HOT_PATHS.guardKeys, { ids: [owner] }) : undefined;
    if (key && inFlightLimit !== undefined) {
      const limit = inFlightLimitOf(key, inFlightLimit);
      if (limit > 0 && Number(key.active_tasks) + pending >= limit) {
        giveInputsBack();
        return 'tasks_over_limit';
      }
    }
    const reserved = key && Number(key.budgeted) === 1 ? reserve : undefined;
    if (reserved !== undefined && this.changes(HOT_PATHS.reserveBudget, { id: owner, amount: reserved, now: task.createdAt }) === 0) {
      giveInputsBack();
      return 'budget_exceeded';
    }
    if (idempotency && this.changes(takeIdempotencyKey, { ...idempotency, owner, kind: task.kind, taskId: task.id, createdAt: task.createdAt }) === 0) {
      if (reserved !== undefined) this.changes(releaseReservation, { id: owner, amount: reserved });
      giveInputsBack();
      return 'key_taken';
    }
    row.reservedCost = reserved ?? 0;
    this.changes(HOT_PATHS.insertTask, row);
    return 'inserted';
  }

  private dataVersionStatement: SqliteStatement | undefined;

  /**
   * SQLite's `PRAGMA data_version`: it changes when another connection (another process on the
   * file: a `mediagate worker`, the CLI) commits, never for this connection's own commits. The
   * task feed (tasks/feed.ts) watches it to hear what it cannot be told.
   */
  dataVersion(): number {
    this.dataVersionStatement ??= this.database.prepare('PRAGMA data_version');
    const row = this.dataVersionStatement.get() as { data_version?: number | bigint } | undefined;
    return Number(row?.data_version ?? 0);
  }

  private prepare<P extends object, R>(op: Operation<P, R>): [SqliteStatement, Sql<P, R>] {
    const sql = op.on('sqlite');
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.database.prepare(sql.text);
      this.statements.set(sql, statement);
    }
    return [statement, sql];
  }

  rows<P extends object, R>(op: Operation<P, R>, params: P): R[] {
    const [statement, sql] = this.prepare(op);
    return statement.all(...sql.values(params)) as R[];
  }

  first<P extends object, R>(op: Operation<P, R>, params: P): R | undefined {
    const [statement, sql] = this.prepare(op);
    return statement.get(...sql.values(params)) as R | undefined;
  }

  /** Runs a statement that returns no rows; the number of rows it changed. */
  changes<P extends object>(op: Operation<P, unknown>, params: P): number {
    const [statement, sql] = this.prepare(op);
    return statement.run(...sql.values(params));
  }

  /** Every body in one transaction, atomic or not: one commit, and nothing can interleave anyway. */
  async steps<T>(_atomic: boolean, body: () => Steps<T>): Promise<T> {
    return this.transactionOf(body());
  }

  async migrate(): Promise<number[]> {
    this.database.exec(createVersionTable.on('sqlite').text);
    const applied: number[] = [];
    for (const step of migrationSteps('sqlite')) {
      const done = this.database.transaction(() => {
        if (this.first(isApplied, { version: step.version })) return false;
        for (const ddl of step.statements) this.database.exec(ddl);
        this.changes(recordApplied, { version: step.version, appliedAt: Date.now() });
        return true;
      })();
      if (done) applied.push(step.version);
    }
    return applied;
  }

  insertTask(task: NewTask): Promise<InsertOutcome> {
    return this.inserts.add(task);
  }

  async claimTasks(workerId: string, now: number, leaseUntil: number, limit: number, skipKeys: readonly string[] = []): Promise<ClaimedTask[]> {
    return this.claimBatch(workerId, now, leaseUntil, limit, skipKeys);
  }

  async claimTaskById(id: string, workerId: string, now: number, leaseUntil: number): Promise<ClaimedTask | undefined> {
    const row = this.first(HOT_PATHS.claimById, { id, owner: workerId, now, leaseUntil });
    return row ? toClaimedTask(row) : undefined;
  }

  complete(id: string, attempt: number, outputs: readonly TaskOutput[], now: number, usage: TaskUsage): Promise<boolean> {
    return this.settles.add({ to: 'completed', id, attempt, now, outputs: JSON.stringify(outputs), ...usage });
  }

  fail(id: string, attempt: number, error: TaskError, now: number): Promise<boolean> {
    return this.settles.add({ to: 'failed', id, attempt, now, error: JSON.stringify(error) });
  }

  async release(id: string, attempt: number): Promise<boolean> {
    return this.changes(release, { id, attempt }) === 1;
  }

  /** No job queue on SQLite: workers find runnable tasks by polling the table. */
  async requeueStranded(): Promise<string[]> {
    return [];
  }

  async saveUpstream(id: string, attempt: number, step: UpstreamStep): Promise<boolean> {
    return this.changes(saveUpstream, upstreamSaveParams(id, attempt, step)) === 1;
  }

  async markSubmitting(id: string, attempt: number, step: UpstreamStep, limits: SubmitLimits): Promise<'marked' | 'full' | 'lost'> {
    // One writer, and the driver runs this to the end: the check and the write cannot interleave.
    if (!this.slotFree(step.channel, limits)) return 'full';
    return this.changes(saveUpstream, upstreamSaveParams(id, attempt, step)) === 1 ? 'marked' : 'lost';
  }

  async hasSlot(channel: string, limits: SubmitLimits): Promise<boolean> {
    return this.slotFree(channel, limits);
  }

  /** The channel's slot counters and waiting keys, through the rule of slot-share.ts. */
  private slotFree(channel: string, limits: SubmitLimits): boolean {
    const held = new Map(this.rows(HOT_PATHS.channelHolders, { channel }).map((row) => [row.owner, num(row.held)]));
    if (slotsHeld(held) >= limits.maxInFlight) return false;
    // A key holding no slot is below any share: the waiting keys need not be read.
    if ((held.get(limits.owner) ?? 0) === 0) return true;
    const waiting = this.rows(HOT_PATHS.channelWaitingKeys, { channel, cap: waitingKeysCap(limits.maxInFlight) }).map((row) => row.owner);
    return mayTakeSlot(limits, { held, waiting }, limits.owner);
  }

  async close(): Promise<void> {
    this.database.close();
  }
}
