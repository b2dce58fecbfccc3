import { operation } from '../dialect.js';
import type { JobQueueSql } from '../dialect.js';
import { KEY_GUARD_BATCH, type BatchGuard } from './key-guard.js';

/** The columns a new task sets; the others keep their defaults. */
export const INSERT = `INSERT INTO tasks (id, kind, model, owner, status, created_at, outputs, params, channel, next_check_at, fair_rank, reserved_cost, input_bytes, trace_context)`;

/**
 * Fair order between keys (start-time fair queueing, migration 7): a new task's rank is one more
 * than its owner's highest active rank in the channel, and at least the front of the channel's
 * queue (its lowest queued rank). A key that floods gets ranks 0..N; a key that arrives later
 * starts at the front, so claims (ORDER BY fair_rank, created_at) take the keys in turn.
 * `owner` and `channel` are SQL expressions (placeholders, or the batch's columns).
 */
export function ownerNextRank(owner: string, channel: string): string {
  // ORDER BY ... LIMIT 1 rather than max(): one index entry read, not the owner's whole backlog.
  return `(SELECT r.fair_rank + 1 FROM tasks AS r WHERE r.owner = ${owner} AND r.channel = ${channel} AND r.status IN ('queued', 'processing')
            ORDER BY r.fair_rank DESC LIMIT 1)`;
}

export function queueFront(channel: string): string {
  return `(SELECT q.fair_rank FROM tasks AS q WHERE q.channel = ${channel} AND q.status = 'queued' ORDER BY q.fair_rank LIMIT 1)`;
}

/** One task's row as SQLite writes it (sql/hot-paths.ts, insertRows), its fair rank read before (batchRanks). */
export interface InsertTaskParams {
  id: string;
  kind: string;
  model: string;
  owner: string;
  createdAt: number;
  params: string;
  channel: string;
  fairRank: number;
  reservedCost: number;
  inputBytes: number;
  traceContext: string | null;
}

/**
 * The values of one new task's row, in INSERT's column order, its fair rank given: SQLite reads
 * a batch's ranks once per key and channel before its rows (HOT_PATHS.batchRanks), as
 * PostgreSQL's batch statement does in its own (rankedRows).
 */
export const NEW_ROW_VALUES = `@id, @kind, @model, @owner, 'queued', @createdAt, '[]', @params, @channel,
                           CASE WHEN @channel = 'sandbox' THEN NULL ELSE @createdAt END, @fairRank, @reservedCost, @inputBytes, @traceContext`;

export interface InsertTasksParams {
  ids: string[];
  kinds: string[];
  models: string[];
  owners: string[];
  createdAts: number[];
  params: string[];
  channels: string[];
  /** Micro-units reserved against each task's key (0 without a budget). */
  reservedCosts: number[];
  /** Per task: the bytes of its stored inputs (reserved for its owner in the same transaction). */
  inputBytes: number[];
  /** Per task: its trace context (a W3C traceparent), null without tracing. */
  traceContexts: (string | null)[];
}

/**
 * A batch's rows (`relation`, with an `ord` column giving their order) with their fair ranks:
 * the tasks of one key in one batch get consecutive ranks from that key's next rank. `front`
 * is the queue's front when the batch was inserted: a job's priority is its rank's distance
 * from it (sources/graphile.ts).
 */
export function rankedRows(relation: string): string {
  return `SELECT n.*, b.front,
             b.base + row_number() OVER (PARTITION BY n.owner, n.channel ORDER BY n.ord) - 1 AS fair_rank
        FROM ${relation} AS n
             CROSS JOIN LATERAL (SELECT COALESCE(${queueFront('n.channel')}, 0) AS front,
                                        GREATEST(${ownerNextRank('n.owner', 'n.channel')}, ${queueFront('n.channel')}, 0) AS base) AS b`;
}

/** The batch's rows, in the order given (`ord`), then ranked (rankedRows), inserted where `guard` lets them. */
export function batchWith(guard?: BatchGuard): string {
  return `n AS (SELECT * FROM unnest(@ids::text[], @kinds::text[], @models::text[], @owners::text[], @createdAts::bigint[], @params::text[], @channels::text[],
                                  @reservedCosts::bigint[], @inputBytes::bigint[], @traceContexts::text[])
             WITH ORDINALITY AS n(id, kind, model, owner, created_at, params, channel, reserved_cost, input_bytes, trace_context, ord)),${guard ? `\n      ${guard.ctes},` : ''}
      ranked AS (${rankedRows('n')}),
      inserted AS (${INSERT}
      SELECT n.id, n.kind, n.model, n.owner, 'queued', n.created_at, '[]', n.params, n.channel,
             CASE WHEN n.channel = 'sandbox' THEN NULL ELSE n.created_at END, n.fair_rank, n.reserved_cost, n.input_bytes, n.trace_context
        FROM ranked AS n${guard ? `\n       WHERE ${guard.where}` : ''}
   RETURNING id, created_at, channel, owner)`;
}

export const batchCtes = batchWith();

/**
 * The renders among the rows `inserted` returned, as JobQueueSql.addJobs reads them: a job's
 * priority is its task's distance from the queue's front at insert (capped to what a job's
 * priority holds), so graphile-worker, which runs jobs by priority then run_at, takes the keys
 * in turn as the claims on SQLite do.
 */
export function rendersOf(inserted: string, ranked: string): string {
  return `SELECT i.id, i.created_at, i.owner, LEAST(r.fair_rank - r.front, 32767) AS priority, ${fetchesInputs('r.params')} AS fetches_inputs
            FROM ${inserted} AS i JOIN ${ranked} AS r ON r.id = i.id WHERE i.channel = 'sandbox'`;
}

/**
 * Whether a task's params (JSON text as stored) hold an `https://` image input, which the worker
 * pool fetches before the render (its fetch stage): a substring test, not a JSON parse of what
 * may be megabytes. Exact for the top-level fields (JSON.stringify writes no spaces; a quote
 * inside a string is escaped, so a prompt cannot fake one); a job's flag (sources/graphile.ts).
 */
export function fetchesInputs(params: string): string {
  return `(position('"image":"https://' in ${params}) > 0 OR position('"end_image":"https://' in ${params}) > 0)`;
}

/**
 * The same with their jobs: the jobs read the rows the INSERT returns; both commit or neither.
 * Only renders (channel 'sandbox') get a job: the upstream scheduler finds the others by
 * next_check_at.
 */
export const insertTasksWithJobs = (jobs: JobQueueSql) =>
  operation<InsertTasksParams, { n: string }>(
    'insert-tasks-with-jobs',
    () => `WITH ${batchCtes},
           renders AS (${rendersOf('inserted', 'ranked')})
      SELECT count(*) AS n FROM ${jobs.addJobs('renders')}`,
    ['postgres'],
  );

/**
 * The guarded batch (hot-paths.ts, insertTasksGuarded) with its jobs: how many tasks went in
 * (all of the batch or none), their jobs added in the same statement.
 */
export const insertTasksGuardedWithJobs = (jobs: JobQueueSql) =>
  operation<InsertTasksParams & { reserves: 0 | 1; inFlight: number | null }, { inserted: string }>(
    'insert-tasks-guarded-with-jobs',
    () => `WITH ${batchWith(KEY_GUARD_BATCH)},
           renders AS (${rendersOf('inserted', 'ranked')})
      SELECT (SELECT count(*) FROM inserted) AS inserted, (SELECT count(*) FROM ${jobs.addJobs('renders')}) AS jobs`,
    ['postgres'],
  );
