import { operation } from '../dialect.js';
import type { JobQueueSql } from '../store.js';

/** The columns a new task sets; the others keep their defaults. */
const INSERT = `INSERT INTO tasks (id, kind, model, owner, status, created_at, outputs, params, channel, next_check_at)`;

/** One task (SQLite: the group commit runs it per task in one transaction). */
export const insertTask = operation<{ id: string; kind: string; model: string; owner: string; createdAt: number; params: string; channel: string }>(
  'insert-task',
  () => `${INSERT} VALUES (@id, @kind, @model, @owner, 'queued', @createdAt, '[]', @params, @channel,
                           CASE WHEN @channel = 'sandbox' THEN NULL ELSE @createdAt END)`,
  ['sqlite'],
);

export interface InsertTasksParams {
  ids: string[];
  kinds: string[];
  models: string[];
  owners: string[];
  createdAts: number[];
  params: string[];
  channels: string[];
}

/** A group commit's tasks in one statement (PostgreSQL: one round trip, one commit). */
const insertManySource = `${INSERT}
      SELECT n.id, n.kind, n.model, n.owner, 'queued', n.created_at, '[]', n.params, n.channel,
             CASE WHEN n.channel = 'sandbox' THEN NULL ELSE n.created_at END
        FROM unnest(@ids::text[], @kinds::text[], @models::text[], @owners::text[], @createdAts::bigint[], @params::text[], @channels::text[])
             AS n(id, kind, model, owner, created_at, params, channel)
   RETURNING id, created_at, channel`;

export const insertTasks = operation<InsertTasksParams, { id: string }>('insert-tasks', () => insertManySource, ['postgres']);

/**
 * The same with their jobs: the jobs read the rows the INSERT returns; both commit or neither.
 * Only renders (channel 'sandbox') get a job: the upstream scheduler finds the others by
 * next_check_at.
 */
export const insertTasksWithJobs = (jobs: JobQueueSql) =>
  operation<InsertTasksParams, { n: string }>(
    'insert-tasks-with-jobs',
    () => `WITH inserted AS (${insertManySource}),
           renders AS (SELECT id, created_at FROM inserted WHERE channel = 'sandbox')
      SELECT count(*) AS n FROM ${jobs.addJobs('renders')}`,
    ['postgres'],
  );
