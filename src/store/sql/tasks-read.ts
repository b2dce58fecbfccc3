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
 * An owner's queued and processing tasks. One count per status, each with the status as a
 * literal, not a parameter: the planner matches it to the partial index's WHERE (tasks_queued,
 * tasks_leases) and checks the owner on that index's rows only, instead of reading the table.
 */
export const countActiveTasks = operation<{ owner: string }, CountRow>(
  'count-active-tasks',
  () => `SELECT (SELECT count(*) FROM tasks WHERE status = 'queued' AND owner = @owner)
              + (SELECT count(*) FROM tasks WHERE status = 'processing' AND owner = @owner) AS n`,
);

/** Distinct lease owners of processing tasks (crash recovery looks for dead ones). */
export const leaseOwners = operation<object, { lease_owner: string | null }>(
  'lease-owners',
  () => `SELECT DISTINCT lease_owner FROM tasks WHERE status = 'processing'`,
);
