import { operation } from '../dialect.js';
import type { JobQueueSql } from '../store.js';

/** The columns a new task sets; the others keep their defaults. */
const INSERT = `INSERT INTO tasks (id, kind, model, owner, status, created_at, outputs, params)`;

/** One task (SQLite: the group commit runs it per task in one transaction). */
export const insertTask = operation<{ id: string; kind: string; model: string; owner: string; createdAt: number; params: string }>(
  'insert-task',
  () => `${INSERT} VALUES (@id, @kind, @model, @owner, 'queued', @createdAt, '[]', @params)`,
  ['sqlite'],
);

export interface InsertTasksParams {
  ids: string[];
  kinds: string[];
  models: string[];
  owners: string[];
  createdAts: number[];
  params: string[];
}

/** A group commit's tasks in one statement (PostgreSQL: one round trip, one commit). */
const insertManySource = `${INSERT}
      SELECT n.id, n.kind, n.model, n.owner, 'queued', n.created_at, '[]', n.params
        FROM unnest(@ids::text[], @kinds::text[], @models::text[], @owners::text[], @createdAts::bigint[], @params::text[])
             AS n(id, kind, model, owner, created_at, params)
   RETURNING id, created_at`;

export const insertTasks = operation<InsertTasksParams, { id: string }>('insert-tasks', () => insertManySource, ['postgres']);

/** The same with their jobs: the jobs read the rows the INSERT returns; both commit or neither. */
export const insertTasksWithJobs = (jobs: JobQueueSql) =>
  operation<InsertTasksParams, { n: string }>(
    'insert-tasks-with-jobs',
    () => `WITH inserted AS (${insertManySource}) SELECT count(*) AS n FROM ${jobs.addJobs('inserted')}`,
    ['postgres'],
  );
