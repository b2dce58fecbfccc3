import type { Schema } from './validate.js';

/** The HTTP API as the console uses it: the key travels in Authorization on every call, never in a cookie. */

export interface ModelInfo {
  readonly id: string;
  readonly kind: 'video' | 'image';
  readonly endpoint: string;
  /** Absent from a server older than display names: the console shows the id then. */
  readonly display_name?: string;
  readonly family?: string;
  readonly summary?: string;
  readonly description: string;
  readonly schema: Schema;
  /** Present when the server has a pricing file. */
  readonly pricing?: ModelPricing;
}

/** cost = per_task + per_second x billed seconds + per_image x images; amounts with at most 6 decimals. */
export interface ModelPricing {
  readonly currency: string;
  readonly per_task?: number;
  readonly per_second?: number | Readonly<Record<string, number>>;
  readonly per_image?: number;
}

/** What a final task was billed (null until final). */
export interface TaskUsage {
  readonly seconds: number;
  readonly images: number;
  readonly cost: number;
  readonly currency: string;
}

export interface UsageTotals {
  readonly tasks: number;
  readonly seconds: number;
  readonly images: number;
  readonly cost: number;
}

/** A row of a usage report; a dimension not grouped by is null. */
export interface UsageRow extends UsageTotals {
  readonly key_id?: string | null;
  readonly model: string | null;
  readonly day: string | null;
}

export interface UsageBudget {
  readonly budget: number | null;
  readonly budget_period: 'day' | 'month' | null;
  readonly spent: number;
  readonly reserved: number;
  readonly resets_at: number | null;
}

/** `GET /v1/usage` (with `budget`) and `GET /v1/admin/usage` (without). */
export interface UsageReport {
  readonly object: 'usage';
  readonly currency: string;
  /** [start, end) in unix seconds, whole UTC days. */
  readonly start: number;
  readonly end: number;
  readonly totals: UsageTotals;
  readonly data: readonly UsageRow[];
  readonly budget?: UsageBudget;
}

/** One task of `GET /v1/tasks/recent`: what a person recognises it by. */
export interface RecentTask {
  readonly id: string;
  readonly kind: 'video' | 'image';
  readonly model: string;
  readonly model_name: string;
  readonly status: string;
  readonly prompt: string;
  readonly duration: number | null;
  readonly resolution: string | null;
  readonly size: string | null;
  readonly run_ms: number | null;
  readonly usage: TaskUsage | null;
  readonly output: string | null;
}

/** A model among the recent tasks: its median run time and newest output. */
export interface RecentModel {
  readonly model: string;
  readonly completed: number;
  readonly median_run_ms: number | null;
  readonly example: { readonly task_id: string; readonly kind: 'video' | 'image'; readonly prompt: string; readonly url: string } | null;
}

export interface RecentTasks {
  readonly data: readonly RecentTask[];
  readonly models: readonly RecentModel[];
}

/** A client key as the admin API shows it. */
export interface AdminKey {
  readonly id: string;
  readonly name: string;
  readonly budget: number | null;
  readonly budget_period: 'day' | 'month' | null;
  readonly models: readonly string[] | null;
  readonly rate_limit_per_min: number | null;
  readonly max_tasks_in_flight: number | null;
  readonly created_at: number;
  readonly disabled: boolean;
  readonly spent: number;
  readonly reserved: number;
  /** Only in the answer to a create. */
  readonly key?: string;
}

/** The settings a create or a change sends (null clears one). */
export interface KeySettings {
  name?: string;
  budget?: number | null;
  budget_period?: 'day' | 'month' | null;
  models?: string[] | null;
  rate_limit_per_min?: number | null;
  max_tasks_in_flight?: number | null;
  disabled?: boolean;
}

export interface VideoTask {
  id: string;
  object: string;
  model: string;
  status: string;
  progress: number | null;
  outputs: { type: string; url: string }[];
  created_at: number;
  started_at: number | null;
  completed_at: number | null;
  error: { type: string; code: string; message: string; param: string } | null;
  usage?: TaskUsage | null;
}

export interface ImageTaskData {
  task_id: string;
  status: string;
  progress: string;
  outputs: string[];
  submit_time: number;
  start_time: number;
  finish_time: number;
  fail_reason: string;
  usage?: TaskUsage | null;
}

