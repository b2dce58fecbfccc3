import type { ModelKind, ResolvedParams } from '../catalog/index.js';
import type {
  ApiKeyRecord,
  CompletionUsage,
  KeyPatch,
  KeyRole,
  NewKey,
  NewWebhookDelivery,
  Task,
  TaskError,
  TaskListQuery,
  TaskOutput,
  UsageExportCursor,
  UsageExportQuery,
  UsageQuery,
  UpstreamCancelRef,
  WebhookAttemptRecord,
  WebhookAttemptResult,
  WebhookDeliveryRecord,
  WebhookEndpointRecord,
} from './records.js';
import { listParams, num, toIdempotencyRecord, toTask, toPendingCancel, toUpstreamCancelRef, toUpstreamTask } from './rows.js';
import { FIRST_DELIVERY_PAGE, toAttempt, toClaimedDelivery, toDelivery, toEndpoint, withAttempts } from './webhook-rows.js';
import { cancelTask } from './sql/cancel.js';
import {
  KEY_REVOKED_ERROR,
  endBlockedKeysDeliveries,
  endClaimedDelivery,
  endKeyDeliveries,
  keyBlocksDeliveries,
  resumeKeyDeliveries,
} from './sql/webhook-holds.js';
import { findIdempotencyKey, sweepIdempotencyKeys } from './sql/idempotency.js';
import {
  activateEnvKey,
  countAdminKeys,
  countKeys,
  findKeyByHash,
  getKey,
  insertKey,
  listKeyPage,
  listKeys,
  recomputeSpent,
  revokeEnvKeys,
  revokeKey,
  updateKey,
} from './sql/keys.js';
import { insertKeyParams, pageAfter, toApiKeyRecord, toKeyAuthRecord, updateKeyParams } from './key-rows.js';
import { getMeta, initMeta, listMeta, setMeta, swapMeta } from './sql/meta.js';
import { expireLeases, failAbandoned } from './sql/recovery.js';
import { addKeyInputBytes, addTaskInputBytes, keyInputBytes } from './sql/inputs.js';
import { deleteTask, expiredTasks, taskStatus } from './sql/retention.js';
import { deleteFinalTask, getTaskParams, listTaskParamsAsc, listTaskParamsDesc, type TaskParamsRow } from './sql/front-doors.js';
import { heartbeat, setProgress } from './sql/settle.js';
import { listTasks } from './sql/tasks-list.js';
import { keyBudgetState, keyUsageReport, usageReportAcrossKeys } from './sql/usage.js';
import { reportParams, toKeyBudgetState, toUsageExportRecord, toUsageRecord, usageParams } from './usage-rows.js';
import { usageExportPage } from './sql/usage-export.js';
import { taskTraceContext } from './sql/traces.js';
import { countActiveTasks, countByStatus, getTask, leaseOwners } from './sql/tasks-read.js';
import {
  claimUpstreamDue,
  completeUpstream,
  countUpstreamInFlight,
  ensureChannelLimit,
  failUpstream,
  nextUpstreamDue,
  reserveChannelSlot,
  takeUpstreamCancel,
  claimUpstreamCancels,
  deferUpstreamCancel,
  finishUpstreamCancel,
} from './sql/upstream.js';
import {
  claimWebhookDeliveries,
  countWebhookEndpoints,
  DEFAULT_DELIVERY_CAPS,
  type DeliveryCaps,
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
} from './sql/webhooks.js';
import { all, changes, count, each, first, maybe, nothing, one, rows, run, steps, tableBase, won, type Bound } from './table.js';

/*
 * The operation table: every store operation that both databases run the same way, declared
 * once (table.ts says how a row is read). The Store interfaces (store.ts) are derived from these
 * rows, and both runners bind them (tableBase), so a new operation is two edits: its statement
 * in sql/, its row here. What the runners still write themselves is what differs between the
 * databases: group commits, claim batches, the job-queue forms of PostgreSQL, the channel's row
 * lock, migrations.
 */

