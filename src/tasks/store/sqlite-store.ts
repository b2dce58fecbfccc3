import type { Database as BetterSqlite3Database, Statement } from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { ClaimedTask, NewTask, Task, TaskError, TaskOutput } from '../types.js';
import { GroupCommit } from './group-commit.js';
import { KyselyTaskStore, inClaimOrder } from './kysely-store.js';
import { TASK_COLUMNS, toClaimedTask, toTask, type ClaimedRow, type TaskRow } from './rows.js';
import type { Database } from './schema.js';

/** A settle (processing -> completed | failed) waiting for its group commit. */
type Settle =
  | { readonly to: 'completed'; readonly id: string; readonly attempt: number; readonly now: number; readonly outputs: string }
  | { readonly to: 'failed'; readonly id: string; readonly attempt: number; readonly now: number; readonly error: string };

const COLUMNS = TASK_COLUMNS.join(', ');

/** The SET of both claims (as in kysely-store.ts): next attempt, a lease, started and progress kept. */
const CLAIM_SET = `status = 'processing',
  attempt = attempt + 1,
  lease_owner = @owner,
  lease_expires_at = @leaseUntil,
  started_at = COALESCE(started_at, @now),
  progress = COALESCE(progress, 0),
  interruptions = interruptions + CASE WHEN status = 'processing' THEN 1 ELSE 0 END`;
const RUNNABLE = `(status = 'queued' OR (status = 'processing' AND lease_expires_at < @now))`;
/** Every transition a worker makes is fenced by status and attempt; 0 changed rows = it lost. */
const FENCE = `WHERE id = @id AND status = 'processing' AND attempt = @attempt`;

type StatementName =
  | 'getTask'
  | 'findKey'
  | 'insertTask'
  | 'claimTakeovers'
  | 'claimQueued'
  | 'claimById'
  | 'heartbeat'
  | 'setProgress'
  | 'complete'
  | 'fail';

/**
 * The embedded store: the same queries as the PostgreSQL one (KyselyTaskStore), with the
 * request path and the worker's transitions run as prepared better-sqlite3 statements. Through
 * Kysely each of them paid for an async connection mutex and several promise turns around a
 * synchronous call: a status read took 7.4 µs in process, 4.3 µs of it SQLite
 * (`npm run bench`, docs/architecture.md#performance).
 *
 * These statements run on Kysely's one connection. Kysely holds that connection across the
 * awaits of a transaction, and a statement run in between would join the transaction (and be
 * lost with its rollback), so each fast method defers to the Kysely path whenever a
 * transaction is open. Only start-up code opens one on SQLite.
 */
export class SqliteTaskStore extends KyselyTaskStore {
  private prepared: Record<StatementName, Statement> | undefined;
  private insertBatch: ((tasks: readonly NewTask[]) => void) | undefined;
  /** Settles of one event-loop turn in one transaction: a busy pool settles many tasks a turn. */
  private readonly settles = new GroupCommit<Settle, boolean>((batch) => this.writeSettles(batch), () => true);
  private settleBatch: ((batch: readonly Settle[]) => boolean[]) | undefined;
  private claimBatch: ((owner: string, now: number, leaseUntil: number, limit: number) => ClaimedRow[]) | undefined;

  constructor(
    private readonly database: BetterSqlite3Database,
    db: Kysely<Database>,
  ) {
    super(db, 'sqlite');
  }

  /** Prepared on first use: the tables exist only once migrate() has run. */
  private get statements(): Record<StatementName, Statement> {
    if (this.prepared) return this.prepared;
    const database = this.database;
    const prepare = (text: string): Statement => database.prepare(text);
    this.prepared = {
      getTask: prepare(`SELECT ${COLUMNS} FROM tasks WHERE id = ? AND owner = ?`),
      findKey: prepare(`SELECT id, revoked_at FROM api_keys WHERE hash = ?`),
      insertTask: prepare(
        `INSERT INTO tasks (id, kind, model, owner, status, created_at, outputs, params) VALUES (?, ?, ?, ?, 'queued', ?, '[]', ?)`,
      ),
      // SQLite runs one writer at a time, so picking the rows and updating them is one atomic step.
      claimTakeovers: prepare(
        `UPDATE tasks SET ${CLAIM_SET}
          WHERE id IN (SELECT id FROM tasks WHERE status = 'processing' AND lease_expires_at < @now ORDER BY lease_expires_at LIMIT @limit)
            AND status = 'processing' AND lease_expires_at < @now
        RETURNING *`,
      ),
      claimQueued: prepare(
        `UPDATE tasks SET ${CLAIM_SET}
          WHERE id IN (SELECT id FROM tasks WHERE status = 'queued' ORDER BY created_at, id LIMIT @limit) AND status = 'queued'
        RETURNING *`,
      ),
      claimById: prepare(`UPDATE tasks SET ${CLAIM_SET} WHERE id = @id AND ${RUNNABLE} RETURNING *`),
      heartbeat: prepare(`UPDATE tasks SET lease_expires_at = @leaseUntil ${FENCE}`),
      setProgress: prepare(`UPDATE tasks SET progress = @progress ${FENCE} AND (progress IS NULL OR progress < @progress)`),
      // A settled task keeps `lease_owner`: the worker that settled it.
      complete: prepare(
        `UPDATE tasks SET status = 'completed', progress = 100, completed_at = @now, outputs = @outputs, lease_expires_at = NULL ${FENCE}`,
      ),
      fail: prepare(`UPDATE tasks SET status = 'failed', completed_at = @now, error = @error, lease_expires_at = NULL ${FENCE}`),
    };
    return this.prepared;
  }