/** One shape for both families, in video words. */
export interface TaskView {
  id: string;
  kind: 'video' | 'image';
  model: string;
  status: 'queued' | 'processing' | 'completed' | 'failed' | 'cancelled';
  progress: number;
  outputs: string[];
  failure: string;
  /** Billed seconds, images and cost once final; null before (or from a server without usage). */
  usage: TaskUsage | null;
  raw: unknown;
  /** The request body, for a task made in this tab (its data URLs left out): reopening it restores the form. */
  request?: Record<string, unknown>;
}

const IMAGE_STATUS: Record<string, TaskView['status']> = {
  QUEUED: 'queued',
  IN_PROGRESS: 'processing',
  SUCCESS: 'completed',
  FAILURE: 'failed',
  CANCELLED: 'cancelled',
};

export const isFinal = (status: TaskView['status']): boolean => status === 'completed' || status === 'failed' || status === 'cancelled';

export function viewOfVideo(task: VideoTask, raw: unknown = task): TaskView {
  const status = (['queued', 'processing', 'completed', 'failed', 'cancelled'].includes(task.status) ? task.status : 'queued') as TaskView['status'];
  return {
    id: task.id,
    kind: 'video',
    model: task.model,
    status,
    progress: task.progress ?? 0,
    outputs: task.outputs.map((o) => o.url),
    failure: task.error ? `${task.error.code}: ${task.error.message}` : '',
    usage: task.usage ?? null,
    raw,
  };
}

export function viewOfImage(data: ImageTaskData, model: string, raw: unknown): TaskView {
  return {
    id: data.task_id,
    kind: 'image',
    model,
    status: IMAGE_STATUS[data.status] ?? 'queued',
    progress: Number.parseInt(data.progress, 10) || 0,
    outputs: data.outputs,
    failure: data.fail_reason,
    usage: data.usage ?? null,
    raw,
  };
}

/** A refusal as the server sent it, with the code and param of either envelope. */
export class ApiRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly param: string,
    readonly body: unknown,
    readonly text: string,
  ) {
    super(`HTTP ${status} ${code}`);
  }
}

function refusal(status: number, text: string): ApiRefusal {
  let body: unknown = text;
  let code = '';
  let param = '';
  try {
    body = JSON.parse(text) as unknown;
    if (typeof body === 'object' && body !== null) {
      const record = body as Record<string, unknown>;
      const error = (typeof record['error'] === 'object' && record['error'] !== null ? record['error'] : record) as Record<string, unknown>;
      code = typeof error['code'] === 'string' ? error['code'] : '';
      param = typeof error['param'] === 'string' ? error['param'] : '';
    }
  } catch {
    // Not JSON (a proxy's page): shown as it came.
  }
  return new ApiRefusal(status, code, param, body, text);
}

/** True when a refusal means "this server has no such operation" (a 404/405 from the router, not about a task). */
export const isMissingOperation = (error: unknown): boolean =>
  error instanceof ApiRefusal && (error.status === 405 || (error.status === 404 && error.code !== 'task_not_found'));

