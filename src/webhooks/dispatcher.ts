import { inTaskSpan } from '../tracing/index.js';
import { Loop } from '../loop.js';
import { randomBytes } from 'node:crypto';
import type { LookupFunction } from 'node:net';
import { hostname } from 'node:os';
import type { ConnectionOptions } from 'node:tls';
import type { Dispatcher } from 'undici';
import type { FetchAllowList } from '../outbound/address-policy.js';
import { discard, explainFailure, send } from '../outbound/client.js';
import { createFetchDispatcher } from '../outbound/connection.js';
import { isUnresolved } from '../outbound/url-refusal.js';
import { newSortableId } from '../tasks/ids.js';
import type { TaskService } from '../tasks/service.js';
import type { ClaimedDelivery, NewWebhookDelivery, WebhookEndpointRecord, WebhookStore } from '../store/store.js';
import type { Task } from '../store/records.js';
import type { DeliveryCaps } from '../store/sql/webhooks.js';
import type { UrlFor } from '../wire/task-bodies.js';
import { eventOf } from './events.js';
import { webhookPayload } from './payload.js';
import { DEFAULT_RETRY_SCHEDULE_MS, retryDelay } from './schedule.js';
import { signWebhook } from './signing.js';

export type DeliveryOutcome = 'succeeded' | 'retried' | 'failed';

interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface WebhookDispatcherOptions {
  readonly store: WebhookStore;
  /** Settles and cancels of this process wake the announcer at once. */
  readonly service: TaskService;
  /** Signed output URLs for the payloads (storage/output-urls.ts), as a status poll signs them. */
  readonly urlFor: UrlFor;
  /** The currency of a final task's usage (the pricing file's, "USD" without one). */
  readonly currency: string;
  /** The media inputs' allow list (MEDIAGATE_FETCH_ALLOW_*): the same address policy. */
  readonly allow: FetchAllowList;
  /** Extra TLS options for the connections (a test CA). */
  readonly tls?: ConnectionOptions;
  /** DNS resolution of every connection (tests: a name that resolves to a private address). */
  readonly lookup?: LookupFunction;
  /** Delays between attempts (schedule.ts); attempts = its length + 1. */
  readonly retryScheduleMs?: readonly number[];
  /** A 2xx must arrive within this (default 15 s). */
  readonly timeoutMs?: number;
  /** Attempts in flight in this process (default 16). */
  readonly concurrency?: number;
  /** Attempts in flight per endpoint and per key, over every process (default 2 and 4). */
  readonly caps?: DeliveryCaps;
  /** How often the store is looked at when nothing wakes the dispatcher (default 1 s). */
  readonly pollIntervalMs?: number;
  readonly log: Log;
  readonly observe?: (outcome: DeliveryOutcome) => void;
}

export const WEBHOOK_TIMEOUT_MS = 15_000;
const ANNOUNCE_BATCH = 100;
const USER_AGENT = 'mediagate-webhooks/1';

/**
 * The webhook outbox's two steps, in every process that runs workers (decisions 8.5):
 * - the announcer turns final tasks not yet announced into deliveries (one transaction per batch,
 *   store.announceTasks), so a task settled just before a crash is announced after the restart;
 * - the sender claims due deliveries with a lease (their `next_attempt_at`, plus a fence on
 *   `attempts`), POSTs each signed body, and records the attempt and the next state: succeeded on
 *   a 2xx within the timeout, else due again after the schedule's delay, failed after the last.
 * Redirects are not followed (a 3xx is a failure), and every request is a `send` of the outbound
 * client through a policed pool: the URL policy, and the address policy on each address actually
 * connected to.
 */
export class WebhookDispatcher {
  private readonly id = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly retrySchedule: readonly number[];
  private readonly timeoutMs: number;
  private readonly concurrency: number;
  private readonly pollIntervalMs: number;
  private readonly http: Dispatcher;
  private readonly inFlight = new Set<Promise<void>>();
  /** Passes over the store: at each wake-up, else at the next delivery due (at most pollIntervalMs). */
  private readonly passes: Loop;
  private stopped = true;
  private readonly wake = (): void => this.notify();

