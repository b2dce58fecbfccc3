import { operation } from '../dialect.js';
import { NO_USAGE } from './settle.js';
import { TASK_COLUMNS, columns, type TaskRow } from '../rows.js';

/**
 * queued | processing -> cancelled, by the owner. `attempt + 1` fences out the worker holding
 * the old attempt: its heartbeat, progress and settle then match 0 rows. `version + 1` makes
 * the change an event (tasks/feed.ts; the PostgreSQL trigger notifies it). `lease_owner` is kept
 * (who was running it); the lease ends.
 */
export const cancelTask = operation<{ id: string; owner: string; now: number }, TaskRow>(
  'cancel-task',
  () => `UPDATE tasks SET status = 'cancelled', completed_at = @now, lease_expires_at = NULL, attempt = attempt + 1, version = version + 1, ${NO_USAGE}
       WHERE id = @id AND owner = @owner AND status IN ('queued', 'processing')
   RETURNING ${columns(TASK_COLUMNS)}`,
);
