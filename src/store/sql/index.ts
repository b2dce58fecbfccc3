import type { JobQueueSql, OperationText } from '../dialect.js';
import { operations } from '../operations.js';
import { HOT_PATHS } from './hot-paths.js';
import { insertKeyedTasks, insertKeyedTasksWithJobs, takeIdempotencyKey } from './idempotency.js';
import { releaseInputBytes } from './inputs.js';
import { createVersionTable, isApplied, lockMigrations, recordApplied } from './migrations.js';
import { requeueStranded } from './recovery.js';
import { complete, completeMany, fail, release, releaseWithJob } from './settle.js';
import { insertTasksGuardedWithJobs, insertTasksWithJobs } from './tasks-insert.js';
import { saveUpstream, saveUpstreamWithJob } from './upstream.js';
import { releaseReservation } from './usage.js';

/**
 * The statements the runners run themselves (sqlite-store.ts, postgres-store.ts), outside the
 * operation table: the hot paths (hot-paths.ts), group commits, claim batches, the job-queue forms, the channel's row lock,
 * migrations. A new operation of the table needs no line here.
 */
function runnerStatements(jobs: JobQueueSql): readonly OperationText[] {
  return [
    ...Object.values(HOT_PATHS),
    insertTasksWithJobs(jobs),
    insertTasksGuardedWithJobs(jobs),
    takeIdempotencyKey,
    releaseInputBytes,
    insertKeyedTasks,
    insertKeyedTasksWithJobs(jobs),
    releaseReservation,
    complete,
    completeMany,
    fail,
    release,
    releaseWithJob(jobs),
    requeueStranded(jobs),
    saveUpstream,
    saveUpstreamWithJob(jobs),
    createVersionTable,
    isApplied,
    recordApplied,
    lockMigrations,
  ];
}

/**
 * Every statement the store runs, by operation: those the rows of the operation table name
 * (operations.ts), and the runners' own. test/store-sql.test.ts snapshots each one's text per
 * dialect, so a change to any of them shows in review.
 */
export function allOperations(jobs: JobQueueSql): readonly OperationText[] {
  const table = Object.values(operations).flatMap((row) => row.statements);
  // A statement that several rows run (listWebhookEndpoints) is listed once.
  return [...new Set([...table, ...runnerStatements(jobs)])];
}
