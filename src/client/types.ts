/**
 * Response shapes of the mediagate API (docs/interface.md), as the SDK returns them, and the
 * options of its calls. The request shapes are generated per model in models.generated.ts, the
 * task bodies from the server's wire shapes in wire.generated.ts.
 *
 * Glossary
 * - family: `video` (`/v1/video/...`, the task object) or `image` (`/v1/images/...`, an envelope
 *   `{code, message, data}` that the SDK unwraps).
 * - snapshot: one observation of a task of either family in one shape (`TaskSnapshot`), used by
 *   progress callbacks and the CLI.
 */

import type { ImageTask, ImageTaskStatus, TaskStatus, VideoTask } from './wire.generated.js';

// The task bodies are generated from the server's wire shapes (scripts/generate-client-types.ts).
export type { ImageTask, ImageTaskCreated, ImageTaskStatus, TaskError, TaskStatus, VideoTask } from './wire.generated.js';
// So is `GET /v1/tasks/recent`'s answer, from its route's schemas.
export type { RecentModel, RecentTask, RecentTasks } from './wire.generated.js';

export type TaskKind = 'video' | 'image';

/**
 * What a final task was billed (docs/usage-and-budgets.md): the delivered video's seconds
 * (rounded, at least 1) or images, and their cost in `currency` (the server's pricing file's,
 * `USD` without one). Failed and cancelled tasks cost 0. `usage` on a task is null until it is final.
 */
export type TaskUsage = NonNullable<VideoTask['usage']>;

/** One task of either family, observed once, in one shape. */
export interface TaskSnapshot<T extends VideoTask | ImageTask = VideoTask | ImageTask> {
  readonly kind: TaskKind;
  readonly id: string;
  readonly status: TaskStatus;
  /** 0-100, or null when the server has not reported any. */
  readonly progress: number | null;
  /** Output URLs. */
  readonly outputs: readonly string[];
  readonly error: { readonly code: string; readonly param: string; readonly message: string } | null;
  /** The family's own object, as returned by `get`. */
  readonly task: T;
}

export interface ProgressEvent<T extends VideoTask | ImageTask = VideoTask | ImageTask> extends TaskSnapshot<T> {
  /** Milliseconds since the wait started. */
  readonly elapsedMs: number;
}

/** One model of `GET /v1/models`. */
export interface ModelInfo {
  readonly id: string;
  readonly object: 'model';
  readonly kind: TaskKind;
  /** The creation path, e.g. `/v1/video/generations`. */
  readonly endpoint: string;
  /** The model's name for people, e.g. `FamW 2.7 Text to Video`. */
  readonly display_name: string;
  /** The vendor's model family, e.g. `FamW`. */
  readonly family: string;
  /** One line. */
  readonly summary: string;
  /** One paragraph: what the model does, its inputs, durations and resolutions. */
  readonly description: string;
  /** The JSON Schema of the model's request body, the one the server validates with. */
  readonly schema: { readonly [key: string]: unknown };
  /** What a task of this model costs; present only when the server has a pricing file. */
  readonly pricing?: ModelPricing;
  /** A declared model's deprecation and retirement, when its operator set them (docs/guides/models.md). */
  readonly lifecycle?: ModelLifecycle;
}

/** When a model stops being recommended (`deprecated`) and offered (`retired`); RFC 3339 dates. */
export interface ModelLifecycle {
  readonly deprecated: boolean;
  readonly deprecated_at?: string;
  readonly retires_at?: string;
  /** The model to move to. */
  readonly successor?: string;
  /** Present (true) from `retires_at` on: creates are refused; only GET /v1/models/{id} still shows the model. */
  readonly retired?: true;
}

/**
 * A model's price: cost = per_task + per_second x billed seconds + per_image x images. Amounts
 * are numbers with at most 6 decimals; a model with no price shows only `currency` (it costs 0).
 */
export interface ModelPricing {
  /** Three capital letters, e.g. `USD`. */
  readonly currency: string;
  readonly per_task?: number;
  /** One amount, or amounts by the task's `resolution` (`"*"`: any other value). */
  readonly per_second?: number | { readonly [resolution: string]: number };
  readonly per_image?: number;
}

