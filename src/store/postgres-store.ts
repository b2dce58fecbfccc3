import pg from 'pg';
import type {
  ClaimedTask,
  IdempotencyRecord,
  NewTask,
  Task,
  TaskError,
  TaskListQuery,
  TaskOutput,
  UpstreamCancelRef,
  PendingUpstreamCancel,
  UpstreamStep,
  UpstreamTask,
} from './records.js';
import type { Operation } from './dialect.js';
import { GroupCommit } from './group-commit.js';
import { migrationSteps } from './migrations.js';
import {
  inClaimOrder,
  type Int,
  listParams,
  num,
  numOrNull,
  toClaimedTask,
  toIdempotencyRecord,
  toTask,
  toUpstreamCancelRef,
  toPendingCancel,
  toUpstreamTask,
  upstreamSaveParams,
} from './rows.js';
import { cancelTask } from './sql/cancel.js';
import { claimByIds, claimQueued, claimTakeovers } from './sql/claim.js';
import { activateEnvKey, countKeys, findKeyByHash, insertKey, listKeys, revokeEnvKeys, revokeKey } from './sql/keys.js';
import { getMeta, initMeta, listMeta, setMeta, swapMeta } from './sql/meta.js';
import { createVersionTable, isApplied, lockMigrations, recordApplied } from './sql/migrations.js';
import { expireLeases, failAbandoned, requeueStranded } from './sql/recovery.js';
import { completeMany, fail, heartbeat, release, releaseWithJob, setProgress } from './sql/settle.js';
import { findIdempotencyKey, insertKeyedTasks, insertKeyedTasksWithJobs, sweepIdempotencyKeys, type InsertKeyedTasksParams } from './sql/idempotency.js';
import { insertTasks, insertTasksWithJobs, type InsertTasksParams } from './sql/tasks-insert.js';
import { listTasks } from './sql/tasks-list.js';
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
  takeUpstreamCancel,
  claimUpstreamCancels,
  deferUpstreamCancel,
  finishUpstreamCancel,
  saveUpstreamWithJob,
  type UpstreamSaveParams,
} from './sql/upstream.js';
import { countActiveTasks, countByStatus, getTask, leaseOwners } from './sql/tasks-read.js';
import { activeInputParams, deleteTask, expiredTasks, taskStatus } from './sql/retention.js';
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
  markAnnouncedMany,
  nextWebhookDue,
  pickUnannounced,
  redeliverWebhook,
  settleWebhookDelivery,
} from './sql/webhooks.js';
import type {
  ApiKeyRecord,
  ClaimedDelivery,
  JobQueueSql,
  NewWebhookDelivery,
  Store,
  WebhookAttemptRecord,
  WebhookAttemptResult,
  WebhookDeliveryRecord,
  WebhookEndpointRecord,
} from './store.js';
import { FIRST_DELIVERY_PAGE, toAttempt, toClaimedDelivery, toDelivery, toEndpoint, withAttempts } from './webhook-rows.js';

/** Tasks a reaper pass re-announces at most; the next pass takes the rest. */
const STRANDED_BATCH = 500;

/** Runs the store's statements on a pool or on one client (a transaction). */
class Executor {
  constructor(private readonly client: pg.Pool | pg.ClientBase) {}

  /**
   * Every statement is prepared once per connection (named): parse and plan were a large part
   * of what the database spent its time on in the PostgreSQL pipeline of `npm run bench`.
   */
  async all<P extends object, R>(op: Operation<P, R>, params: P): Promise<R[]> {
    const sql = op.on('postgres');
    const result = await this.client.query<R & pg.QueryResultRow>({ name: `mediagate/${sql.name}`, text: sql.text, values: sql.values(params) });
    return result.rows;
  }

  async run<P extends object>(op: Operation<P, unknown>, params: P): Promise<number> {
    const sql = op.on('postgres');
    const result = await this.client.query({ name: `mediagate/${sql.name}`, text: sql.text, values: sql.values(params) });
    return result.rowCount ?? 0;
  }