/** A count or a minimum read as one row: BIGINT normalised (rows.ts), 0 or undefined when absent. */
const countOf = (row: { n: number | string } | undefined): number => num(row?.n ?? 0);
const dueOf = (row: { due: number | string | null } | undefined): number | undefined =>
  row?.due === null || row?.due === undefined ? undefined : num(row.due);

/** A task with the parameters it was created with (the front doors show some of them). */
export type TaskWithParams = Task & { readonly params: ResolvedParams };
/** A page of the front doors' list: newest first (`desc`) or oldest first (`asc`), starting after `after`. */
export interface TaskParamsPage {
  readonly owner: string;
  readonly kind: ModelKind;
  readonly order: 'asc' | 'desc';
  readonly after?: string | undefined;
  readonly limit: number;
}
/** Above every id (ids are base64url after a prefix): the first page of a newest-first list. */
const NEWEST_FIRST_PAGE = '~';
const withParams = (row: TaskParamsRow): TaskWithParams => ({ ...toTask(row), params: JSON.parse(row.params) as ResolvedParams });

export const taskOperations = {
  /** queued | processing -> cancelled (attempt + 1 fences the worker); undefined when not cancellable or not found. */
  cancelTask: one(cancelTask, (id: string, owner: string, now: number) => ({ id, owner, now }), maybe(toTask)),
  /** A page of an owner's tasks of one family, newest first. */
  listTasks: all(listTasks, (query: TaskListQuery) => listParams(query), each(toTask)),
  findIdempotencyKey: one(findIdempotencyKey, (owner: string, key: string) => ({ owner, key }), maybe(toIdempotencyRecord)),
  /** Deletes up to `limit` keys created before `expiredBefore`; the number deleted. */
  sweepIdempotencyKeys: run(sweepIdempotencyKeys, (expiredBefore: number, limit: number) => ({ expiredBefore, limit }), count),
  /** A task as its owner sees it; undefined for unknown ids and for other owners' tasks. */
  getTask: one(getTask, (id: string, owner: string) => ({ id, owner }), maybe(toTask)),
  /** Extends a lease; false when the worker no longer owns the attempt. */
  heartbeat: run(heartbeat, (id: string, attempt: number, leaseUntil: number) => ({ id, attempt, leaseUntil }), won),
  /** Raises progress (never lowers it); false when the attempt is no longer current. */
  setProgress: run(setProgress, (id: string, attempt: number, progress: number) => ({ id, attempt, progress }), won),
  /**
   * processing (lease expired, `maxAttempts` attempts lost to stopped workers) -> failed: a task
   * whose workers keep dying still ends in a final state. Returns the ids failed.
   */
  failAbandoned: all(
    failAbandoned,
    (now: number, maxAttempts: number, error: TaskError) => ({ now, maxAttempts, error: JSON.stringify(error) }),
    each((row) => row.id),
  ),
  /** Distinct lease owners of processing tasks (crash recovery looks for dead ones). */
  leaseOwners: all(
    leaseOwners,
    () => ({}),
    (found) => found.flatMap((row) => (row.lease_owner === null ? [] : [row.lease_owner])),
  ),
  /** Ends the leases of a dead owner now, so its tasks are taken over without waiting. */
  expireLeases: run(expireLeases, (owner: string, now: number) => ({ owner, expiredAt: now - 1 }), count),
  /** The task's trace context (a W3C traceparent); undefined when it has none or is gone. */
  taskTraceContext: one(
    taskTraceContext,
    (id: string) => ({ id }),
    (row) => row?.trace_context ?? undefined,
  ),
  /** Counts by status, for metrics and health. */
  countByStatus: all(
    countByStatus,
    () => ({}),
    (found): Record<string, number> => Object.fromEntries(found.map((row) => [row.status, num(row.n)])),
  ),
  /** An owner's queued and processing tasks, counted up to `cap` (the per-key tasks-in-flight limit reads it, cached). */
  countActiveTasks: one(countActiveTasks, (owner: string, cap: number) => ({ owner, cap }), countOf),
  // The OpenAI-compatible front doors (sql/front-doors.ts).
  /** A task with its parameters, as its owner sees it; undefined for unknown ids and for other owners' tasks. */
  getTaskWithParams: one(getTaskParams, (id: string, owner: string) => ({ id, owner }), maybe(withParams)),
  /** A page of an owner's tasks of one family with their parameters, newest first or oldest first, after `after`. */
  listTasksWithParams: steps([listTaskParamsDesc, listTaskParamsAsc], false, function* (_dialect, page: TaskParamsPage) {
    const params = { owner: page.owner, kind: page.kind, limit: page.limit };
    if (page.order === 'asc') return (yield* rows(listTaskParamsAsc, { ...params, after: page.after ?? '' })).map(withParams);
    return (yield* rows(listTaskParamsDesc, { ...params, after: page.after ?? NEWEST_FIRST_PAGE })).map(withParams);
  }),
  /** Deletes an owner's final task; its outputs (whose files the caller deletes), or undefined when it is not there or not final. */
  deleteFinalTask: one(
    deleteFinalTask,
    (id: string, owner: string) => ({ id, owner }),
    (row) => (row === undefined ? undefined : { id: row.id, outputs: JSON.parse(row.outputs) as TaskOutput[] }),
  ),
  // Retention and stored inputs (sql/retention.ts).
  /** Bytes of stored inputs an owner's queued and processing tasks hold (the per-key limit's pre-check; the insert's reservation decides). */
  keyInputBytes: one(keyInputBytes, (owner: string) => ({ owner }), countOf),
  /**
   * Counts a published copy's bytes on its task and its owner in one transaction (the task's end
   * gives them back with its other inputs); false when the task is no longer active.
   */
  addPublishedInputBytes: steps([addTaskInputBytes, addKeyInputBytes], true, function* (_dialect, id: string, bytes: number) {
    const [task] = yield* rows(addTaskInputBytes, { id, bytes });
    if (task === undefined) return false;
    yield* changes(addKeyInputBytes, { owner: task.owner, bytes });
    return true;
  }),
  /**
   * Deletes up to `limit` final tasks completed before `before`, oldest first; returns the
   * deleted ones with their outputs, whose files the caller deletes. Not atomic on PostgreSQL:
   * a sweep runs once a minute, and a final row never changes, so nothing is needed between
   * the read and the deletes (each delete re-checks that its task is final and expired).
   */
  deleteExpiredTasks: steps([expiredTasks, deleteTask], false, function* (_dialect, before: number, limit: number) {
    const deleted: { id: string; outputs: TaskOutput[] }[] = [];
    for (const row of yield* rows(expiredTasks, { before, limit })) {
      if ((yield* changes(deleteTask, { id: row.id, before })) === 1) deleted.push({ id: row.id, outputs: JSON.parse(row.outputs) as TaskOutput[] });
    }
    return deleted;
  }),
  /** A task's status whoever owns it; undefined when there is no such task. */
  taskStatus: one(
    taskStatus,
    (id: string) => ({ id }),
    (row) => row?.status,
  ),
  // The upstream lifecycle (sql/upstream.ts).
  /** Due upstream tasks (next_check_at <= now), leased until `leaseUntil` with the attempt incremented. */
  claimUpstreamDue: all(claimUpstreamDue, (now: number, leaseUntil: number, limit: number) => ({ now, leaseUntil, limit }), each(toUpstreamTask)),
  /** When the next active upstream task is due; undefined when none is active. */
  nextUpstreamDue: one(nextUpstreamDue, () => ({}), dueOf),
  countUpstreamInFlight: one(countUpstreamInFlight, (channel: string) => ({ channel }), countOf),
  /** Completed, with the usage measured from the copied outputs (the charge trigger books it in the same transaction). */
  completeUpstream: run(
    completeUpstream,
    (id: string, attempt: number, outputs: readonly TaskOutput[], now: number, startedAt: number, usage: CompletionUsage) => ({
      id,
      attempt,
      now,
      outputs: JSON.stringify(outputs),
      startedAt,
      ...usageParams(usage),
    }),
    won,
  ),
  failUpstream: run(failUpstream, (id: string, attempt: number, error: TaskError, now: number) => ({ id, attempt, now, error: JSON.stringify(error) }), won),
  /** A cancelled task's upstream job, taken once (sql/upstream.ts takeUpstreamCancel); undefined when already taken or never submitted. */
  takeUpstreamCancel: one(takeUpstreamCancel, (id: string) => ({ id }), maybe(toUpstreamCancelRef)),
  /** Final tasks whose upstream cancel is still owed and due (a retry, or one won by a process without channels), leased until `leaseUntil`. */
  claimUpstreamCancels: all(claimUpstreamCancels, (now: number, leaseUntil: number, limit: number) => ({ now, leaseUntil, limit }), each(toPendingCancel)),
  /** A cancel the upstream did not answer: kept, to be tried again at `at`. */
  deferUpstreamCancel: run(
    deferUpstreamCancel,
    (ref: UpstreamCancelRef & { readonly upstreamId: string }, at: number, intervalMs: number) => ({
      id: ref.id,
      channel: ref.channel,
      target: ref.target,
      upstreamId: ref.upstreamId,
      requestId: ref.requestId,
      at,
      intervalMs,
    }),
    won,
  ),
  /** The owed cancel is done (answered, or given up). */
  finishUpstreamCancel: run(finishUpstreamCancel, (id: string) => ({ id }), won),
  /**
   * Books the next request slot of a channel's bucket, across processes; resolves with when it
   * starts (ms). The bucket's row is created the first time it is missing.
   */
  reserveChannelSlot: steps(
    [reserveChannelSlot, ensureChannelLimit],
    false,
    function* (_dialect, channel: string, bucket: 'submit' | 'poll', now: number, spacingMs: number) {
      let row = yield* first(reserveChannelSlot, { channel, bucket, now, spacingMs });
      if (!row) {
        yield* changes(ensureChannelLimit, { channel, bucket });
        row = yield* first(reserveChannelSlot, { channel, bucket, now, spacingMs });
      }
      return row ? num(row.at) : now;
    },
  ),
};

