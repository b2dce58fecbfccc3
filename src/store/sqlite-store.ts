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
import { HOT_PATHS } from './sql/hot-paths.js';
import { releaseInputBytes } from './sql/inputs.js';
import { inFlightLimitOf, type KeyGuardRow } from './sql/key-guard.js';
import type { InsertTaskParams } from './sql/tasks-insert.js';
import { releaseReservation } from './sql/usage.js';
import { saveUpstream } from './sql/upstream.js';
import { mayTakeSlot, slotsHeld, waitingKeysCap } from './slot-share.js';
import type { Store } from './store.js';
import { drive, execute, type Runner, type Steps } from './table.js';

/**
 * Where statement journals and temporary tables live outside migrations. A statement that changes
 * many rows inside a transaction (a batch's multi-row INSERT, a claim or settle batch) keeps the
 * original of every page it changes in a statement journal, which SQLite spills to a new
 * temporary file once it passes 64 KiB: an open, an unlink and the journal's writes for nearly
 * every group commit (seen with strace under the bench's creates). In memory it costs a copy of
 * those pages and no system call. Migrations, which may rewrite a whole table, switch to a file
 * while they run (migrate).
 */
const HOT_TEMP_STORE = 'MEMORY';

/**
 * Rows one INSERT carries at most: a group commit's batch is what one turn of the event loop
 * brought (a few dozen creates under load, up to group-commit.ts's 1,000), and each number of
 * rows up to this is a statement prepared once and kept. 12 parameters a row: 768 a statement,
 * far below SQLite's limit of 32,766.
 */
const ROWS_PER_INSERT = 64;

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
 * (`npx tsx bench/insert.ts`: about 70 µs of CPU a create alone, 11 µs in commits of 35).
 */
export class SqliteStore extends TableStore implements Store, Runner {
  readonly dialect = 'sqlite';
  /** Which SQLite library this store's connection runs on (sqlite-driver.ts). */
  readonly driver: SqliteDriverName;
  private readonly statements = new Map<Sql<never, unknown>, SqliteStatement>();
  /** insertRows' statements by their number of rows (1 to ROWS_PER_INSERT). */
  private readonly multiRowInserts = new Map<number, SqliteStatement>();
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
    database.exec(`PRAGMA temp_store = ${HOT_TEMP_STORE}`);
    // One transaction per batch (group-commit.ts), begun with the write lock: insertAll reads
    // the guards and the ranks before it writes the rows.
    this.insertBatch = database.transaction((tasks: readonly NewTask[]) => this.insertAll(tasks), 'immediate');
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
   * An insert batch, in its one transaction. Per task, in order: the input bytes' reservation
   * (guarded by the limit), the key guard (its active tasks, with the ones this batch took so
   * far, against its in-flight limit; whether it has a budget now), the budget reservation
   * (guarded), the idempotency key; a refusal gives back what was reserved before it. The order
   * is PostgreSQL's (postgres-store.ts), so a create over several limits gets the same answer on
   * both stores. The guard rows are read once for the batch's guarded keys (guardKeys). Then
   * the accepted tasks' fair ranks, read once per key and channel (batchRanks), their rows in
   * multi-row statements (insertRows), and each key's new tasks counted into it once
   * (countInserted). A create is the hottest write: a statement per row, with its rank
   * subqueries and its guard, was most of a create's insert (docs/benchmarks.md).
   */
  private insertAll(tasks: readonly NewTask[]): InsertOutcome[] {
    const guarded = new Set<string>();
    for (const task of tasks) if (task.reserve !== undefined || task.inFlightLimit !== undefined) guarded.add(task.owner);
    const keys = new Map<string, KeyGuardRow>();
    if (guarded.size > 0) for (const key of this.rows(HOT_PATHS.guardKeys, { ids: [...guarded] })) keys.set(key.id, key);
    const counted = new Map<string, number>();
    const rows: InsertTaskParams[] = [];
    const outcomes = tasks.map((task): InsertOutcome => {
      const pending = counted.get(task.owner) ?? 0;
      const admitted = this.admit(task, keys.get(task.owner), pending);
      if (typeof admitted === 'string') return admitted;
      rows.push(admitted);
      counted.set(task.owner, pending + 1);
      return 'inserted';
    });
    if (rows.length > 0) {
      this.rank(rows);
      this.insertRows(rows);
    }
    for (const [owner, count] of counted) this.changes(HOT_PATHS.countInserted, { owner, count });
    return outcomes;
  }

