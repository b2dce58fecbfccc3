/**
 * `mediagate/client`: a typed client for the mediagate API. It imports nothing of the server at
 * run time (test/client-standalone.test.ts compiles this folder alone to prove it).
 */
export { Mediagate, type ClientOptions, DEFAULT_BASE_URL, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS } from './client.js';
export {
  MediagateError,
  APIError,
  ValidationError,
  UnprocessableEntityError,
  ConflictError,
  AuthenticationError,
  BudgetExceededError,
  PermissionDeniedError,
  NotFoundError,
  KeyNotFoundError,
  RateLimitError,
  ServerError,
  ConnectionError,
  TimeoutError,
  StreamError,
  AbortError,
  TaskFailedError,
  type ErrorFields,
} from './errors.js';
export type { Fetch } from './http.js';
export type { Videos, Images, Models } from './resources.js';
export type { Webhooks } from './webhooks.js';
export type { UsageReports } from './usage.js';
export type { Tasks } from './tasks.js';
export { MediagateAdmin, type AdminKeys, type AdminUsage } from './admin.js';
export { APIPromise, type ResponseInfo, type WithResponse } from './api-promise.js';
export { Page } from './pagination.js';
export type { TaskEventStream } from './events.js';
export { SSEParser, readServerSentEvents, type ServerSentEvent, type SSEHandlers } from './sse.js';
export {
  verifyWebhook,
  unwrapWebhook,
  signWebhook,
  WebhookVerificationError,
  DEFAULT_WEBHOOK_TOLERANCE_S,
  type WebhookVerificationCode,
  type WebhookHeaders,
  type VerifyOptions,
} from './webhook-signature.js';
export { snapshot, isFinal } from './wait.js';
export { toDataURL, fileToDataURL, bufferToDataURL, sniffMimeType, mimeTypeFromName, isMediaURL, type DataURLOptions } from './data-url.js';
export type {
  TaskStatus,
  TaskKind,
  TaskError,
  VideoTask,
  ImageTask,
  ImageTaskStatus,
  ImageTaskCreated,
  TaskSnapshot,
  ProgressEvent,
  ModelInfo,
  ModelPricing,
  ModelLifecycle,
  RequestOptions,
  WaitOptions,
  UncheckedParams,
  CreateOptions,
  CreateAndWaitOptions,
  EventsOptions,
  VideoListParams,
  ImageListParams,
  VideoTaskList,
  ImageTaskList,
  ImageEnvelope,
  RecentTask,
  RecentModel,
  RecentTasks,
  RecentTasksParams,
  WebhookEventType,
  WebhookEndpoint,
  WebhookEndpointCreated,
  WebhookCreateParams,
  WebhookEvent,
  WebhookDelivery,
  WebhookDeliveryAttempt,
  WebhookDeliveryListParams,
  TaskUsage,
  BudgetPeriod,
  UsageDimension,
  AdminUsageDimension,
  UsageTime,
  UsageParams,
  AdminUsageExportParams,
  AdminUsageParams,
  UsageTotals,
  UsageRow,
  AdminUsageRow,
  UsageBudget,
  UsageReport,
  AdminUsageReport,
  AdminKey,
  AdminKeyCreated,
  AdminKeyCreateParams,
  AdminKeyUpdateParams,
  AdminKeyListParams,
} from './types.js';
export { WEBHOOK_EVENT_TYPES } from './types.js';
export * from './models.generated.js';
