import { DEFAULT_CURRENCY } from '../billing/index.js';
import type { WebhookRouteOptions } from '../http/context.js';
import { WEBHOOK_ROUTES } from '../http/routes.js';
import { createOutputUrls } from '../storage/output-urls.js';
import { WebhookDispatcher, type DeliveryOutcome } from '../webhooks/dispatcher.js';
import { fieldsOf } from '../config-fields.js';
import type { Floors } from './floors.js';
import { WEBHOOKS_SLICE } from './slices/webhooks.js';
import type { ConfigSlice, Module } from './module.js';

/** Its own settings (slices/webhooks.ts) and the shared ones it reads. */
const CONFIG = [...fieldsOf(WEBHOOKS_SLICE), 'workers', 'outputTtlMs', 'outputUrls', 'fetchAllowHosts', 'fetchAllowPrivate'] as const;
type WebhooksConfig = ConfigSlice<(typeof CONFIG)[number]>;

/** Webhooks (docs/guides/webhooks.md): the endpoint routes, and where workers run, the deliveries. */
export interface WebhooksModule extends Module {
  /** The dispatcher of this process (with workers); undefined in an API-only process. */
  readonly dispatcher: WebhookDispatcher | undefined;
  /** What the endpoint routes are given: the endpoint rules' settings and the dispatcher's wake-up. */
  readonly routeOptions: WebhookRouteOptions;
  /** Where each delivery attempt's outcome is counted (the process's metrics), once known. */
  observe(counter: (outcome: DeliveryOutcome) => void): void;
}

/**
 * Payloads carry output URLs as a status poll on the API would: signed with the process's
 * signer, on `publicUrl` (an API process's address, known at listen; else MEDIAGATE_PUBLIC_URL).
 */
export function webhooksModule(floors: Floors): WebhooksModule {
  const config: WebhooksConfig = floors.config;
  const { store, service, signer, publicUrl, pricing, options, storage, logger } = floors;
  let counter: ((outcome: DeliveryOutcome) => void) | undefined;
  const allow = { hosts: config.fetchAllowHosts, private: config.fetchAllowPrivate };
  // An API-only process leaves deliveries to the workers.
  const dispatcher = config.workers
    ? new WebhookDispatcher({
        store,
        service,
        urlFor: createOutputUrls({
          signer,
          publicUrl,
          outputTtlMs: config.outputTtlMs,
          presign: config.outputUrls === 'presigned' ? storage.presigner() : undefined,
        }),
        currency: pricing?.currency ?? DEFAULT_CURRENCY,
        allow,
        timeoutMs: config.webhookTimeoutMs,
        caps: { perEndpoint: config.webhookPerEndpoint, perKey: config.webhookPerKey },
        log: logger.child({ component: 'webhooks' }),
        observe: (outcome) => counter?.(outcome),
        ...(config.webhookRetryScheduleMs === undefined ? {} : { retryScheduleMs: config.webhookRetryScheduleMs }),
        ...(options.webhookTls === undefined ? {} : { tls: options.webhookTls }),
        ...(options.webhookLookup === undefined ? {} : { lookup: options.webhookLookup }),
        ...(options.webhookPollIntervalMs === undefined ? {} : { pollIntervalMs: options.webhookPollIntervalMs }),
      })
    : undefined;
  return {
    name: 'webhooks',
    config: CONFIG,
    routes: WEBHOOK_ROUTES,
    loops: [],
    dispatcher,
    routeOptions: {
      maxEndpoints: config.webhookMaxEndpoints,
      allow,
      ...(options.webhookResolve === undefined ? {} : { resolve: options.webhookResolve }),
      notify: () => dispatcher?.notify(),
    },
    observe(next) {
      counter = next;
    },
    start: () => dispatcher?.start(),
    close: async () => dispatcher?.close(),
  };
}