  constructor(private readonly options: WebhookDispatcherOptions) {
    this.retrySchedule = options.retryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS;
    this.timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
    this.concurrency = options.concurrency ?? 16;
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.http = createFetchDispatcher({
      allow: options.allow,
      ...(options.tls ? { tls: options.tls } : {}),
      ...(options.lookup ? { lookup: options.lookup } : {}),
      connectTimeoutMs: this.timeoutMs,
    });
    this.passes = new Loop({
      name: 'webhook-dispatcher',
      intervalMs: this.pollIntervalMs,
      turn: () => this.pass(),
      // A store that failed (a database restart) is tried again at the next interval.
      onError: (error) => this.options.log.error({ err: error }, 'webhook dispatcher pass failed'),
    });
  }

  /** Attempts in all, the first included. */
  get maxAttempts(): number {
    return this.retrySchedule.length + 1;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.options.service.on('settled', this.wake);
    this.options.service.on('cancelled', this.wake);
    this.passes.start();
  }

  /** Look at the store now (a task settled, a redelivery was asked for). */
  notify(): void {
    if (!this.stopped) this.passes.notify();
  }

  /** Stops claiming; attempts in flight finish (a lease left behind ends by itself). */
  async close(): Promise<void> {
    this.stopped = true;
    this.options.service.off('settled', this.wake);
    this.options.service.off('cancelled', this.wake);
    await this.passes.stop();
    await Promise.all([...this.inFlight]);
    await this.http.close();
  }

  /** One pass; returns the wait before the next one. */
  private async pass(): Promise<number | undefined> {
    const now = Date.now();
    for (;;) {
      const { tasks } = await this.options.store.announceTasks(ANNOUNCE_BATCH, Date.now(), (task, endpoints) => this.plan(task, endpoints));
      if (tasks < ANNOUNCE_BATCH || this.stopped) break;
    }
    const free = this.concurrency - this.inFlight.size;
    if (free > 0 && !this.stopped) {
      const claimed = await this.options.store.claimWebhookDeliveries(this.id, now, now + this.timeoutMs + 5_000, free, this.options.caps);
      for (const delivery of claimed) {
        const attempt = this.attempt(delivery)
          // The lease ends by itself: the delivery is due again then, and no attempt is lost.
          .catch((error: unknown) => this.options.log.error({ err: error, webhook: delivery.id }, 'webhook delivery attempt could not be recorded'))
          .finally(() => {
            this.inFlight.delete(attempt);
            this.notify();
          });
        this.inFlight.add(attempt);
      }
    }
    if (this.stopped) return undefined;
    const due = await this.options.store.nextWebhookDue();
    return due === undefined ? this.pollIntervalMs : Math.min(this.pollIntervalMs, Math.max(0, due - Date.now()));
  }

