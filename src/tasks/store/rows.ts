import type { Selectable } from 'kysely';
import type { ModelKind, ResolvedParams } from '../../catalog/index.js';
import type { ClaimedTask, Task, TaskError, TaskOutput, TaskStatus } from '../types.js';
import type { TasksTable } from './schema.js';

/** Columns a status read needs: everything but `params`, which may be megabytes of media. */
export const TASK_COLUMNS = [
  'id',
  'kind',
  'model',
  'owner',
  'status',
  'progress',
  'created_at',
  'started_at',
  'completed_at',
  'error',
  'outputs',
  'attempt',
] as const;

export type TaskRow = Pick<Selectable<TasksTable>, (typeof TASK_COLUMNS)[number]>;

/** A row as a claim returns it: a worker needs the parameters and the lease owner too. */
export type ClaimedRow = TaskRow & { params: string; lease_owner: string | null };

// PostgreSQL returns BIGINT as a string; SQLite returns numbers. Normalise once, here.
const num = (value: number | string): number => (typeof value === 'number' ? value : Number(value));
const numOrNull = (value: number | string | null): number | null => (value === null ? null : num(value));

export function toTask(row: TaskRow): Task {
  return {
    id: row.id,
    kind: row.kind as ModelKind,
    model: row.model,
    owner: row.owner,
    status: row.status as TaskStatus,
    progress: row.progress,
    createdAt: num(row.created_at),
    startedAt: numOrNull(row.started_at),
    completedAt: numOrNull(row.completed_at),
    error: row.error === null ? null : (JSON.parse(row.error) as TaskError),
    outputs: JSON.parse(row.outputs) as TaskOutput[],
    attempt: num(row.attempt),
  };
}

export function toClaimedTask(row: ClaimedRow): ClaimedTask {
  return { ...toTask(row), params: JSON.parse(row.params) as ResolvedParams, leaseOwner: row.lease_owner ?? '' };
}