  /** DDL: not prepared. */
  async execute(text: string): Promise<void> {
    await this.client.query(text);
  }
}

/**
 * The store on PostgreSQL, over a `pg` pool. On the pipeline's hot path each statement costs a
 * round trip and a commit, and in the PostgreSQL pipeline of `npm run bench` (2 cores shared
 * with the server) that per-statement cost (client writes, server wake-ups, WAL flush), not the
 * rows, was what the database spent its time on. So creations, claims by id and completions are
 * group-committed (group-commit.ts: one statement in flight, carrying the calls that came while
 * the previous one ran) as one statement over `unnest` of the callers' arguments (the batch
 * forms in sql/), and the job of a task made runnable is added in the same statement
 * (JobQueueSql), atomic without BEGIN/COMMIT round trips.
 *
 * Each row keeps the guard of its single-row form, and each caller learns from the rows
 * RETURNING gives back whether its own transition took effect, so batching changes what a round
 * trip carries, not what any task may do. Ids are sorted, so that batches that overlap (workers
 * racing on a taken-over task) lock their rows in one order rather than into a deadlock (should
 * PostgreSQL still report one, the rows are tried again alone), and a duplicate within a batch
 * gets nothing (it could not have won anyway).
 */
/** A batch of new tasks as the column arrays the `unnest` inserts take (keyed or not). */
function taskColumns(tasks: readonly NewTask[]): InsertTasksParams {
  return {
    ids: tasks.map((t) => t.id),
    kinds: tasks.map((t) => t.kind),
    models: tasks.map((t) => t.model),
    owners: tasks.map((t) => t.owner),
    createdAts: tasks.map((t) => t.createdAt),
    params: tasks.map((t) => JSON.stringify(t.params)),
    channels: tasks.map((t) => t.channel ?? 'sandbox'),
  };
}

export class PostgresStore implements Store {
  readonly dialect = 'postgres';
  private readonly db: Executor;
  private readonly inserts = new GroupCommit<NewTask, boolean>((batch) => this.insertBatch(batch), refusedByServer);
  private readonly claims = new GroupCommit<ClaimRequest, ClaimedTask | undefined>((batch) => this.claimBatch(batch), refusedByServer);
  private readonly completions = new GroupCommit<CompleteRequest, boolean>((batch) => this.completeBatch(batch), refusedByServer);
  private readonly withJobs:
    | {
        readonly insert: Operation<InsertTasksParams, { n: string }>;
        readonly insertKeyed: Operation<InsertKeyedTasksParams, { id: string }>;
        readonly release: Operation<{ id: string; attempt: number }, { n: string }>;
        readonly stranded: Operation<{ now: number; staleMs: number; limit: number }, { id: string }>;
        readonly saveUpstream: Operation<UpstreamSaveParams, { n: Int }>;
      }
    | undefined;

  constructor(
    private readonly pool: pg.Pool,
    jobs?: JobQueueSql,
  ) {
    this.db = new Executor(pool);
    this.withJobs = jobs && {
      insert: insertTasksWithJobs(jobs),
      insertKeyed: insertKeyedTasksWithJobs(jobs),
      release: releaseWithJob(jobs),
      stranded: requeueStranded(jobs),
      saveUpstream: saveUpstreamWithJob(jobs),
    };
  }