export class Api {
  constructor(private readonly key: () => string) {}

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { authorization: `Bearer ${this.key()}`, ...extra };
  }

  async request(method: string, path: string, body?: string, signal?: AbortSignal): Promise<unknown> {
    const init: RequestInit = { method, headers: this.headers(body === undefined ? {} : { 'content-type': 'application/json' }), cache: 'no-store' };
    if (body !== undefined) init.body = body;
    if (signal) init.signal = signal;
    const response = await fetch(path, init);
    const text = await response.text();
    if (!response.ok) throw refusal(response.status, text);
    return JSON.parse(text) as unknown;
  }

  async models(): Promise<ModelInfo[]> {
    const list = (await this.request('GET', '/v1/models')) as { data: ModelInfo[] };
    return list.data;
  }

  async create(model: ModelInfo, json: string): Promise<TaskView> {
    if (model.kind === 'video') {
      const task = (await this.request('POST', '/v1/video/generations', json)) as VideoTask;
      return viewOfVideo(task);
    }
    const created = (await this.request('POST', '/v1/images/generations/async', json)) as { data: { task_id: string } };
    return this.get('image', created.data.task_id, model.id);
  }

  async get(kind: 'video' | 'image', id: string, model: string, signal?: AbortSignal): Promise<TaskView> {
    if (kind === 'video') {
      const task = (await this.request('GET', `/v1/video/generations/${encodeURIComponent(id)}`, undefined, signal)) as VideoTask;
      return viewOfVideo(task);
    }
    const envelope = (await this.request('GET', `/v1/images/generations/async/${encodeURIComponent(id)}`, undefined, signal)) as { data: ImageTaskData };
    return viewOfImage(envelope.data, model, envelope);
  }

  async cancel(task: TaskView): Promise<TaskView> {
    if (task.kind === 'video') return viewOfVideo((await this.request('POST', `/v1/video/generations/${encodeURIComponent(task.id)}/cancel`)) as VideoTask);
    const envelope = (await this.request('POST', `/v1/images/generations/async/${encodeURIComponent(task.id)}/cancel`)) as { data: ImageTaskData };
    return viewOfImage(envelope.data, task.model, envelope);
  }

  /** The list operation (decisions §8.2), both families. */
  async list(
    kind: 'video' | 'image',
    query: { limit: number; after?: string; status?: string; model?: string },
  ): Promise<{ items: TaskView[]; hasMore: boolean; lastId: string | null }> {
    const params = new URLSearchParams({ limit: String(query.limit) });
    if (query.after) params.set('after', query.after);
    if (query.status) params.set('status', query.status);
    if (query.model) params.set('model', query.model);
    if (kind === 'video') {
      const page = (await this.request('GET', `/v1/video/generations?${params}`)) as { data: VideoTask[]; has_more: boolean; last_id: string | null };
      return { items: page.data.map((t) => viewOfVideo(t)), hasMore: page.has_more, lastId: page.last_id };
    }
    const page = (await this.request('GET', `/v1/images/generations/async?${params}`)) as {
      data: { items: (ImageTaskData & { model?: string })[]; has_more: boolean; last_id: string | null };
    };
    return { items: page.data.items.map((d) => viewOfImage(d, d.model ?? '', d)), hasMore: page.data.has_more, lastId: page.data.last_id };
  }

  /** `GET /v1/tasks/recent`: the newest tasks with prompts, and per model run times and an example. */
  async recent(limit = 100): Promise<RecentTasks> {
    return (await this.request('GET', `/v1/tasks/recent?limit=${limit}`)) as RecentTasks;
  }

  /** `GET /v1/usage`: this key's usage by model and day, and its budget. Times in unix seconds. */
  async usage(range: { start?: number; end?: number } = {}): Promise<UsageReport> {
    return (await this.request('GET', `/v1/usage${rangeQuery(range)}`)) as UsageReport;
  }

  /**
   * Whether the key is an admin key: `GET /v1/admin/keys` answers 200 for one (401, 403 or 404
   * for anything else). Asked only after a client operation refused the key, so a client key
   * never meets a refusal.
   */
  async isAdmin(): Promise<boolean> {
    try {
      await this.request('GET', '/v1/admin/keys?limit=1');
      return true;
    } catch (error) {
      if (error instanceof ApiRefusal && [401, 403, 404].includes(error.status)) return false;
      throw error;
    }
  }

  async adminKeys(after?: string): Promise<{ data: AdminKey[]; hasMore: boolean; lastId: string | null }> {
    const params = new URLSearchParams({ limit: '100' });
    if (after) params.set('after', after);
    const page = (await this.request('GET', `/v1/admin/keys?${params}`)) as { data: AdminKey[]; has_more: boolean; last_id: string | null };
    return { data: page.data, hasMore: page.has_more, lastId: page.last_id };
  }

  async createKey(settings: KeySettings): Promise<AdminKey> {
    return (await this.request('POST', '/v1/admin/keys', JSON.stringify(settings))) as AdminKey;
  }

  async updateKey(id: string, settings: KeySettings): Promise<AdminKey> {
    return (await this.request('PATCH', `/v1/admin/keys/${encodeURIComponent(id)}`, JSON.stringify(settings))) as AdminKey;
  }

  async revokeKey(id: string): Promise<void> {
    const response = await fetch(`/v1/admin/keys/${encodeURIComponent(id)}`, { method: 'DELETE', headers: this.headers(), cache: 'no-store' });
    // 200 with a body or 204 without: either is done.
    if (!response.ok) throw refusal(response.status, await response.text());
  }

  /** `GET /v1/admin/usage`, grouped as asked (`key`, `model`, `day`, comma-separated). */
  async adminUsage(groupBy: string, range: { start?: number; end?: number } = {}, keyId?: string): Promise<UsageReport> {
    const query = rangeQuery(range);
    const params = new URLSearchParams(query.slice(1));
    params.set('group_by', groupBy);
    if (keyId) params.set('key_id', keyId);
    return (await this.request('GET', `/v1/admin/usage?${params}`)) as UsageReport;
  }
}

function rangeQuery(range: { start?: number; end?: number }): string {
  const params = new URLSearchParams();
  if (range.start !== undefined) params.set('start', String(range.start));
  if (range.end !== undefined) params.set('end', String(range.end));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}
