import type { JobQueueSql, OperationText } from '../dialect.js';
import { operations } from '../operations.js';
import { claimById, claimByIds, claimQueued, claimTakeovers } from './claim.js';
import { insertKeyedTasks, insertKeyedTasksWithJobs, takeIdempotencyKey } from './idempotency.js';
import { releaseInputBytes, reserveInputBytes } from './inputs.js';
import { guardKey, guardKeys } from './key-guard.js';
import { createVersionTable, isApplied, lockMigrations, recordApplied } from './migrations.js';
import { requeueStranded } from './recovery.js';
import { complete, completeMany, fail, release, releaseWithJob } from './settle.js';
import { insertTask, insertTasks, insertTasksWithJobs } from './tasks-insert.js';
import { channelHolders, channelWaitingKeys, lockChannelSubmit, saveUpstream, saveUpstreamWithJob } from './upstream.js';
import { releaseReservation, reserveBudget } from './usage.js';

/**
 * The statements the runners run themselves (sqlite-store.ts, postgres-store.ts), outside the
 * operation table: group commits, claim batches, the job-queue forms, the channel's row lock,
 * migrations. A new operation of the table needs no line here.
 */
function runnerStatements(jobs: JobQueueSql): readonly OperationText[] {
  return [
    insertTask,
    insertTasks,
    insertTasksWithJobs(jobs),
    takeIdempotencyKey,
    reserveInputBytes,
    releaseInputBytes,
    insertKeyedTasks,
    insertKeyedTasksWithJobs(jobs),
    reserveBudget,
    releaseReservation,
    guardKey,
    guardKeys,
    claimTakeovers,
    claimQueued,
    claimById,
    claimByIds,
    complete,
    completeMany,
    fail,
    release,
    releaseWithJob(jobs),
    requeueStranded(jobs),
    saveUpstream,
    saveUpstreamWithJob(jobs),
    channelHolders,
    channelWaitingKeys,
    lockChannelSubmit,
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