  /** Whether a prepared statement may run now, outside any Kysely transaction. */
  private get free(): boolean {
    return !this.database.inTransaction;
  }

  protected override async writeTasks(tasks: readonly NewTask[]): Promise<void> {
    if (!this.free) return super.writeTasks(tasks);
    if (!this.insertBatch) {
      const insert = this.statements.insertTask;
      this.insertBatch = this.database.transaction((batch: readonly NewTask[]) => {
        for (const task of batch) insert.run(task.id, task.kind, task.model, task.owner, task.createdAt, JSON.stringify(task.params));
      });
    }
    this.insertBatch(tasks);
  }

  override async getTask(id: string, owner: string): Promise<Task | undefined> {
    if (!this.free) return super.getTask(id, owner);
    const row = this.statements.getTask.get(id, owner) as TaskRow | undefined;
    return row ? toTask(row) : undefined;
  }

  override async findKeyByHash(hash: string): Promise<{ id: string; revoked: boolean } | undefined> {
    if (!this.free) return super.findKeyByHash(hash);
    const row = this.statements.findKey.get(hash) as { id: string; revoked_at: number | null } | undefined;
    return row ? { id: row.id, revoked: row.revoked_at !== null } : undefined;
  }

  override async claimTasks(workerId: string, now: number, leaseUntil: number, limit: number): Promise<ClaimedTask[]> {
    if (!this.free) return super.claimTasks(workerId, now, leaseUntil, limit);
    this.claimBatch ??= this.database.transaction((owner: string, at: number, until: number, most: number) => {
      const takeovers = this.statements.claimTakeovers.all({ owner, now: at, leaseUntil: until, limit: most }) as ClaimedRow[];
      if (takeovers.length >= most) return takeovers;
      const queued = this.statements.claimQueued.all({ owner, now: at, leaseUntil: until, limit: most - takeovers.length }) as ClaimedRow[];
      return [...takeovers, ...queued];
    });
    // One transaction for the batch: a commit (a WAL append) per task was the worker's main write cost.
    return inClaimOrder(this.claimBatch(workerId, now, leaseUntil, limit));
  }

  override async claimTaskById(id: string, workerId: string, now: number, leaseUntil: number): Promise<ClaimedTask | undefined> {
    if (!this.free) return super.claimTaskById(id, workerId, now, leaseUntil);
    const row = this.statements.claimById.get({ id, owner: workerId, now, leaseUntil }) as ClaimedRow | undefined;
    return row ? toClaimedTask(row) : undefined;
  }

  override async heartbeat(id: string, attempt: number, leaseUntil: number): Promise<boolean> {
    if (!this.free) return super.heartbeat(id, attempt, leaseUntil);
    return this.statements.heartbeat.run({ id, attempt, leaseUntil }).changes === 1;
  }

  override async setProgress(id: string, attempt: number, progress: number): Promise<boolean> {
    if (!this.free) return super.setProgress(id, attempt, progress);
    return this.statements.setProgress.run({ id, attempt, progress }).changes === 1;
  }

  override async complete(id: string, attempt: number, outputs: readonly TaskOutput[], now: number): Promise<boolean> {
    return this.settles.add({ to: 'completed', id, attempt, now, outputs: JSON.stringify(outputs) });
  }

  override async fail(id: string, attempt: number, error: TaskError, now: number): Promise<boolean> {
    return this.settles.add({ to: 'failed', id, attempt, now, error: JSON.stringify(error) });
  }

  private async writeSettles(batch: readonly Settle[]): Promise<boolean[]> {
    if (!this.free) {
      const results: boolean[] = [];
      for (const settle of batch) {
        results.push(
          settle.to === 'completed'
            ? await super.complete(settle.id, settle.attempt, JSON.parse(settle.outputs) as TaskOutput[], settle.now)
            : await super.fail(settle.id, settle.attempt, JSON.parse(settle.error) as TaskError, settle.now),
        );
      }
      return results;
    }
    this.settleBatch ??= this.database.transaction((settles: readonly Settle[]) =>
      settles.map((settle) => (settle.to === 'completed' ? this.statements.complete : this.statements.fail).run(settle).changes === 1),
    );
    return this.settleBatch(batch);
  }
}
