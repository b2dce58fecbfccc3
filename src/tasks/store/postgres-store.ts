import { sql, type Kysely, type RawBuilder } from 'kysely';
import pg from 'pg';
import type { ClaimedTask, NewTask, TaskOutput } from '../types.js';
import { GroupCommit } from './group-commit.js';
import { KyselyTaskStore } from './kysely-store.js';
import { TASK_COLUMNS, toClaimedTask, type ClaimedRow } from './rows.js';
import type { Database } from './schema.js';
import type { JobQueueSql } from './store.js';

/**
 * What a claim returns, listed: a prepared statement returning `t.*` would fail ("cached plan
 * must not change result type") once another process's migration adds a column.
 */
const CLAIMED_COLUMNS = sql.raw([...TASK_COLUMNS, 'params', 'lease_owner'].map((column) => `t.${column}`).join(', '));

/**
 * The store on PostgreSQL: the shared queries (KyselyTaskStore), except on the pipeline's hot
 * path. There each statement costs a round trip and a commit, and in the PostgreSQL pipeline of
 * `npm run bench` (2 cores shared with the server) that per-statement cost (client writes,
 * server wake-ups, parse and plan, WAL flush), not the rows, was what the database spent its
 * time on.
 * So, with the statements prepared once per connection (named; the batches' arrays keep their
 * text fixed), and grouped (GroupCommit: one statement in flight, carrying the calls
 * that came while the previous one ran):
 * - creations: the rows and their jobs (`jobs.enqueueRows`) in one INSERT ... RETURNING that
 *   feeds add_jobs, atomic without BEGIN/COMMIT round trips;
 * - claims by id, and completions: one UPDATE each, over `unnest` of the callers' arguments.
 *
 * Each row keeps the guard of its single-row form (claim: queued, or processing with an expired
 * lease; complete: `status = 'processing' AND attempt = ?`), and each caller learns from the rows
 * RETURNING gives back whether its own transition took effect, so batching changes what a round
 * trip carries, not what any task may do. Ids are sorted, so that batches that overlap (workers
 * racing on a taken-over task) lock their rows in one order rather than into a deadlock (should
 * PostgreSQL still report one, the rows are tried again alone), and a duplicate within a batch
 * gets nothing (it could not have won anyway).
 */
export class PostgresTaskStore extends KyselyTaskStore {
  private readonly claims = new GroupCommit<ClaimRequest, ClaimedTask | undefined>((batch) => this.claimBatch(batch), refusedByServer);
  private readonly completions = new GroupCommit<CompleteRequest, boolean>((batch) => this.completeBatch(batch), refusedByServer);
  constructor(
    private readonly pg: Kysely<Database>,
    /** The pool under `pg`: Kysely cannot name (prepare) a statement. */
    private readonly pool: pg.Pool,
    private readonly queue?: JobQueueSql,
  ) {
    super(pg, 'postgres', undefined, queue);
  }

  /** Runs `query` as a prepared statement named `name` (one text per name, always). */
  private async prepared<R extends object>(name: string, query: RawBuilder<R>): Promise<R[]> {
    const compiled = query.compile(this.pg);
    const result = await this.pool.query<R & pg.QueryResultRow>({ name: `mediagate/${name}`, text: compiled.sql, values: [...compiled.parameters] });
    return result.rows;
  }

  protected override async writeTasks(tasks: readonly NewTask[]): Promise<void> {
    const inserted = sql<{ id: string; created_at: string }>`
      INSERT INTO tasks (id, kind, model, owner, status, created_at, outputs, params)
      SELECT n.id, n.kind, n.model, n.owner, 'queued', n.created_at, '[]', n.params
        FROM unnest(${tasks.map((t) => t.id)}::text[], ${tasks.map((t) => t.kind)}::text[], ${tasks.map((t) => t.model)}::text[],
                    ${tasks.map((t) => t.owner)}::text[], ${tasks.map((t) => t.createdAt)}::bigint[],
                    ${tasks.map((t) => JSON.stringify(t.params))}::text[])
             AS n(id, kind, model, owner, created_at, params)
      RETURNING id, created_at`;
    if (!this.queue) {
      await this.prepared('insert-tasks', inserted);
      return;
    }
    // One statement: the jobs read the rows the INSERT returns, and both commit or neither does.
    await this.prepared('insert-tasks-with-jobs', sql<{ count: string }>`WITH inserted AS (${inserted}) SELECT count(*) FROM ${this.queue.enqueueRows(sql`inserted`)}`);
  }

  override claimTaskById(id: string, workerId: string, now: number, leaseUntil: number): Promise<ClaimedTask | undefined> {
    return this.claims.add({ id, workerId, now, leaseUntil });
  }

  override complete(id: string, attempt: number, outputs: readonly TaskOutput[], now: number): Promise<boolean> {
    return this.completions.add({ id, attempt, outputs: JSON.stringify(outputs), now });
  }

  private async claimBatch(batch: readonly ClaimRequest[]): Promise<(ClaimedTask | undefined)[]> {
    const unique = new Set(firstOfEach(batch, (request) => request.id));
    const ordered = [...unique];
    // The SET reads the row as it was (`t.status` is the old status): as claimSet in kysely-store.ts.
    const rows = await this.prepared(
      'claim-by-id',
      sql<ClaimedRow>`
      UPDATE tasks t
         SET status = 'processing',
             attempt = t.attempt + 1,
             lease_owner = c.owner,
             lease_expires_at = c.lease_until,
             started_at = COALESCE(t.started_at, c.now),
             progress = COALESCE(t.progress, 0),
             interruptions = t.interruptions + CASE WHEN t.status = 'processing' THEN 1 ELSE 0 END
        FROM unnest(${ordered.map((r) => r.id)}::text[], ${ordered.map((r) => r.workerId)}::text[],
                    ${ordered.map((r) => r.now)}::bigint[], ${ordered.map((r) => r.leaseUntil)}::bigint[])
             AS c(id, owner, now, lease_until)
       WHERE t.id = c.id
         AND (t.status = 'queued' OR (t.status = 'processing' AND t.lease_expires_at < c.now))
   RETURNING ${CLAIMED_COLUMNS}`,
    );
    const won = new Map(rows.map((row) => [row.id, row]));
    return batch.map((request) => {
      const row = unique.has(request) ? won.get(request.id) : undefined;
      return row ? toClaimedTask(row) : undefined;
    });
  }

  private async completeBatch(batch: readonly CompleteRequest[]): Promise<boolean[]> {
    // By attempt as well: a stale attempt's completion and the current one's may share a batch.
    const unique = new Set(firstOfEach(batch, (request) => `${request.attempt}:${request.id}`));
    const ordered = [...unique];
    const rows = await this.prepared(
      'complete',
      sql<{ id: string; attempt: number }>`
      UPDATE tasks t
         SET status = 'completed', progress = 100, completed_at = c.now, outputs = c.outputs, lease_expires_at = NULL
        FROM unnest(${ordered.map((r) => r.id)}::text[], ${ordered.map((r) => r.attempt)}::int[],
                    ${ordered.map((r) => r.outputs)}::text[], ${ordered.map((r) => r.now)}::bigint[])
             AS c(id, attempt, outputs, now)
       WHERE t.id = c.id AND t.status = 'processing' AND t.attempt = c.attempt
   RETURNING t.id, t.attempt`,
    );
    const won = new Set(rows.map((row) => `${row.attempt}:${row.id}`));
    return batch.map((request) => unique.has(request) && won.has(`${request.attempt}:${request.id}`));
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
