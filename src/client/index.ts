/**
 * `mediagate/client`: a typed client for the mediagate API. It imports nothing of the server at
 * run time (test/client-build.test.ts compiles this folder alone to prove it).
 */
export { Mediagate, type ClientOptions, DEFAULT_BASE_URL, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS } from './client.js';
export {
  MediagateError,
  APIError,
  ValidationError,
  AuthenticationError,
  NotFoundError,
  RateLimitError,
  ServerError,
  ConnectionError,
  TimeoutError,
  AbortError,
  TaskFailedError,
  type ErrorFields,
} from './errors.js';
export type { Fetch } from './http.js';
export type { Videos, Images, Models } from './resources.js';
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
  RequestOptions,
  WaitOptions,
  UncheckedParams,
} from './types.js';
export * from './models.generated.js';
