import { operation } from '../dialect.js';

/** A task's trace context (migration 15), read by the processes that work on it when tracing is on. */
export const taskTraceContext = operation<{ id: string }, { trace_context: string | null }>(
  'task-trace-context',
  () => `SELECT trace_context FROM tasks WHERE id = @id`,
);
