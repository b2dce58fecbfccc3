import type { ModelKind, ResolvedParams } from '../catalog/index.js';
import type {
  ClaimedTask,
  IdempotencyRecord,
  Task,
  TaskError,
  TaskListQuery,
  TaskOutput,
  TaskStatus,
  TaskUsage,
  UpstreamCancelRef,
  PendingUpstreamCancel,
  UpstreamState,
  UpstreamStep,
  UpstreamTask,
} from './records.js';

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
  'version',
  'usage_seconds',
  'usage_images',
  'cost',
] as const;

/** What a claim returns: a worker needs the parameters and the lease owner too. */
export const CLAIMED_COLUMNS = [...TASK_COLUMNS, 'params', 'lease_owner'] as const;

/** `t.a, t.b, ...`: a column list for SQL text. */
export function columns(list: readonly string[], table?: string): string {
  return list.map((column) => (table ? `${table}.${column}` : column)).join(', ');
}

/** BIGINT columns and counts: numbers on SQLite, strings on PostgreSQL (dialect.ts). */
export type Int = number | string;

export interface TaskRow {
  id: string;
  kind: string;
  model: string;
  owner: string;
  status: string;
  progress: number | null;
  created_at: Int;
  started_at: Int | null;
  completed_at: Int | null;
  /** JSON of TaskError. */
  error: string | null;
  /** JSON array of TaskOutput. */
  outputs: string;
  attempt: Int;
  version: Int;
  usage_seconds: Int | null;
  usage_images: Int | null;
  cost: Int | null;
}

/** A row as a claim returns it. */
export type ClaimedRow = TaskRow & { params: string; lease_owner: string | null };

// PostgreSQL returns BIGINT as a string; SQLite returns numbers. Normalise once, here.
export const num = (value: Int): number => (typeof value === 'number' ? value : Number(value));
export const numOrNull = (value: Int | null): number | null => (value === null ? null : num(value));

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
    version: num(row.version),
    usage: usageOf(row),
  };
}

const FINAL: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

/** A final task's usage; tasks final before migration 9 (no figures) show zeros. */
function usageOf(row: TaskRow): TaskUsage | null {
  if (!FINAL.has(row.status)) return null;
  return {
    seconds: row.usage_seconds === null ? 0 : num(row.usage_seconds),
    images: row.usage_images === null ? 0 : num(row.usage_images),
    cost: row.cost === null ? 0 : num(row.cost),
  };
}

export function toClaimedTask(row: ClaimedRow): ClaimedTask {
  return { ...toTask(row), params: JSON.parse(row.params) as ResolvedParams, leaseOwner: row.lease_owner ?? '' };
}

/** Claimed rows in the order they are due: RETURNING promises no order. */
export function inClaimOrder(rows: readonly ClaimedRow[]): ClaimedTask[] {
  return rows.map(toClaimedTask).sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export interface CountRow {
  n: Int;
}

export interface IdempotencyKeyRow {
  kind: string;
  request_hash: string;
  task_id: string;
  created_at: Int;
}

export function toIdempotencyRecord(row: IdempotencyKeyRow): IdempotencyRecord {
  return { kind: row.kind, requestHash: row.request_hash, taskId: row.task_id, createdAt: num(row.created_at) };
}

export interface ListTasksParams {
  owner: string;
  kind: string;
  /** '' for any status. */
  status: string;
  /** '' for any model. */
  model: string;
  /** The page starts after this id; '~' (above every id) for the first page. */
  after: string;
  limit: number;
}

/** Above every task id (`vid_`, `img_` and base64url sort below `~`): the first page's cursor. */
const FIRST_PAGE = '~';

export function listParams(query: TaskListQuery): ListTasksParams {
  return {
    owner: query.owner,
    kind: query.kind,
    status: query.status ?? '',
    model: query.model ?? '',
    after: query.after ?? FIRST_PAGE,
    limit: query.limit,
  };
}

export interface UpstreamRow {
  id: string;
  kind: string;
  model: string;
  owner: string;
  status: string;
  progress: number | null;
  created_at: Int;
  started_at: Int | null;
  params: string;
  attempt: Int;
  channel: string;
  target: Int;
  upstream_id: string | null;
  upstream_state: string | null;
  upstream_request_id: string | null;
  upstream_since: Int | null;
  check_interval_ms: Int | null;
}

export function toUpstreamTask(row: UpstreamRow): UpstreamTask {
  return {
    id: row.id,
    kind: row.kind as ModelKind,
    model: row.model,
    owner: row.owner,
    status: row.status === 'processing' ? 'processing' : 'queued',
    progress: row.progress,
    createdAt: num(row.created_at),
    startedAt: numOrNull(row.started_at),
    params: JSON.parse(row.params) as ResolvedParams,
    attempt: num(row.attempt),
    channel: row.channel,
    target: num(row.target),
    upstreamId: row.upstream_id,
    upstreamState: row.upstream_state as UpstreamState | null,
    requestId: row.upstream_request_id,
    since: numOrNull(row.upstream_since),
    intervalMs: numOrNull(row.check_interval_ms),
  };
}

/** A cancelled task's upstream job, as the upstream cancel needs it. */
export interface UpstreamCancelRow {
  id: string;
  model: string;
  channel: string;
  target: Int;
  upstream_id: string | null;
  upstream_request_id: string | null;
}

/** A cancel still owed to an upstream, as claimUpstreamCancels returns it. */
export interface PendingCancelRow extends UpstreamCancelRow {
  completed_at: Int | null;
  check_interval_ms: Int | null;
}

export function toPendingCancel(row: PendingCancelRow): PendingUpstreamCancel {
  return { ...toUpstreamCancelRef(row), completedAt: numOrNull(row.completed_at), intervalMs: numOrNull(row.check_interval_ms) };
}

export function toUpstreamCancelRef(row: UpstreamCancelRow): UpstreamCancelRef {
  return {
    id: row.id,
    model: row.model,
    channel: row.channel,
    target: num(row.target),
    upstreamId: row.upstream_id,
    requestId: row.upstream_request_id,
  };
}

export interface UpstreamSaveParams {
  id: string;
  attempt: number;
  status: string;
  channel: string;
  target: number;
  upstreamState: string | null;
  upstreamId: string | null;
  requestId: string | null;
  since: number | null;
  nextCheckAt: number | null;
  intervalMs: number | null;
  progress: number | null;
  startedAt: number | null;
}

export function upstreamSaveParams(id: string, attempt: number, step: UpstreamStep): UpstreamSaveParams {
  return {
    id,
    attempt,
    status: step.status,
    channel: step.channel,
    target: step.target,
    upstreamState: step.upstreamState,
    upstreamId: step.upstreamId,
    requestId: step.requestId,
    since: step.since,
    nextCheckAt: step.nextCheckAt,
    intervalMs: step.intervalMs,
    progress: step.progress,
    startedAt: step.startedAt,
  };
}