  private async transaction<T>(run: (db: Executor) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const result = await run(new Executor(client));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  migrate(): Promise<number[]> {
    return this.transaction(async (db) => {
      await db.run(lockMigrations, {});
      await db.execute(createVersionTable.on('postgres').text);
      const applied: number[] = [];
      for (const step of migrationSteps('postgres')) {
        if ((await db.all(isApplied, { version: step.version })).length > 0) continue;
        for (const ddl of step.statements) await db.execute(ddl);
        await db.run(recordApplied, { version: step.version, appliedAt: Date.now() });
        applied.push(step.version);
      }
      return applied;
    });
  }

  insertTask(task: NewTask): Promise<boolean> {
    return this.inserts.add(task);
  }

  private async insertBatch(tasks: readonly NewTask[]): Promise<boolean[]> {
    if (tasks.some((task) => task.idempotency)) return this.insertKeyedBatch(tasks);
    const params = taskColumns(tasks);
    if (this.withJobs) await this.db.all(this.withJobs.insert, params);
    else await this.db.all(insertTasks, params);
    return tasks.map(() => true);
  }

  /** A batch in which some tasks take idempotency keys: the rows returned are the tasks inserted. */
  private async insertKeyedBatch(tasks: readonly NewTask[]): Promise<boolean[]> {
    const params: InsertKeyedTasksParams = {
      ...taskColumns(tasks),
      keys: tasks.map((t) => t.idempotency?.key ?? ''),
      hashes: tasks.map((t) => t.idempotency?.requestHash ?? ''),
      expiredBefore: Math.min(...tasks.map((t) => t.idempotency?.expiredBefore ?? Number.POSITIVE_INFINITY)),
    };
    const rows = await this.db.all(this.withJobs?.insertKeyed ?? insertKeyedTasks, params);
    const inserted = new Set(rows.map((row) => row.id));
    return tasks.map((task) => inserted.has(task.id));
  }

  async cancelTask(id: string, owner: string, now: number): Promise<Task | undefined> {
    const [row] = await this.db.all(cancelTask, { id, owner, now });
    return row ? toTask(row) : undefined;
  }

  async listTasks(query: TaskListQuery): Promise<Task[]> {
    return (await this.db.all(listTasks, listParams(query))).map(toTask);
  }

  async findIdempotencyKey(owner: string, key: string): Promise<IdempotencyRecord | undefined> {
    const [row] = await this.db.all(findIdempotencyKey, { owner, key });
    return row ? toIdempotencyRecord(row) : undefined;
  }

  sweepIdempotencyKeys(expiredBefore: number, limit: number): Promise<number> {
    return this.db.run(sweepIdempotencyKeys, { expiredBefore, limit });
  }

  async getTask(id: string, owner: string): Promise<Task | undefined> {
    const [row] = await this.db.all(getTask, { id, owner });
    return row ? toTask(row) : undefined;
  }

  async claimTasks(workerId: string, now: number, leaseUntil: number, limit: number, skipKeys: readonly string[] = []): Promise<ClaimedTask[]> {
    const takeovers = await this.db.all(claimTakeovers, { owner: workerId, now, leaseUntil, limit });
    const rest = limit - takeovers.length;
    const queued = rest <= 0 ? [] : await this.db.all(claimQueued, { owner: workerId, now, leaseUntil, limit: rest, skipKeys: JSON.stringify(skipKeys) });
    return inClaimOrder([...takeovers, ...queued]);
  }

  claimTaskById(id: string, workerId: string, now: number, leaseUntil: number): Promise<ClaimedTask | undefined> {
    return this.claims.add({ id, workerId, now, leaseUntil });
  }

  private async claimBatch(batch: readonly ClaimRequest[]): Promise<(ClaimedTask | undefined)[]> {
    const unique = new Set(firstOfEach(batch, (request) => request.id));
    const ordered = [...unique];
    const rows = await this.db.all(claimByIds, {
      ids: ordered.map((r) => r.id),
      owners: ordered.map((r) => r.workerId),
      nows: ordered.map((r) => r.now),
      leaseUntils: ordered.map((r) => r.leaseUntil),
    });
    const won = new Map(rows.map((row) => [row.id, row]));
    return batch.map((request) => {
      const row = unique.has(request) ? won.get(request.id) : undefined;
      return row ? toClaimedTask(row) : undefined;
    });
  }

  async heartbeat(id: string, attempt: number, leaseUntil: number): Promise<boolean> {
    return (await this.db.run(heartbeat, { id, attempt, leaseUntil })) === 1;
  }

  async setProgress(id: string, attempt: number, progress: number): Promise<boolean> {
    return (await this.db.run(setProgress, { id, attempt, progress })) === 1;
  }

  complete(id: string, attempt: number, outputs: readonly TaskOutput[], now: number): Promise<boolean> {
    return this.completions.add({ id, attempt, outputs: JSON.stringify(outputs), now });
  }

  private async completeBatch(batch: readonly CompleteRequest[]): Promise<boolean[]> {
    // By attempt as well: a stale attempt's completion and the current one's may share a batch.
    const unique = new Set(firstOfEach(batch, (request) => `${request.attempt}:${request.id}`));
    const ordered = [...unique];
    const rows = await this.db.all(completeMany, {
      ids: ordered.map((r) => r.id),
      attempts: ordered.map((r) => r.attempt),
      outputs: ordered.map((r) => r.outputs),
      nows: ordered.map((r) => r.now),
    });
    const won = new Set(rows.map((row) => `${row.attempt}:${row.id}`));
    return batch.map((request) => unique.has(request) && won.has(`${request.attempt}:${request.id}`));
  }

  async fail(id: string, attempt: number, error: TaskError, now: number): Promise<boolean> {
    return (await this.db.run(fail, { id, attempt, now, error: JSON.stringify(error) })) === 1;
  }

  async release(id: string, attempt: number): Promise<boolean> {
    if (!this.withJobs) return (await this.db.run(release, { id, attempt })) === 1;
    const [row] = await this.db.all(this.withJobs.release, { id, attempt });
    return num(row?.n ?? 0) === 1;
  }

  async failAbandoned(now: number, maxAttempts: number, error: TaskError): Promise<string[]> {
    return (await this.db.all(failAbandoned, { now, maxAttempts, error: JSON.stringify(error) })).map((row) => row.id);
  }

  async leaseOwners(): Promise<string[]> {
    return (await this.db.all(leaseOwners, {})).flatMap((row) => (row.lease_owner === null ? [] : [row.lease_owner]));
  }

  expireLeases(owner: string, now: number): Promise<number> {
    return this.db.run(expireLeases, { owner, expiredAt: now - 1 });
  }

  async requeueStranded(now: number, staleMs: number): Promise<string[]> {
    if (!this.withJobs) return [];
    return (await this.db.all(this.withJobs.stranded, { now, staleMs, limit: STRANDED_BATCH })).map((row) => row.id);
  }

  async countByStatus(): Promise<Record<string, number>> {
    return Object.fromEntries((await this.db.all(countByStatus, {})).map((row) => [row.status, num(row.n)]));
  }

  async countActiveTasks(owner: string): Promise<number> {
    const [row] = await this.db.all(countActiveTasks, { owner });
    return num(row?.n ?? 0);
  }

  async activeInputParams(owner: string): Promise<string[]> {
    return (await this.db.all(activeInputParams, { owner })).map((row) => row.params);
  }

  async deleteExpiredTasks(before: number, limit: number): Promise<{ id: string; outputs: TaskOutput[] }[]> {
    // One statement per task: a sweep runs once a minute, and a final row never changes, so
    // no transaction is needed between the read and the deletes.
    const deleted: { id: string; outputs: TaskOutput[] }[] = [];
    for (const row of await this.db.all(expiredTasks, { before, limit })) {
      if ((await this.db.run(deleteTask, { id: row.id, before })) === 1) deleted.push({ id: row.id, outputs: JSON.parse(row.outputs) as TaskOutput[] });
    }
    return deleted;
  }

  async taskStatus(id: string): Promise<string | undefined> {
    const [row] = await this.db.all(taskStatus, { id });
    return row?.status;
  }

  async claimUpstreamDue(now: number, leaseUntil: number, limit: number): Promise<UpstreamTask[]> {
    return (await this.db.all(claimUpstreamDue, { now, leaseUntil, limit })).map(toUpstreamTask);
  }

  async nextUpstreamDue(): Promise<number | undefined> {
    const [row] = await this.db.all(nextUpstreamDue, {});
    return row?.due === null || row?.due === undefined ? undefined : num(row.due);
  }

  async takeUpstreamCancel(id: string): Promise<UpstreamCancelRef | undefined> {
    const [row] = await this.db.all(takeUpstreamCancel, { id });
    return row && toUpstreamCancelRef(row);
  }

  async claimUpstreamCancels(now: number, leaseUntil: number, limit: number): Promise<PendingUpstreamCancel[]> {
    return (await this.db.all(claimUpstreamCancels, { now, leaseUntil, limit })).map(toPendingCancel);
  }

  async deferUpstreamCancel(ref: UpstreamCancelRef & { readonly upstreamId: string }, at: number, intervalMs: number): Promise<boolean> {
    const params = { id: ref.id, channel: ref.channel, target: ref.target, upstreamId: ref.upstreamId, requestId: ref.requestId, at, intervalMs };
    return (await this.db.run(deferUpstreamCancel, params)) === 1;
  }

  async finishUpstreamCancel(id: string): Promise<boolean> {
    return (await this.db.run(finishUpstreamCancel, { id })) === 1;
  }

  async countUpstreamInFlight(channel: string): Promise<number> {
    const [row] = await this.db.all(countUpstreamInFlight, { channel });
    return num(row?.n ?? 0);
  }

  async saveUpstream(id: string, attempt: number, step: UpstreamStep): Promise<boolean> {
    const params = upstreamSaveParams(id, attempt, step);
    if (!this.withJobs) return (await this.db.run(saveUpstream, params)) === 1;
    const [row] = await this.db.all(this.withJobs.saveUpstream, params);
    return num(row?.n ?? 0) === 1;
  }

  async completeUpstream(id: string, attempt: number, outputs: readonly TaskOutput[], now: number, startedAt: number): Promise<boolean> {
    return (await this.db.run(completeUpstream, { id, attempt, now, outputs: JSON.stringify(outputs), startedAt })) === 1;
  }

  async failUpstream(id: string, attempt: number, error: TaskError, now: number): Promise<boolean> {
    return (await this.db.run(failUpstream, { id, attempt, now, error: JSON.stringify(error) })) === 1;
  }
  async markSubmitting(id: string, attempt: number, step: UpstreamStep, maxInFlight: number): Promise<'marked' | 'full' | 'lost'> {
    await this.db.run(ensureChannelLimit, { channel: step.channel, bucket: 'submit' });
    return this.transaction(async (db) => {
      await db.all(lockChannelSubmit, { channel: step.channel });
      // A new statement after the lock: its snapshot sees every `submitting` committed before.
      const [held] = await db.all(channelFull, { channel: step.channel, max: maxInFlight });
      if (num(held?.full ?? 0) === 1) return 'full';
      return (await db.run(saveUpstream, upstreamSaveParams(id, attempt, step))) === 1 ? 'marked' : 'lost';
    });
  }

  async reserveChannelSlot(channel: string, bucket: 'submit' | 'poll', now: number, spacingMs: number): Promise<number> {
    let [row] = await this.db.all(reserveChannelSlot, { channel, bucket, now, spacingMs });
    if (!row) {
      await this.db.run(ensureChannelLimit, { channel, bucket });
      [row] = await this.db.all(reserveChannelSlot, { channel, bucket, now, spacingMs });
    }
    return row ? num(row.at) : now;
  }

  async findKeyByHash(hash: string): Promise<{ id: string; revoked: boolean } | undefined> {
    const [row] = await this.db.all(findKeyByHash, { hash });
    return row ? { id: row.id, revoked: row.revoked_at !== null } : undefined;
  }

  async insertKey(key: { id: string; hash: string; name: string; createdAt: number }): Promise<boolean> {
    return (await this.db.run(insertKey, key)) > 0;
  }

  async countKeys(): Promise<number> {
    const [row] = await this.db.all(countKeys, {});
    return num(row?.n ?? 0);
  }

  async listKeys(): Promise<ApiKeyRecord[]> {
    return (await this.db.all(listKeys, {})).map((row) => ({
      id: row.id,
      name: row.name,
      createdAt: num(row.created_at),
      revokedAt: numOrNull(row.revoked_at),
    }));
  }

  async revokeKey(id: string, now: number): Promise<boolean> {
    return (await this.db.run(revokeKey, { id, now })) === 1;
  }

  async syncEnvKeys(hashes: readonly string[], now: number): Promise<void> {
    await this.transaction(async (db) => {
      await db.run(revokeEnvKeys, { now });
      for (const hash of hashes) await db.run(activateEnvKey, { hash });
    });
  }

  async getMeta(key: string): Promise<string | undefined> {
    const [row] = await this.db.all(getMeta, { key });
    return row?.value;
  }

  async initMeta(key: string, value: string): Promise<string> {
    await this.db.run(initMeta, { key, value });
    const stored = await this.getMeta(key);
    if (stored === undefined) throw new Error(`meta ${key} vanished after insert`);
    return stored;
  }

  async listMeta(pattern: string): Promise<Array<{ key: string; value: string }>> {
    return this.db.all(listMeta, { pattern });
  }

  async swapMeta(key: string, expected: string, value: string, also: ReadonlyArray<{ key: string; value: string }>): Promise<boolean> {
    // The swapped row stays locked to COMMIT: a concurrent swap waits, then finds the new value and fails.
    return this.transaction(async (db) => {
      if ((await db.run(swapMeta, { key, expected, value })) !== 1) return false;
      for (const row of also) await db.run(setMeta, row);
      return true;
    });
  }

  async insertWebhookEndpoint(endpoint: WebhookEndpointRecord): Promise<void> {
    await this.db.run(insertWebhookEndpoint, { ...endpoint, events: JSON.stringify(endpoint.events) });
  }

  async listWebhookEndpoints(owner: string): Promise<WebhookEndpointRecord[]> {
    return (await this.db.all(listWebhookEndpoints, { owner })).map(toEndpoint);
  }

  async countWebhookEndpoints(owner: string): Promise<number> {
    const [row] = await this.db.all(countWebhookEndpoints, { owner });
    return num(row?.n ?? 0);
  }

  async getWebhookEndpoint(id: string, owner: string | undefined): Promise<WebhookEndpointRecord | undefined> {
    const [row] = await this.db.all(getWebhookEndpoint, { id, owner: owner ?? '' });
    return row ? toEndpoint(row) : undefined;
  }

  deleteWebhookEndpoint(id: string, owner: string): Promise<boolean> {
    return this.transaction(async (db) => {
      if ((await db.run(deleteWebhookEndpoint, { id, owner })) !== 1) return false;
      await db.run(deleteWebhookAttempts, { endpointId: id });
      await db.run(deleteWebhookDeliveries, { endpointId: id });
      return true;
    });
  }

  announceTasks(
    limit: number,
    now: number,
    plan: (task: Task, endpoints: readonly WebhookEndpointRecord[]) => NewWebhookDelivery[],
  ): Promise<{ tasks: number; deliveries: number }> {
    return this.transaction(async (db) => {
      const tasks = (await db.all(pickUnannounced, { limit })).map(toTask);
      if (tasks.length === 0) return { tasks: 0, deliveries: 0 };
      const endpointsOf = new Map<string, WebhookEndpointRecord[]>();
      let deliveries = 0;
      for (const task of tasks) {
        let endpoints = endpointsOf.get(task.owner);
        if (endpoints === undefined) {
          endpoints = (await db.all(listWebhookEndpoints, { owner: task.owner })).map(toEndpoint);
          endpointsOf.set(task.owner, endpoints);
        }
        for (const delivery of endpoints.length === 0 ? [] : plan(task, endpoints)) {
          await db.run(insertWebhookDelivery, { ...delivery, now });
          deliveries += 1;
        }
      }
      await db.run(markAnnouncedMany, { ids: tasks.map((task) => task.id) });
      return { tasks: tasks.length, deliveries };
    });
  }

  async claimWebhookDeliveries(owner: string, now: number, leaseUntil: number, limit: number): Promise<ClaimedDelivery[]> {
    return (await this.db.all(claimWebhookDeliveries, { owner, now, leaseUntil, limit })).map(toClaimedDelivery);
  }

  async nextWebhookDue(): Promise<number | undefined> {
    const [row] = await this.db.all(nextWebhookDue, {});
    return row?.due === null || row?.due === undefined ? undefined : num(row.due);
  }

  settleWebhookDelivery(result: WebhookAttemptResult): Promise<boolean> {
    return this.transaction(async (db) => {
      if ((await db.run(settleWebhookDelivery, result)) !== 1) return false;
      await db.run(insertWebhookAttempt, { ...result, deliveryId: result.id, attempt: result.attempts });
      return true;
    });
  }

  async dropWebhookDelivery(id: string): Promise<void> {
    await this.db.run(dropWebhookDelivery, { id });
  }

  async redeliverWebhook(id: string, endpointId: string, now: number): Promise<boolean> {
    return (await this.db.run(redeliverWebhook, { id, endpointId, now })) === 1;
  }

  async getWebhookDelivery(id: string, endpointId: string): Promise<WebhookDeliveryRecord | undefined> {
    const [row] = await this.db.all(getWebhookDelivery, { id, endpointId });
    return row ? toDelivery(row) : undefined;
  }

  async listWebhookDeliveries(
    endpointId: string,
    after: string | undefined,
    limit: number,
  ): Promise<{ delivery: WebhookDeliveryRecord; attempts: WebhookAttemptRecord[] }[]> {
    const deliveries = (await this.db.all(listWebhookDeliveries, { endpointId, after: after ?? FIRST_DELIVERY_PAGE, limit })).map(toDelivery);
    const high = deliveries[0]?.id;
    const low = deliveries.at(-1)?.id;
    if (high === undefined || low === undefined) return [];
    return withAttempts(deliveries, (await this.db.all(listWebhookAttempts, { endpointId, low, high })).map(toAttempt));
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

interface ClaimRequest {
  readonly id: string;
  readonly workerId: string;
  readonly now: number;
  readonly leaseUntil: number;
}

interface CompleteRequest {
  readonly id: string;
  readonly attempt: number;
  readonly outputs: string;
  readonly now: number;
}

/**
 * The first request for each key, sorted by id (one lock order for every batch): a second
 * request for the same key could not have won anyway (a claim of a task another call of the
 * batch claims; a second settle of the same attempt).
 */
function firstOfEach<T extends { readonly id: string }>(batch: readonly T[], key: (request: T) => string): T[] {
  const first = new Map<string, T>();
  for (const request of batch) if (!first.has(key(request))) first.set(key(request), request);
  return [...first.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * Whether a failed batch statement certainly changed nothing, so its rows may each be tried
 * again alone: the server refused it (one statement is its own transaction, rolled back on any
 * error the server reports). A lost connection is different: the statement may have committed,
 * and a second try would find its rows changed and report the claims or settles as lost (a
 * completed render's outputs deleted, a claimed task left to its lease).
 */
function refusedByServer(error: unknown): boolean {
  return error instanceof pg.DatabaseError;
}