/** API keys, by hash (auth/ depends on these alone); their settings and administration (docs/admin.md). */
export const keyOperations = {
  findKeyByHash: one(findKeyByHash, (hash: string) => ({ hash }), maybe(toKeyAuthRecord)),
  /** False when a key of that hash is stored already (nothing changes then). */
  insertKey: run(
    insertKey,
    (key: NewKey) => insertKeyParams(key),
    (changed) => changed > 0,
  ),
  countKeys: one(countKeys, () => ({}), countOf),
  /** Admin keys neither revoked nor disabled. */
  countAdminKeys: one(countAdminKeys, () => ({}), countOf),
  /** Every key, revoked ones too, oldest first; spent and reserved of the period holding `now` (ms). */
  listKeys: all(listKeys, (now: number) => ({ now }), each(toApiKeyRecord)),
  /** One key (revoked or not, any role); undefined for an unknown id. */
  getKey: one(getKey, (id: string, now: number) => ({ id, now }), maybe(toApiKeyRecord)),
  /** A page of active keys of a role, newest first, after the key `after` (its record) when given. */
  listKeyPage: all(
    listKeyPage,
    (role: KeyRole, after: ApiKeyRecord | undefined, limit: number, now: number) => ({ role, ...pageAfter(after), limit, now }),
    each(toApiKeyRecord),
  ),
  /**
   * Changes the settings `patch` names (an active key only: false for an unknown or revoked id).
   * A change of budget period recomputes `spent` for the current period of the new kind from the
   * daily rollup, in the same transaction: the update locks the key's row to the commit, so the
   * recount sees every charge committed before it, and a task ending meanwhile waits for the lock.
   */
  updateKey: steps([updateKey, recomputeSpent, endKeyDeliveries, resumeKeyDeliveries], true, function* (_dialect, id: string, patch: KeyPatch, now: number) {
    if ((yield* changes(updateKey, updateKeyParams(id, patch))) !== 1) return false;
    if (patch.budgetPeriod !== undefined) yield* changes(recomputeSpent, { id, now });
    // A disabled key's webhooks stop with it, in this transaction; enabled again, they resume.
    if (patch.disabled === true) yield* changes(endKeyDeliveries, { owner: id, now, error: KEY_REVOKED_ERROR });
    if (patch.disabled === false) yield* changes(resumeKeyDeliveries, { owner: id, now });
    return true;
  }),
  /** Revokes a key (false when unknown or already revoked); its pending webhook deliveries end with it. */
  revokeKey: steps([revokeKey, endKeyDeliveries], true, function* (_dialect, id: string, now: number) {
    if ((yield* changes(revokeKey, { id, now })) !== 1) return false;
    yield* changes(endKeyDeliveries, { owner: id, now, error: KEY_REVOKED_ERROR });
    return true;
  }),
  /**
   * Keys from the environment (MEDIAGATE_API_KEYS, MEDIAGATE_ADMIN_KEYS; their ids derive from
   * their hashes) mirror it: those in `keys` are (re)activated with their role, the others
   * revoked, so removing a key from the environment stops it working at the next start. Names
   * and settings are never touched.
   */
  syncEnvKeys: steps(
    [revokeEnvKeys, activateEnvKey, endBlockedKeysDeliveries],
    true,
    function* (_dialect, keys: ReadonlyArray<{ hash: string; role: KeyRole }>, now: number) {
      yield* changes(revokeEnvKeys, { now });
      for (const key of keys) yield* changes(activateEnvKey, key);
      yield* changes(endBlockedKeysDeliveries, { now, error: KEY_REVOKED_ERROR });
    },
  ),
};

