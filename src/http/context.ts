import type { EventStreamLimits } from './tasks/event-streams.js';
import type { Pricing } from '../billing/index.js';
import type { Health } from '../outages.js';
import type { ModelRow, Validator } from '../catalog/index.js';
import type { KeyRegistry } from '../auth/api-keys.js';
import type { InputStore } from '../storage/inputs.js';
import type { PresignOutput } from '../storage/output-urls.js';
import type { OutputStorage } from '../storage/storage.js';
import type { UrlSigner } from '../storage/signing.js';
import type { TaskFeed } from '../tasks/feed.js';
import type { TaskService } from '../tasks/service.js';
import type { Store } from '../store/store.js';
import type { ConnectionLimits } from './server/connection-limits.js';
import type { JsonLimits } from './body/json-limits.js';
import type { Metrics } from './metrics/metrics.js';
import type { KeyLimits } from './keys/rate-limit.js';
import type { WebhookEndpointPolicy } from '../webhooks/endpoints.js';

/** What the webhook routes need beyond the store: the endpoint rules' settings, and a wake-up. */
export interface WebhookRouteOptions extends WebhookEndpointPolicy {
  /** A redelivery was asked for: wakes this process's dispatcher (others see it within a second). */
  readonly notify?: () => void;
}

/** Everything the routes need, built once by the app factory and passed in. */
export interface HttpContext {
  /** The models this deployment offers (the routed catalog rows); the validator knows only these. */
  readonly models: readonly ModelRow[];
  /** The time in Unix ms (tests inject one): declared models' lifecycle dates pass by it; default Date.now. */
  readonly now?: () => number;
  /** The prices (MEDIAGATE_PRICING_FILE); undefined: models are listed without `pricing`. */
  readonly pricing?: Pricing | undefined;
  /** The channel of a model's first route target; absent: every model renders in the sandbox (as the task service's default). */
  readonly channelOf?: (model: string) => string;
  readonly validator: Validator;
  readonly service: TaskService;
  /** Changes of tasks made by any process: the event streams follow it. */
  readonly feed: TaskFeed;
  /** The longest an event stream stays silent: a comment line is sent at least this often. */
  readonly sseKeepAliveMs: number;
  /** Event streams per key, their lifetime and key re-checks; absent = the documented defaults. */
  readonly eventStreamLimits?: EventStreamLimits;
  readonly store: Store;
  readonly keys: KeyRegistry;
  readonly storage: OutputStorage;
  /** Stored inputs; published ones are served at `/inputs/...` (signed, expiring). */
  readonly inputs?: InputStore;
  readonly signer: UrlSigner;
  readonly metrics: Metrics;
  /** Base of output URLs; a function because a port-0 server learns its address only at listen. */
  readonly publicUrl: () => string;
  readonly outputTtlMs: number;
  /** MEDIAGATE_OUTPUT_URLS=presigned: output URLs the media store signs (storage/output-urls.ts). */
  readonly presign?: PresignOutput | undefined;
  readonly bodyLimitBytes: number;
  /** Requests per minute and tasks in flight per key; absent = no limits (tests of other rooms). */
  readonly keyLimits?: KeyLimits;
  /** Depth, item and string bounds checked on raw JSON bodies before parsing. */
  readonly jsonLimits?: JsonLimits;
  /** Header/request timeouts, connection cap, header size; absent = the documented defaults. */
  readonly connectionLimits?: ConnectionLimits;
  /** MEDIAGATE_METRICS_TOKEN: required as a bearer token by /metrics when set. */
  readonly metricsToken?: string;
  /** Webhook endpoints; absent = 20 endpoints per key, no allow list. */
  readonly webhooks?: WebhookRouteOptions;
  /**
   * MEDIAGATE_FINAL_BODY_CACHE_BYTES and the task retention: the status bodies of final tasks
   * kept serialized (final-bodies.ts); absent = no cache.
   */
  readonly finalBodyCache?: { readonly maxBytes: number; readonly retentionMs: number };
  /** MEDIAGATE_SYNC_WAIT_S: longest a synchronous front-door request (`POST /v1/images/generations`) is held; absent = 600 s. */
  readonly syncWaitMs?: number;
  /** What this process cannot do now (outages.ts): readiness answers from it, outages are recorded in it. */
  readonly health?: Health;
  /** MEDIAGATE_CORS_ORIGINS; absent or empty = CORS off. */
  readonly corsOrigins?: readonly string[] | '*';
}
