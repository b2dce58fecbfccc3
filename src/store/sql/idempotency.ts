import { rankedRows, rendersOf, type InsertTasksParams } from './tasks-insert.js';
import { operation } from '../dialect.js';
import type { JobQueueSql } from '../dialect.js';
import type { IdempotencyKeyRow } from '../rows.js';

/**
 * Takes a key for a new task: inserts it, or replaces a row that has expired. 0 rows changed
 * means a live row holds the key (the primary key decides between processes). Run in the same
 * transaction as the task's insert (SQLite's group commit).
 */
export const takeIdempotencyKey = operation<{
  owner: string;
  key: string;
  kind: string;
  requestHash: string;
  taskId: string;
  createdAt: number;
  expiredBefore: number;
}>(
  'take-idempotency-key',
  () => `INSERT INTO idempotency_keys (owner, key, kind, request_hash, task_id, created_at)
       VALUES (@owner, @key, @kind, @requestHash, @taskId, @createdAt)
  ON CONFLICT (owner, key) DO UPDATE SET kind = excluded.kind, request_hash = excluded.request_hash,
       task_id = excluded.task_id, created_at = excluded.created_at
       WHERE idempotency_keys.created_at < @expiredBefore`,
  ['sqlite'],
);

/** The columns of insert-tasks (tasks-insert.ts), with each task's key. */
export interface InsertKeyedTasksParams extends InsertTasksParams {
  /** Per task: its idempotency key, or '' for none. */
  keys: string[];
  hashes: string[];
  expiredBefore: number;
}

/**
 * PostgreSQL's group commit of creations when some carry an idempotency key: the keys are
 * taken (or expired rows replaced) and only the tasks whose key was taken, or that have none,
 * are inserted, in one statement. A key held by another process's uncommitted insert waits for
 * it, then loses. Returns the ids inserted.
 */
function keyedSource(withJobs: ((relation: string) => string) | undefined): string {
  return `WITH n AS (
        SELECT * FROM unnest(@ids::text[], @kinds::text[], @models::text[], @owners::text[], @createdAts::bigint[], @params::text[], @channels::text[],
                             @reservedCosts::bigint[], @inputBytes::bigint[], @traceContexts::text[], @keys::text[], @hashes::text[])
               WITH ORDINALITY AS n(id, kind, model, owner, created_at, params, channel, reserved_cost, input_bytes, trace_context, key, hash, ord)),
      keyed AS (
        INSERT INTO idempotency_keys (owner, key, kind, request_hash, task_id, created_at)
        SELECT owner, key, kind, hash, id, created_at FROM n WHERE key <> ''
        ON CONFLICT (owner, key) DO UPDATE SET kind = excluded.kind, request_hash = excluded.request_hash,
             task_id = excluded.task_id, created_at = excluded.created_at
             WHERE idempotency_keys.created_at < @expiredBefore
        RETURNING task_id),
      ranked AS (${rankedRows('n')}),
      inserted AS (
        INSERT INTO tasks (id, kind, model, owner, status, created_at, outputs, params, channel, next_check_at, fair_rank, reserved_cost, input_bytes, trace_context)
        SELECT id, kind, model, owner, 'queued', created_at, '[]', params, channel,
               CASE WHEN channel = 'sandbox' THEN NULL ELSE created_at END, fair_rank, reserved_cost, input_bytes, trace_context FROM ranked
         WHERE key = '' OR id IN (SELECT task_id FROM keyed)
        RETURNING id, created_at, channel, owner)${withJobs ? `,\n      renders AS (${rendersOf('inserted', 'ranked')}),\n      jobs AS (SELECT 1 FROM ${withJobs('renders')})` : ''}
  SELECT id${withJobs ? ', (SELECT count(*) FROM jobs) AS added' : ''} FROM inserted`;
}

export const insertKeyedTasks = operation<InsertKeyedTasksParams, { id: string }>('insert-keyed-tasks', () => keyedSource(undefined), ['postgres']);

export const insertKeyedTasksWithJobs = (jobs: JobQueueSql) =>
  operation<InsertKeyedTasksParams, { id: string }>('insert-keyed-tasks-with-jobs', () => keyedSource((relation) => jobs.addJobs(relation)), ['postgres']);

export const findIdempotencyKey = operation<{ owner: string; key: string }, IdempotencyKeyRow>(
  'find-idempotency-key',
  () => `SELECT kind, request_hash, task_id, created_at FROM idempotency_keys WHERE owner = @owner AND key = @key`,
);

/**
 * Deletes up to `limit` expired keys (a bounded sweep). The outer WHERE repeats the expiry: a
 * key replaced in place by a create (take-idempotency-key) while the sweep runs keeps its
 * (owner, key), and PostgreSQL re-checks only the outer condition on the new row version.
 */
export const sweepIdempotencyKeys = operation<{ expiredBefore: number; limit: number }>(
  'sweep-idempotency-keys',
  () => `DELETE FROM idempotency_keys WHERE created_at < @expiredBefore AND (owner, key) IN
         (SELECT owner, key FROM idempotency_keys WHERE created_at < @expiredBefore LIMIT @limit)`,
);