export const metaOperations = {
  getMeta: one(
    getMeta,
    (key: string) => ({ key }),
    (row) => row?.value,
  ),
  /** Sets a value only if none is set; returns the value that is stored afterwards. */
  initMeta: steps([initMeta, getMeta], false, function* (_dialect, key: string, value: string) {
    yield* changes(initMeta, { key, value });
    const stored = (yield* first(getMeta, { key }))?.value;
    if (stored === undefined) throw new Error(`meta ${key} vanished after insert`);
    return stored;
  }),
  /** Rows whose key matches a LIKE pattern, read in one statement. */
  listMeta: all(
    listMeta,
    (pattern: string) => ({ pattern }),
    (found): Array<{ key: string; value: string }> => found,
  ),
  /**
   * Replaces `key`'s value with `value` only if it is still `expected`, and then, in the same
   * transaction, sets each of `also` (insert or replace). False, with nothing written, when the
   * value was no longer `expected`. Used to rotate the URL signing secret (storage/signing.ts).
   * The UPDATE comes first: on SQLite it takes the write lock, so nothing is read from an older
   * snapshot; on PostgreSQL the swapped row stays locked to COMMIT, so a concurrent swap waits,
   * then finds the new value and fails.
   */
  swapMeta: steps(
    [swapMeta, setMeta],
    true,
    function* (_dialect, key: string, expected: string, value: string, also: ReadonlyArray<{ key: string; value: string }>) {
      if ((yield* changes(swapMeta, { key, expected, value })) !== 1) return false;
      for (const row of also) yield* changes(setMeta, row);
      return true;
    },
  ),
};

