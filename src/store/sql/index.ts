import type { OperationText } from '../dialect.js';
import type { JobQueueSql } from '../store.js';
import { cancelTask } from './cancel.js';
import { claimById, claimByIds, claimQueued, claimTakeovers } from './claim.js';
import { activateEnvKey, countKeys, findKeyByHash, insertKey, listKeys, revokeEnvKeys, revokeKey } from './keys.js';
import { getMeta, initMeta, listMeta, setMeta, swapMeta } from './meta.js';
import { createVersionTable, isApplied, lockMigrations, recordApplied } from './migrations.js';
import { expireLeases, failAbandoned, requeueStranded } from './recovery.js';
import { complete, completeMany, fail, heartbeat, release, releaseWithJob, setProgress } from './settle.js';
import { findIdempotencyKey, insertKeyedTasks, insertKeyedTasksWithJobs, sweepIdempotencyKeys, takeIdempotencyKey } from './idempotency.js';
import { insertTask, insertTasks, insertTasksWithJobs } from './tasks-insert.js';
import { listTasks } from './tasks-list.js';
import { keyBudget, keyBudgetState, keyUsageReport, releaseReservation, reserveBudget, usageReportAcrossKeys } from './usage.js';
import { activeInputParams, deleteTask, expiredTasks, taskStatus } from './retention.js';
import {
  claimWebhookDeliveries,
  countWebhookEndpoints,
  deleteWebhookAttempts,
  deleteWebhookDeliveries,
  deleteWebhookEndpoint,
  dropWebhookDelivery,
  getWebhookDelivery,
  getWebhookEndpoint,
  insertWebhookAttempt,
  insertWebhookDelivery,
  insertWebhookEndpoint,
  listWebhookAttempts,
  listWebhookDeliveries,
  listWebhookEndpoints,
  markAnnounced,
  markAnnouncedMany,
  nextWebhookDue,
  pickUnannounced,
  redeliverWebhook,
  settleWebhookDelivery,
} from './webhooks.js';
import { countActiveTasks, countByStatus, getTask, leaseOwners } from './tasks-read.js';
import {
  claimUpstreamDue,
  completeUpstream,
  channelFull,
  countUpstreamInFlight,
  ensureChannelLimit,
  failUpstream,
  lockChannelSubmit,
  nextUpstreamDue,
  reserveChannelSlot,
  saveUpstream,
  saveUpstreamWithJob,
  takeUpstreamCancel,
} from './upstream.js';

/**
 * Every statement the store runs, by operation: test/store-sql.test.ts snapshots each one's
 * text per dialect, so a change to any of them shows in review. A new operation is a file (or
 * a line in one) in this folder and a line here.
 */
export function allOperations(jobs: JobQueueSql): readonly OperationText[] {
  return [
    insertTask,
    insertTasks,
    insertTasksWithJobs(jobs),
    keyBudget,
    reserveBudget,
    releaseReservation,
    keyBudgetState,
    keyUsageReport,
    usageReportAcrossKeys,
    getTask,
    listTasks,
    cancelTask,
    takeIdempotencyKey,
    insertKeyedTasks,
    insertKeyedTasksWithJobs(jobs),
    findIdempotencyKey,
    sweepIdempotencyKeys,
    claimTakeovers,
    claimQueued,
    claimById,
    claimByIds,
    heartbeat,
    setProgress,
    complete,
    completeMany,
    fail,
    release,
    releaseWithJob(jobs),
    failAbandoned,
    leaseOwners,
    expireLeases,
    requeueStranded(jobs),
    countByStatus,
    countActiveTasks,
    activeInputParams,
    expiredTasks,
    deleteTask,
    taskStatus,
    claimUpstreamDue,
    nextUpstreamDue,
    channelFull,
    countUpstreamInFlight,
    saveUpstream,
    saveUpstreamWithJob(jobs),
    completeUpstream,
    failUpstream,
    takeUpstreamCancel,
    ensureChannelLimit,
    reserveChannelSlot,
    lockChannelSubmit,
    insertWebhookEndpoint,
    listWebhookEndpoints,
    countWebhookEndpoints,
    getWebhookEndpoint,
    deleteWebhookAttempts,
    deleteWebhookDeliveries,
    deleteWebhookEndpoint,
    pickUnannounced,
    markAnnounced,
    markAnnouncedMany,
    insertWebhookDelivery,
    claimWebhookDeliveries,
    nextWebhookDue,
    settleWebhookDelivery,
    insertWebhookAttempt,
    dropWebhookDelivery,
    redeliverWebhook,
    getWebhookDelivery,
    listWebhookDeliveries,
    listWebhookAttempts,
    findKeyByHash,
    insertKey,
    countKeys,
    listKeys,
    revokeKey,
    revokeEnvKeys,
    activateEnvKey,
    getMeta,
    initMeta,
    listMeta,
    setMeta,
    swapMeta,
    createVersionTable,
    isApplied,
    recordApplied,
    lockMigrations,
  ];
}
