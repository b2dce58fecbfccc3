import type { Logger } from 'pino';
import type { Pricing } from '../billing/index.js';
import type { ModelRow } from '../catalog/index.js';
import type { ChannelsConfig } from '../channels/config.js';
import type { Engine } from '../engines/types.js';
import type { Resolve } from '../outbound/url-refusal.js';
import type { SchedulerTimings } from '../tasks/upstream/scheduler.js';
import type { ConnectionOptions } from 'node:tls';
import type { LookupFunction } from 'node:net';

/** What an embedder or a spec may give the service besides its `Config`. */
export interface MediagateOptions {
  /** Replaces the engine chosen by config (tests inject slow or failing engines). */
  readonly engine?: Engine;
  readonly logger?: Logger;
  /**
   * The routing table, already loaded (the CLI reports a bad file itself; specs read channel
   * secrets from an environment of their own). Absent: the file `config.channelsFile` names
   * (MEDIAGATE_CHANNELS_FILE) is loaded with process.env, and without one every model renders
   * in the sandbox. Tasks whose first target is another channel go upstream.
   */
  readonly channels?: ChannelsConfig;
  /**
   * The prices (MEDIAGATE_PRICING_FILE, checked by the entry so that a fault exits 78). Absent:
   * read from `config.pricingFile` here (a fault throws PricingConfigError), or nothing priced.
   */
  readonly pricing?: Pricing;
  /**
   * The declared models (MEDIAGATE_MODELS_FILE), already loaded and checked by the entry. Absent:
   * read from `config.modelsFile` here (a fault throws ModelsConfigError), or none.
   */
  readonly models?: readonly ModelRow[];
  /** The time in Unix ms, for declared models' lifecycle dates (tests move it); default Date.now. */
  readonly now?: () => number;
  /** Tests shorten the upstream scheduler's intervals and leases. */
  readonly upstreamTimings?: Partial<SchedulerTimings>;
  /** Per-request timeout of upstream API calls (default 30 s). */
  readonly upstreamRequestTimeoutMs?: number;
  /** Webhook connections: extra TLS options (tests trust their own CA) and DNS resolution (tests). */
  readonly webhookTls?: ConnectionOptions;
  readonly webhookLookup?: LookupFunction;
  /** Tests: DNS resolution of an endpoint's host at registration. */
  readonly webhookResolve?: Resolve;
  /** Tests: how often the webhook dispatcher looks at the store when nothing wakes it (default 1 s). */
  readonly webhookPollIntervalMs?: number;
}