/** Deliveries of a task, planned from its owner's endpoints (webhooks/dispatcher.ts); synchronous, as SQLite runs the transaction. */
type Plan = (task: Task, endpoints: readonly WebhookEndpointRecord[]) => NewWebhookDelivery[];

export const webhookOperations = {
  /** The trace context of a delivery's task (tracing/): the delivery's span joins the task's trace. */
  deliveryTraceContext: one(
    taskTraceContext,
    (taskId: string) => ({ id: taskId }),
    (row) => row?.trace_context ?? undefined,
  ),
  insertWebhookEndpoint: run(insertWebhookEndpoint, (endpoint: WebhookEndpointRecord) => ({ ...endpoint, events: JSON.stringify(endpoint.events) }), nothing),
  listWebhookEndpoints: all(listWebhookEndpoints, (owner: string) => ({ owner }), each(toEndpoint)),
  countWebhookEndpoints: one(countWebhookEndpoints, (owner: string) => ({ owner }), countOf),
  /** `owner` undefined: any owner's (the dispatcher's read). */
  getWebhookEndpoint: one(getWebhookEndpoint, (id: string, owner: string | undefined) => ({ id, owner: owner ?? '' }), maybe(toEndpoint)),
  /** Deletes the endpoint with its deliveries and attempts; false when it is not the owner's. */
  deleteWebhookEndpoint: steps([deleteWebhookEndpoint, deleteWebhookAttempts, deleteWebhookDeliveries], true, function* (_dialect, id: string, owner: string) {
    if ((yield* changes(deleteWebhookEndpoint, { id, owner })) !== 1) return false;
    yield* changes(deleteWebhookAttempts, { endpointId: id });
    yield* changes(deleteWebhookDeliveries, { endpointId: id });
    return true;
  }),
  /**
   * In one transaction: up to `limit` final tasks not yet announced, `plan` turns each (with its
   * owner's endpoints) into deliveries, which are inserted, and the tasks are marked announced.
   * On PostgreSQL the tasks are locked with SKIP LOCKED, so processes share the work, and marked
   * in one statement over an array (SQLite has no arrays, and no round trip to save). `plan` is
   * synchronous (SQLite runs the transaction as one synchronous function). Returns the counts.
   */
  announceTasks: steps(
    [pickUnannounced, listWebhookEndpoints, insertWebhookDelivery, markAnnounced, markAnnouncedMany],
    true,
    function* (dialect, limit: number, now: number, plan: Plan) {
      const tasks = (yield* rows(pickUnannounced, { limit })).map(toTask);
      if (tasks.length === 0) return { tasks: 0, deliveries: 0 };
      const endpointsOf = new Map<string, WebhookEndpointRecord[]>();
      let deliveries = 0;
      for (const task of tasks) {
        let endpoints = endpointsOf.get(task.owner);
        if (endpoints === undefined) {
          endpoints = (yield* rows(listWebhookEndpoints, { owner: task.owner })).map(toEndpoint);
          endpointsOf.set(task.owner, endpoints);
        }
        for (const delivery of endpoints.length === 0 ? [] : plan(task, endpoints)) {
          yield* changes(insertWebhookDelivery, { ...delivery, now });
          deliveries += 1;
        }
      }
      if (dialect === 'postgres') yield* changes(markAnnouncedMany, { ids: tasks.map((task) => task.id) });
      else for (const task of tasks) yield* changes(markAnnounced, { id: task.id });
      return { tasks: tasks.length, deliveries };
    },
  ),
  /** Due deliveries leased to `owner` until `leaseUntil`, with `attempts` incremented. */
  claimWebhookDeliveries: all(
    claimWebhookDeliveries,
    (owner: string, now: number, leaseUntil: number, limit: number, caps: DeliveryCaps = DEFAULT_DELIVERY_CAPS) => ({ owner, now, leaseUntil, limit, ...caps }),
    each(toClaimedDelivery),
  ),
  nextWebhookDue: one(nextWebhookDue, () => ({}), dueOf),
  /** Records the attempt and the delivery's new state; false (nothing written) when the fence is lost. */
  settleWebhookDelivery: steps([settleWebhookDelivery, insertWebhookAttempt], true, function* (_dialect, result: WebhookAttemptResult) {
    if ((yield* changes(settleWebhookDelivery, result)) !== 1) return false;
    yield* changes(insertWebhookAttempt, { ...result, deliveryId: result.id, attempt: result.attempts });
    return true;
  }),
  dropWebhookDelivery: run(dropWebhookDelivery, (id: string) => ({ id }), nothing),
  /** Whether the key's deliveries must not be sent (it is disabled or revoked); false for a key without a row. */
  keyBlocksDeliveries: one(
    keyBlocksDeliveries,
    (owner: string) => ({ owner }),
    (row) => row !== undefined && Number(row.blocked) === 1,
  ),
  /** A claimed delivery of a blocked key ended, not sent (its claim's attempt given back); false when the fence is lost. */
  endClaimedDelivery: run(
    endClaimedDelivery,
    (id: string, lease: string, attempts: number, now: number) => ({ id, lease, attempts, now, error: KEY_REVOKED_ERROR }),
    won,
  ),
  /** Due now with the same id; false when not found or an attempt holds it. */
  redeliverWebhook: run(redeliverWebhook, (id: string, endpointId: string, now: number) => ({ id, endpointId, now }), won),
  getWebhookDelivery: one(getWebhookDelivery, (id: string, endpointId: string) => ({ id, endpointId }), maybe(toDelivery)),
  /** A page of an endpoint's deliveries, newest first, each with its attempts (oldest first). */
  listWebhookDeliveries: steps(
    [listWebhookDeliveries, listWebhookAttempts],
    false,
    function* (_dialect, endpointId: string, after: string | undefined, limit: number) {
      const deliveries: WebhookDeliveryRecord[] = (yield* rows(listWebhookDeliveries, { endpointId, after: after ?? FIRST_DELIVERY_PAGE, limit })).map(
        toDelivery,
      );
      const high = deliveries[0]?.id;
      const low = deliveries.at(-1)?.id;
      if (high === undefined || low === undefined) return [];
      const attempts: WebhookAttemptRecord[] = (yield* rows(listWebhookAttempts, { endpointId, low, high })).map(toAttempt);
      return withAttempts(deliveries, attempts);
    },
  ),
};

