import { bytewise, operation } from '../dialect.js';
import { TASK_CHANNEL } from '../migrations.js';
import { TASK_COLUMNS, columns, type TaskRow } from '../rows.js';

/**
 * What the OpenAI-compatible front doors read beyond the seed's paths (src/frontdoors/): the task
 * with its parameters (the Video object shows the prompt, the seconds and the size), pages in
 * either order, and the owner's delete of a final task.
 */

/** A task row with its stored parameters (JSON). */
export type TaskParamsRow = TaskRow & { params: string };

/** A task with its parameters, as its owner sees it: another owner's task is not found. */
export const getTaskParams = operation<{ id: string; owner: string }, TaskParamsRow>(
  'get-task-params',
  () => `SELECT ${columns(TASK_COLUMNS)}, params FROM tasks WHERE id = @id AND owner = @owner`,
);

/** One page of an owner's tasks of one family with their parameters, newest first (as list-tasks). */
export const listTaskParamsDesc = operation<{ owner: string; kind: string; after: string; limit: number }, TaskParamsRow>(
  'list-task-params-desc',
  (dialect) => `SELECT ${columns(TASK_COLUMNS)}, params FROM tasks
       WHERE owner = @owner AND kind = @kind AND id ${bytewise(dialect)} < @after
    ORDER BY id ${bytewise(dialect)} DESC LIMIT @limit`,
);

/** The same page, oldest first: the page starts right after `after` ('' for the first one). */
export const listTaskParamsAsc = operation<{ owner: string; kind: string; after: string; limit: number }, TaskParamsRow>(
  'list-task-params-asc',
  (dialect) => `SELECT ${columns(TASK_COLUMNS)}, params FROM tasks
       WHERE owner = @owner AND kind = @kind AND id ${bytewise(dialect)} > @after
    ORDER BY id ${bytewise(dialect)} ASC LIMIT @limit`,
);

/**
 * Deletes an owner's final task, returning its outputs (JSON) whose files the caller deletes.
 * On PostgreSQL the same statement tells every process (the task channel, as a transition's
 * trigger does), so none keeps answering the task from its cache of final bodies.
 */
export const deleteFinalTask = operation<{ id: string; owner: string }, { id: string; outputs: string }>('delete-final-task', (dialect) =>
  dialect === 'postgres'
    ? `WITH gone AS (DELETE FROM tasks WHERE id = @id AND owner = @owner AND status IN ('completed', 'failed', 'cancelled') RETURNING id, outputs)
       SELECT id, outputs FROM gone, LATERAL (SELECT pg_notify('${TASK_CHANNEL}', gone.id)) AS told`
    : `DELETE FROM tasks WHERE id = @id AND owner = @owner AND status IN ('completed', 'failed', 'cancelled') RETURNING id, outputs`,
);