/** Per-call options; each overrides the client's setting for this call only. */
export interface RequestOptions {
  readonly signal?: AbortSignal;
  /** Milliseconds before one HTTP attempt is abandoned with a TimeoutError. */
  readonly timeout?: number;
  /** Retries of this call (reads only; see ClientOptions.maxRetries). */
  readonly maxRetries?: number;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * How `wait` and `createAndWait` poll. A poll that fails with a transient error (connection,
 * timeout, 429, 5xx) after its own retries is tried again at the next interval; five such polls in
 * a row end the wait with that error. Any other error ends it at once.
 */
export interface WaitOptions<T extends VideoTask | ImageTask> {
  /** Stops waiting (an AbortError carrying `taskId`); the task keeps running on the server. */
  readonly signal?: AbortSignal;
  /** Called with the first observation and then whenever the status or progress changes. */
  readonly onProgress?: (event: ProgressEvent<T>) => void;
  /**
   * Milliseconds between polls at first; default 1000. While nothing changes the interval grows
   * by half at each poll up to `maxPollInterval`, and it drops back when progress moves. A
   * `Retry-After` on a poll's response is honoured when longer.
   */
  readonly pollInterval?: number;
  /** Longest interval between polls, in milliseconds; default 10000. */
  readonly maxPollInterval?: number;
  /** Options of each HTTP call (timeout, retries, headers); its signal is `signal` above. */
  readonly request?: Omit<RequestOptions, 'signal'>;
  /**
   * Follow the task's event stream (`GET .../{id}/events`) instead of polling; default true. The
   * wait polls anyway when the server has no events endpoint (404/405) or the stream keeps failing.
   */
  readonly events?: boolean;
}

/** Options of `createAndWait`: a wait, and the create's idempotency key. */
export interface CreateAndWaitOptions<T extends VideoTask | ImageTask> extends WaitOptions<T> {
  readonly idempotencyKey?: string;
}

/** Options of a create. */
export interface CreateOptions extends RequestOptions {
  /**
   * Sent as `Idempotency-Key` (1-255 printable ASCII characters). For 24 hours the same key with
   * the same body answers with the first task instead of creating another
   * (`withResponse().response.idempotentReplayed` is then true), so with a key the create is
   * also retried on 5xx and broken connections. The same key with another body is an
   * UnprocessableEntityError (`idempotency_key_reused`); while the first request is still being
   * processed the server answers ConflictError (`idempotency_key_in_use`), which is retried.
   */
  readonly idempotencyKey?: string;
}

/** Options of `events`: one task's live states. */
export interface EventsOptions {
  /** Ends the stream (an AbortError). */
  readonly signal?: AbortSignal;
  /** Resume after this event id (sent as `Last-Event-ID`), e.g. a previous stream's `lastEventId`. */
  readonly lastEventId?: string;
  /** Connections in a row that may fail (no event received) before a StreamError; default 5. */
  readonly maxReconnects?: number;
  /** Milliseconds before reconnecting at first (doubling while connections fail); default 1000, or the server's `retry:`. */
  readonly reconnectDelay?: number;
  /** Milliseconds without a byte (events or heartbeats) before the connection is reopened; default 60000. */
  readonly idleTimeout?: number;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Query of `videos.list` (decisions §8.2). */
export interface VideoListParams {
  /** 1-100; default 20 (server side). */
  readonly limit?: number;
  /** A video task id: the page starts right after it. */
  readonly after?: string;
  readonly status?: TaskStatus;
  readonly model?: string;
}

/** Query of `images.list`, with the image family's status words. */
export interface ImageListParams {
  readonly limit?: number;
  readonly after?: string;
  readonly status?: ImageTaskStatus;
  readonly model?: string;
}

/** `GET /v1/video/generations`. */
export interface VideoTaskList {
  readonly object: 'list';
  readonly data: readonly VideoTask[];
  readonly has_more: boolean;
  readonly last_id: string | null;
}

/** The `data` of `GET /v1/images/generations/async`. */
export interface ImageTaskList {
  readonly items: readonly ImageTask[];
  readonly has_more: boolean;
  readonly last_id: string | null;
}

/** The image family's envelope, as a status poll (and a webhook delivery's `data`) carries it. */
export interface ImageEnvelope<T> {
  readonly code: string;
  readonly message: string;
  readonly data: T;
}

/** The events a webhook endpoint can subscribe to (decisions §8.5). */
export type WebhookEventType = 'video.completed' | 'video.failed' | 'video.cancelled' | 'image.completed' | 'image.failed' | 'image.cancelled';

export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = [
  'video.completed',
  'video.failed',
  'video.cancelled',
  'image.completed',
  'image.failed',
  'image.cancelled',
];

/** A registered webhook endpoint. */
export interface WebhookEndpoint {
  readonly id: string;
  readonly url: string;
  readonly events: readonly WebhookEventType[];
  /** Other fields the server adds (e.g. `created_at`). */
  readonly [key: string]: unknown;
}

/** `POST /v1/webhooks`: the endpoint and its signing secret, shown this once. */
export interface WebhookEndpointCreated extends WebhookEndpoint {
  /** `whsec_...`: pass it to `verifyWebhook`/`unwrapWebhook` in the receiver. */
  readonly secret: string;
}

/** One attempt of a delivery, as the delivery log shows it. */
export interface WebhookDeliveryAttempt {
  readonly attempt: number;
  /** Unix seconds when it started. */
  readonly at: number;
  /** The receiver's HTTP status; null when it gave none (timeout, network, address refused). */
  readonly status_code: number | null;
  readonly error: string | null;
  readonly duration_ms: number;
}

/** One event for one endpoint: its id is the `webhook-id` of every attempt. */
export interface WebhookDelivery {
  readonly id: string;
  readonly object: 'webhook.delivery';
  readonly webhook_id: string;
  readonly type: WebhookEventType;
  readonly task_id: string;
  readonly status: 'pending' | 'succeeded' | 'failed';
  readonly attempts: number;
  readonly next_attempt_at: number | null;
  readonly last_status_code: number | null;
  readonly last_error: string | null;
  readonly created_at: number;
  readonly updated_at: number;
  readonly attempt_log: readonly WebhookDeliveryAttempt[];
}

export interface WebhookDeliveryListParams {
  /** 1-100, default 20. */
  readonly limit?: number;
  /** A delivery id: the page starts right after it. */
  readonly after?: string;
}

export interface WebhookCreateParams {
  /** An `https://` URL the service can reach (the media input address policy applies). */
  readonly url: string;
  /** Default: all six. */
  readonly events?: readonly WebhookEventType[];
}

/** The body of a webhook delivery: `data` is the task as a status poll returns it. */
export type WebhookEvent =
  | { readonly type: 'video.completed' | 'video.failed' | 'video.cancelled'; readonly timestamp: string | number; readonly data: VideoTask }
  | { readonly type: 'image.completed' | 'image.failed' | 'image.cancelled'; readonly timestamp: string | number; readonly data: ImageEnvelope<ImageTask> };

/**
 * Parameters checked only by the server, for requests built at run time (a form, the CLI) or
 * a model newer than this SDK. Prefer the typed `create`.
 */
export interface UncheckedParams {
  readonly model: string;
  readonly prompt: string;
  readonly [key: string]: unknown;
}

/** Query of `client.tasks.recent`. */
export interface RecentTasksParams {
  /** How many tasks, 1-100; default 20 (server side). */
  readonly limit?: number;
}

/** A budget's period: a UTC calendar day or month; null is a lifetime budget. */
export type BudgetPeriod = 'day' | 'month';

/** What `client.usage.retrieve` can group by: `model`, `day` or both (the default). */
export type UsageDimension = 'model' | 'day';

/** What the admin report can group by: also `key`. */
export type AdminUsageDimension = 'key' | UsageDimension;

/** A time as the usage query takes it: unix seconds, or a Date. */
export type UsageTime = number | Date;

/** Query of `client.usage.retrieve`. */
export interface UsageParams<D extends UsageDimension = UsageDimension> {
  /**
   * From this time (taken back to the start of its UTC day). Default: the start of the key's
   * budget period, else 30 days before `end`.
   */
  readonly start?: UsageTime;
  /** Until this time (taken forward to the end of its UTC day). Default: the end of today, or of the budget period. */
  readonly end?: UsageTime;
  /** One dimension or several; default both. A row's other dimension is null (`model: null` when grouped by day only). */
  readonly groupBy?: D | readonly D[];
}

/** Query of `admin.usage.retrieve`: the same report across keys. */
export interface AdminUsageParams<D extends AdminUsageDimension = AdminUsageDimension> {
  readonly start?: UsageTime;
  readonly end?: UsageTime;
  /** Default: all three, `key`, `model` and `day`. */
  readonly groupBy?: D | readonly D[];
  /** Only this key's usage. */
  readonly keyId?: string;
}

/** `admin.usage.export(...)`: the spend of every key, model and UTC day from `from` through `to`. */
export interface AdminUsageExportParams {
  /** Only `focus`: the FinOps FOCUS CSV. */
  readonly format: 'focus';
  /** The first UTC day, `YYYY-MM-DD`. */
  readonly from: string;
  /** The last UTC day, `YYYY-MM-DD` (included). */
  readonly to: string;
}

/** Counts and cost of final tasks; `tasks` includes failed and cancelled ones (cost 0). */
export interface UsageTotals {
  readonly tasks: number;
  readonly seconds: number;
  readonly images: number;
  /** An amount of the report's `currency`, at most 6 decimals. */
  readonly cost: number;
}

/** One row of a report: a model on a day (or either alone; the dimension not grouped by is null). */
export interface UsageRow<D extends UsageDimension = UsageDimension> extends UsageTotals {
  readonly model: 'model' extends D ? string : null;
  /** `YYYY-MM-DD`, the UTC day the tasks became final. */
  readonly day: 'day' extends D ? string : null;
}

export interface AdminUsageRow<D extends AdminUsageDimension = AdminUsageDimension> extends UsageTotals {
  readonly key_id: 'key' extends D ? string : null;
  readonly model: 'model' extends D ? string : null;
  readonly day: 'day' extends D ? string : null;
}

/** The calling key's budget; amounts in the report's currency. */
export interface UsageBudget {
  /** null: no budget. */
  readonly budget: number | null;
  /** null: a lifetime budget (or none). */
  readonly budget_period: BudgetPeriod | null;
  /** Spent in the current period (all time for a lifetime budget). */
  readonly spent: number;
  /** Held by tasks not final yet: each one's maximum cost, until it ends. */
  readonly reserved: number;
  /** Unix seconds when the period starts again; null for a lifetime budget or none. */
  readonly resets_at: number | null;
}

/** `GET /v1/usage`. */
export interface UsageReport<D extends UsageDimension = UsageDimension> {
  readonly object: 'usage';
  readonly currency: string;
  /** The range covered, in whole UTC days: [start, end) in unix seconds. */
  readonly start: number;
  readonly end: number;
  readonly totals: UsageTotals;
  readonly data: ReadonlyArray<UsageRow<D>>;
  readonly budget: UsageBudget;
}

/** `GET /v1/admin/usage`: no budget (each key has its own: `admin.keys.retrieve`). */
export interface AdminUsageReport<D extends AdminUsageDimension = AdminUsageDimension> {
  readonly object: 'usage';
  readonly currency: string;
  readonly start: number;
  readonly end: number;
  readonly totals: UsageTotals;
  readonly data: ReadonlyArray<AdminUsageRow<D>>;
}

/** A client key as the admin API shows it (never the key itself, except once at creation). */
export interface AdminKey {
  readonly id: string;
  readonly object: 'key';
  readonly name: string;
  /** An amount of the pricing file's currency; null: no budget. */
  readonly budget: number | null;
  readonly budget_period: BudgetPeriod | null;
  /** Model ids and prefixes ending in `*` (`"vendora/*"`) this key may use; null: every model. */
  readonly models: readonly string[] | null;
  /** Creates per minute; null: the server's default (`MEDIAGATE_RATE_LIMIT_PER_MIN`). */
  readonly rate_limit_per_min: number | null;
  /** Tasks queued or processing at once; null: the server's default (`MEDIAGATE_MAX_TASKS_IN_FLIGHT`). */
  readonly max_tasks_in_flight: number | null;
  /** Unix seconds. */
  readonly created_at: number;
  /** A disabled key is refused (401 `invalid_api_key`) until enabled again. */
  readonly disabled: boolean;
  /** Spent in the current budget period. */
  readonly spent: number;
  /** Held by the key's tasks not final yet. */
  readonly reserved: number;
}

/** `POST /v1/admin/keys`: the key, with `key` (`mg_...`), shown this once. */
export interface AdminKeyCreated extends AdminKey {
  readonly key: string;
}

/** The body of `admin.keys.create`. */
export interface AdminKeyCreateParams {
  /** 1-200 characters: who the key is for. */
  readonly name: string;
  /** An amount of the pricing file's currency (at most 6 decimals); null or absent: no budget. */
  readonly budget?: number | null;
  /** null or absent: a lifetime budget. */
  readonly budget_period?: BudgetPeriod | null;
  /** Model ids and prefixes ending in `*`; null or absent: every model. */
  readonly models?: readonly string[] | null;
  readonly rate_limit_per_min?: number | null;
  readonly max_tasks_in_flight?: number | null;
}

/** The body of `admin.keys.update`: any create field, and `disabled`. Absent fields stay as they are; null clears. */
export interface AdminKeyUpdateParams extends Partial<AdminKeyCreateParams> {
  readonly disabled?: boolean;
}

export interface AdminKeyListParams {
  /** 1-100; default 20 (server side). */
  readonly limit?: number;
  /** A key id: the page starts right after it. */
  readonly after?: string;
}
