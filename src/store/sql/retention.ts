import { operation } from '../dialect.js';

/**
 * Retention (tasks/retention.ts): final tasks completed before `before`, oldest first, with
 * their outputs (whose files go with them). Literal statuses: the planner matches the partial
 * index of migration 8 (tasks_final_completed).
 */
export const expiredTasks = operation<{ before: number; limit: number }, { id: string; outputs: string }>(
  'expired-tasks',
  () => `SELECT id, outputs FROM tasks
          WHERE status IN ('completed', 'failed', 'cancelled') AND completed_at < @before
          ORDER BY completed_at LIMIT @limit`,
);

/** Deletes one expired task; only while it is final (a final task never changes again). */
export const deleteTask = operation<{ id: string; before: number }>(
  'delete-task',
  () => `DELETE FROM tasks WHERE id = @id AND status IN ('completed', 'failed', 'cancelled') AND completed_at < @before`,
);

/** A task's status whoever owns it (the sweep of inputs left by a crash asks it); none when deleted. */
export const taskStatus = operation<{ id: string }, { status: string }>('task-status', () => `SELECT status FROM tasks WHERE id = @id`);