  /** The deliveries of one final task: one per endpoint of its owner that takes its event. */
  private plan(task: Task, endpoints: readonly WebhookEndpointRecord[]): NewWebhookDelivery[] {
    const type = eventOf(task);
    if (type === undefined) return [];
    const matching = endpoints.filter((endpoint) => endpoint.events.includes(type));
    if (matching.length === 0) return [];
    const built = webhookPayload(task, this.options.urlFor, this.options.currency);
    if (built === undefined) return [];
    return matching.map((endpoint) => ({
      id: newSortableId('msg'),
      endpointId: endpoint.id,
      owner: task.owner,
      type,
      taskId: task.id,
      payload: built.payload,
    }));
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const { store, log } = this.options;
    const endpoint = await store.getWebhookEndpoint(delivery.endpointId, undefined);
    if (endpoint === undefined) {
      await store.dropWebhookDelivery(delivery.id);
      return;
    }
    // Checked before every attempt, not only when the key changed: a delivery announced or
    // claimed in another process as the key was disabled or revoked is ended here, never sent.
    if (await store.keyBlocksDeliveries(endpoint.owner)) {
      if (await store.endClaimedDelivery(delivery.id, this.id, delivery.attempts, Date.now())) {
        log.warn({ webhook: delivery.id, endpoint: delivery.endpointId, type: delivery.type }, 'webhook delivery ended: its API key is disabled or revoked');
      }
      return;
    }
    const started = Date.now();
    // A producer span in the task's trace (tracing/): the endpoint's id, never its URL.
    const { statusCode, error } = await inTaskSpan(
      'mediagate.webhook.delivery',
      () => store.deliveryTraceContext(delivery.taskId),
      {
        taskId: delivery.taskId,
        keyId: endpoint.owner,
        extra: { 'mediagate.webhook.id': delivery.id, 'mediagate.webhook.endpoint_id': endpoint.id, 'mediagate.webhook.attempt': delivery.attempts },
      },
      async (span) => {
        const answer = await this.post(endpoint, delivery);
        span.set('http.response.status_code', answer.statusCode ?? undefined);
        return answer;
      },
      'producer',
    );
    const at = Date.now();
    const ok = statusCode !== null && statusCode >= 200 && statusCode <= 299;
    const delay = ok ? undefined : retryDelay(this.retrySchedule, delivery.attempts);
    const outcome: DeliveryOutcome = ok ? 'succeeded' : delay === undefined ? 'failed' : 'retried';
    const written = await store.settleWebhookDelivery({
      id: delivery.id,
      endpointId: delivery.endpointId,
      owner: this.id,
      attempts: delivery.attempts,
      status: outcome === 'retried' ? 'pending' : outcome,
      nextAttemptAt: delay === undefined ? null : at + delay,
      statusCode,
      error,
      at: started,
      durationMs: at - started,
      now: at,
    });
    if (!written) return;
    this.options.observe?.(outcome);
    if (!ok) {
      log.warn(
        { webhook: delivery.id, endpoint: delivery.endpointId, type: delivery.type, attempt: delivery.attempts, statusCode, error, outcome },
        'webhook delivery attempt failed',
      );
    }
  }

  /** One POST: the answer's status, or why there was none. Never throws. */
  private async post(endpoint: WebhookEndpointRecord, delivery: ClaimedDelivery): Promise<{ statusCode: number | null; error: string | null }> {
    const timestamp = Math.floor(Date.now() / 1000);
    const signal = AbortSignal.timeout(this.timeoutMs);
    try {
      // The URL was checked at registration; checked again (by send), as every fetch is.
      const response = await send(endpoint.url, {
        method: 'POST',
        policed: this.http,
        signal,
        timeoutMs: this.timeoutMs,
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'webhook-id': delivery.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signWebhook(endpoint.secret, delivery.id, timestamp, delivery.payload),
        },
        body: delivery.payload,
      });
      // The body is not read: only the status counts.
      discard(response.body);
      const statusCode = response.status;
      if (statusCode >= 200 && statusCode <= 299) return { statusCode, error: null };
      const redirect = statusCode >= 300 && statusCode <= 399 ? ' (redirects are not followed)' : '';
      return { statusCode, error: `HTTP ${statusCode}${redirect}` };
    } catch (error) {
      return { statusCode: null, error: describe(error, signal, this.timeoutMs, endpoint.url) };
    }
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return 'the host';
  }
}

/** Why an attempt got no answer, for the delivery log (no addresses, no secrets). */
function describe(error: unknown, signal: AbortSignal, timeoutMs: number, url: string): string {
  const why = explainFailure(error);
  if (why.refused) return `address_refused: ${why.refused.host} is not a public address`;
  // One answer for a name that does not resolve and one that resolves inward (outbound/url-refusal.ts).
  if (isUnresolved(error)) return `address_refused: ${hostOf(url)} is not a public address`;
  if (why.fetchError) return `${why.fetchError.reason}: ${why.fetchError.message}`;
  if (signal.aborted || why.timedOut) return `timeout: no answer within ${timeoutMs} ms`;
  return `network: ${why.code ?? (error instanceof Error ? error.message : 'the request failed')}`.slice(0, 300);
}