export const usageOperations = {
  /** A key's budget, reservations and spending of the period holding `now`; undefined for an unknown key. */
  keyBudgetState: one(keyBudgetState, (id: string, now: number) => ({ id, now }), maybe(toKeyBudgetState)),
  /** The daily rollup summed over whole days, grouped as asked: one key's rows (its primary key), or every key's (the days' index). */
  usageReport: steps([keyUsageReport, usageReportAcrossKeys], false, function* (_dialect, query: UsageQuery) {
    const found =
      query.key === undefined
        ? yield* rows(usageReportAcrossKeys, reportParams(query))
        : yield* rows(keyUsageReport, { ...reportParams(query), key: query.key });
    return found.map(toUsageRecord);
  }),
  /** A page of the rollup's rows (key x model x day, with the key's name) after `after`, in (day, key, model) order: the spend export. */
  usageExportPage: all(
    usageExportPage,
    (query: UsageExportQuery, after: UsageExportCursor | undefined, limit: number) => ({
      startDay: query.startDay,
      endDay: query.endDay,
      afterDay: after?.day ?? '',
      afterKey: after?.keyId ?? '',
      afterModel: after?.model ?? '',
      limit,
    }),
    each(toUsageExportRecord),
  ),
};

/** Every row of the table. */
export const operations = { ...taskOperations, ...keyOperations, ...metaOperations, ...webhookOperations, ...usageOperations };

export type TaskOperations = Bound<typeof taskOperations>;
export type KeyOperations = Bound<typeof keyOperations>;
export type MetaOperations = Bound<typeof metaOperations>;
export type WebhookOperations = Bound<typeof webhookOperations>;
export type UsageOperations = Bound<typeof usageOperations>;

/** What both runners extend: one method per row of the table. */
export const TableStore = tableBase(operations);
