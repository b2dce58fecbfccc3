import { operation } from '../dialect.js';
import { TASK_COLUMNS, columns, type CountRow, type TaskRow } from '../rows.js';

/** A task as its owner sees it: another owner's task is not found. */
export const getTask = operation<{ id: string; owner: string }, TaskRow>(
  'get-task',
  () => `SELECT ${columns(TASK_COLUMNS)} FROM tasks WHERE id = @id AND owner = @owner`,
);

export const countByStatus = operation<object, { status: string; n: number | string }>(
  'count-by-status',
  () => `SELECT status, count(*) AS n FROM tasks GROUP BY status`,
);

/**
 * An owner's queued and processing tasks, counted up to `cap` (the tasks-in-flight limit: the
 * check only needs to know whether the owner is at it), so the count reads at most `cap` entries
 * of the owner's part of tasks_owner_rank, whatever the owner's backlog.
 */
export const countActiveTasks = operation<{ owner: string; cap: number }, CountRow>(
  'count-active-tasks',
  () => `SELECT count(*) AS n FROM (SELECT 1 FROM tasks WHERE owner = @owner AND status IN ('queued', 'processing') LIMIT @cap) AS active`,
);

/** Distinct lease owners of processing tasks (crash recovery looks for dead ones). */
export const leaseOwners = operation<object, { lease_owner: string | null }>(
  'lease-owners',
  () => `SELECT DISTINCT lease_owner FROM tasks WHERE status = 'processing'`,
);