  /** One task's reservations and guard (insertAll): its row to insert, or why it is refused. */
  private admit(task: NewTask, key: KeyGuardRow | undefined, pending: number): InsertTaskParams | Exclude<InsertOutcome, 'inserted'> {
    const { owner, idempotency, reserve, inFlightLimit } = task;
    const inputBytes = task.inputBytes ?? 0;
    if (inputBytes > 0 && this.changes(HOT_PATHS.reserveInputBytes, { owner, bytes: inputBytes, limit: task.inputLimit ?? 0 }) === 0) {
      return 'inputs_over_limit';
    }
    const giveInputsBack = (): void => {
      if (inputBytes > 0) this.changes(releaseInputBytes, { owner, bytes: inputBytes });
    };
    if (key && inFlightLimit !== undefined) {
      const limit = inFlightLimitOf(key, inFlightLimit);
      if (limit > 0 && Number(key.active_tasks) + pending >= limit) {
        giveInputsBack();
        return 'tasks_over_limit';
      }
    }
    const reserved = key && reserve !== undefined && Number(key.budgeted) === 1 ? reserve : undefined;
    if (reserved !== undefined && this.changes(HOT_PATHS.reserveBudget, { id: owner, amount: reserved, now: task.createdAt }) === 0) {
      giveInputsBack();
      return 'budget_exceeded';
    }
    if (idempotency && this.changes(takeIdempotencyKey, { ...idempotency, owner, kind: task.kind, taskId: task.id, createdAt: task.createdAt }) === 0) {
      if (reserved !== undefined) this.changes(releaseReservation, { id: owner, amount: reserved });
      giveInputsBack();
      return 'key_taken';
    }
    return {
      id: task.id,
      kind: task.kind,
      model: task.model,
      owner,
      createdAt: task.createdAt,
      params: JSON.stringify(task.params),
      channel: task.channel ?? 'sandbox',
      fairRank: 0,
      reservedCost: reserved ?? 0,
      inputBytes,
      traceContext: task.traceContext ?? null,
    };
  }

  /** The rows' fair ranks: each key's first in a channel at the rank batchRanks reads, its next ones following on. */
  private rank(rows: InsertTaskParams[]): void {
    const next = new Map<string, number>();
    const pairs: [string, string][] = [];
    // A key and a channel as one map key; no key id or channel name holds a newline.
    const pairOf = (row: InsertTaskParams): string => `${row.owner}\n${row.channel}`;
    for (const row of rows) {
      const pair = pairOf(row);
      if (next.has(pair)) continue;
      next.set(pair, 0);
      pairs.push([row.owner, row.channel]);
    }
    for (const found of this.rows(HOT_PATHS.batchRanks, { pairs })) next.set(`${found.owner}\n${found.channel}`, Number(found.base));
    for (const row of rows) {
      const pair = pairOf(row);
      const rank = next.get(pair) ?? 0;
      row.fairRank = rank;
      next.set(pair, rank + 1);
    }
  }

  /** Multi-row INSERTs of insertRows' one-row form, ROWS_PER_INSERT rows at most each. */
  private insertRows(rows: readonly InsertTaskParams[]): void {
    const sql = HOT_PATHS.insertRows.on('sqlite');
    for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
      const chunk = rows.slice(start, start + ROWS_PER_INSERT);
      let statement = this.multiRowInserts.get(chunk.length);
      if (!statement) {
        const tuple = sql.text.slice(sql.text.indexOf(' VALUES ') + ' VALUES '.length);
        statement = this.database.prepare(`${sql.text}${`, ${tuple}`.repeat(chunk.length - 1)}`);
        this.multiRowInserts.set(chunk.length, statement);
      }
      const values: unknown[] = [];
      for (const row of chunk) for (const value of sql.values(row)) values.push(value);
      statement.run(...values);
    }
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
    // A migration's UPDATE of every task would hold the original of every page of the table in
    // a statement journal: on disk, not in memory, for these one-off statements (HOT_TEMP_STORE).
    this.database.exec('PRAGMA temp_store = FILE');
    try {
      for (const step of migrationSteps('sqlite')) {
        const done = this.database.transaction(() => {
          if (this.first(isApplied, { version: step.version })) return false;
          for (const ddl of step.statements) this.database.exec(ddl);
          this.changes(recordApplied, { version: step.version, appliedAt: Date.now() });
          return true;
        })();
        if (done) applied.push(step.version);
      }
    } finally {
      this.database.exec(`PRAGMA temp_store = ${HOT_TEMP_STORE}`);
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
