import { bytewise, operation } from '../dialect.js';
import { TASK_COLUMNS, columns, type ListTasksParams, type TaskRow } from '../rows.js';

/**
 * One page of an owner's tasks of one family, newest first: ids are time-ordered, so the
 * (owner, kind, id) index serves the order and the cursor, and tasks created meanwhile sort
 * above every cursor (paging neither repeats nor skips). Empty strings mean "no filter", so
 * that one prepared statement serves every combination.
 */
export const listTasks = operation<ListTasksParams, TaskRow>(
  'list-tasks',
  (dialect) => `SELECT ${columns(TASK_COLUMNS)} FROM tasks
       WHERE owner = @owner AND kind = @kind AND id ${bytewise(dialect)} < @after
         AND (@status = '' OR status = @status) AND (@model = '' OR model = @model)
    ORDER BY id ${bytewise(dialect)} DESC LIMIT @limit`,
);
