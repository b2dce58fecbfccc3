/**
 * Cancelling upstream (decisions §8.1; docs/channels.md#the-lifecycle-srctasksupstreamschedulerts, step 7): a
 * cancelled task's upstream job is stopped where the protocol allows. Best effort: the task is
 * already final in our store, so nothing here changes it; the outcome is logged with the
 * upstream ids and counted per channel.
 *
 * Exactly one caller cancels a given upstream job:
 * - the process that won the cancel (TaskService 'cancelled'), when the upstream id was stored:
 *   it takes the job with `takeUpstreamCancel` (one guarded UPDATE), so a scheduler step that
 *   lost its fence to the cancel in another process finds it taken;
 * - the scheduler, when the cancel landed while it was submitting: the upstream id was never
 *   stored (its fenced write lost), so only it knows the job, and it cancels it (UpstreamScheduler
 *   `accept`).
 *
 * A job left running is paid for, so a cancel the upstream did not answer (no answer, 429, 5xx:
 * `transient`) is not the end: it is stored as owed (`upstream_state = 'cancelling'`, the next
 * try at `next_check_at`) and any process's scheduler claims it when due (`retry`), after a
 * `poll_per_s` slot of the channel, backing off x2 from 2 s to 60 s, until the upstream answers
 * or the channel's `timeout_s` has passed since the task ended (by then the job has run its
 * course). The same claim picks up a cancel that the winning process could not send because it
 * has no channels loaded: its task still holds its upstream state once its next check is due.
 */
import type { ChannelsConfig, RouteTarget } from '../../channels/config.js';
import type { ChannelContexts } from '../../channels/context.js';
import type { CancelResult, ChannelMetrics } from '../../channels/metrics.js';
import type { CancelOutcome, ChannelLog, ProtocolAdapter, ProtocolName } from '../../channels/protocol.js';
import type { TaskService } from '../service.js';
import type { PendingUpstreamCancel, UpstreamCancelRef } from '../../store/records.js';
import { RateSlots } from './limits.js';

/**
 * The channels' log, plus errors (an adapter that throws is a bug worth an error line). Declared
 * here, not in scheduler.ts: the scheduler imports the canceller, so the arrow stays one way.
 */
export interface SchedulerLog extends ChannelLog {
  error(obj: object, msg?: string): void;
}

export interface UpstreamCancellerOptions {
  readonly service: TaskService;
  readonly channels: ChannelsConfig;
  readonly contexts: ChannelContexts;
  readonly adapters: Partial<Record<ProtocolName, ProtocolAdapter>>;
  readonly metrics?: ChannelMetrics | undefined;
  readonly log: SchedulerLog;
  readonly now?: () => number;
}

/** What a cancel needs of a job: the task, its channel and target, the upstream ids. */
export type UpstreamJobRef = UpstreamCancelRef & { readonly upstreamId: string };

/** First wait before a cancel is tried again, and the longest. */
export const CANCEL_RETRY_START_MS = 2_000;
export const CANCEL_RETRY_MAX_MS = 60_000;

export class UpstreamCanceller {
  private readonly running = new Set<Promise<unknown>>();
  private readonly now: () => number;
  private readonly rates: RateSlots;

  constructor(private readonly options: UpstreamCancellerOptions) {
    this.now = options.now ?? Date.now;
    const { service } = options;
    this.rates = new RateSlots((channel, bucket, perSecond) => service.bookChannelSlot(channel, bucket, perSecond), this.now, CANCEL_RETRY_MAX_MS);
  }

  /** TaskService 'cancelled' (this process won the cancel): cancels the task's upstream job, if it has one stored. */
  onCancelled(task: { readonly id: string }): void {
    this.track(this.takeAndCancel(task.id, 'the task was cancelled'));
  }

  /** Takes the cancelled task's stored upstream job (once across processes) and cancels it. */
  async takeAndCancel(id: string, reason: string): Promise<CancelResult | undefined> {
    const ref = await this.options.service.takeUpstreamCancel(id);
    if (ref?.upstreamId === undefined || ref.upstreamId === null) return undefined;
    return this.cancel({ ...ref, upstreamId: ref.upstreamId }, reason);
  }

  /**
   * An owed cancel the scheduler claimed (a retry, or one never sent): sent again within the
   * channel's poll rate, unless the task ended longer than the channel's timeout_s ago.
   */
  async retry(pending: PendingUpstreamCancel): Promise<void> {
    const { service, channels, log } = this.options;
    const channel = channels.channels.get(pending.channel);
    if (pending.upstreamId === null || !channel) {
      await service.finishUpstreamCancel(pending.id);
      return;
    }
    const endedAt = pending.completedAt ?? this.now();
    if (this.now() - endedAt > channel.timeoutS * 1000) {
      log.warn(
        { task: pending.id, channel: pending.channel, upstreamId: pending.upstreamId },
        "upstream cancel given up: no answer within the channel's timeout_s",
      );
      await service.finishUpstreamCancel(pending.id);
      return;
    }
    // A claim of an owed cancel bumps no attempt; what it holds is the retry's wait, which a put-back
    // keeps and a try (in any process) changes (backoff with jitter): the booking's fence.
    const fence = { now: pending.intervalMs ?? 0, next: pending.intervalMs ?? 0 };
    const slotAt = await this.rates.take(pending.id, channel.name, 'poll', channel.pollPerS, fence);
    if (slotAt !== undefined) {
      // Its poll_per_s slot starts later: owed until then (the backoff unchanged), the slot kept for it.
      await service.deferUpstreamCancel({ ...pending, upstreamId: pending.upstreamId }, slotAt - this.now(), pending.intervalMs ?? 0);
      return;
    }
    await this.cancel({ ...pending, upstreamId: pending.upstreamId }, 'an owed upstream cancel, tried again', pending.intervalMs ?? 0);
  }

  /**
   * One upstream cancel through the job's channel adapter; never throws. A `transient` answer
   * stores the cancel as owed, to be tried again (`retry`); `previousMs` is the last wait of a
   * retry (0 for one claimed that never waited), undefined for a first try.
   */
  async cancel(job: UpstreamJobRef, reason: string, previousMs?: number): Promise<CancelResult> {
    const outcome = await this.send(job, reason);
    const { service } = this.options;
    if (outcome === 'transient') {
      const base = previousMs === undefined || previousMs <= 0 ? CANCEL_RETRY_START_MS : Math.min(CANCEL_RETRY_MAX_MS, previousMs * 2);
      await service.deferUpstreamCancel(job, base + Math.round(Math.random() * base * 0.2));
    } else if (previousMs !== undefined) await service.finishUpstreamCancel(job.id);
    return outcome;
  }

  private async send(job: UpstreamJobRef, reason: string): Promise<CancelResult> {
    const { channels, contexts, adapters, metrics, log } = this.options;
    const channel = channels.channels.get(job.channel);
    const adapter = channel && adapters[channel.protocol];
    const fields = { task: job.id, channel: job.channel, upstreamId: job.upstreamId, requestId: job.requestId, reason };
    if (!channel || !adapter) {
      log.warn(fields, 'upstream cancel: the channel is no longer configured; the upstream job is left running');
      return 'unsupported';
    }
    if (!adapter.cancel) {
      metrics?.cancelled(job.channel, 'unsupported');
      log.info({ ...fields, protocol: channel.protocol }, 'upstream cancel: the protocol has no cancel; the upstream job is left to finish');
      return 'unsupported';
    }
    // The route may have changed since the task was routed: the channel is what matters here.
    const routed = channels.targetsFor(job.model)[job.target];
    const target: RouteTarget = routed?.channel === job.channel ? routed : { channel: job.channel, upstreamModel: job.model };
    const started = this.now();
    let answer: CancelOutcome;
    try {
      answer = await adapter.cancel(contexts.forTarget(target), job.upstreamId);
    } catch (error) {
      log.error({ ...fields, err: error }, 'adapter cancel threw');
      answer = { outcome: 'transient', reason: 'the adapter failed' };
    }
    metrics?.upstreamLatency(job.channel, 'cancel', this.now() - started);
    metrics?.cancelled(job.channel, answer.outcome);
    if (answer.outcome !== 'cancelled' && /\b429\b/.test(answer.reason)) metrics?.throttled(job.channel, 'cancel');
    const detail = {
      ...fields,
      ...(answer.requestId === undefined ? {} : { cancelRequestId: answer.requestId }),
      ...(answer.outcome === 'cancelled' ? {} : { answer: answer.reason }),
    };
    if (answer.outcome === 'transient') log.warn(detail, 'upstream cancel got no answer; it will be tried again');
    else log.info({ ...detail, outcome: answer.outcome }, 'upstream cancel');
    return answer.outcome;
  }

  /** Runs a cancel in the background, tracked so that close() waits for it. */
  track(work: Promise<unknown>): void {
    const tracked = work
      .catch((error: unknown) => this.options.log.error({ err: error }, 'upstream cancel failed'))
      .finally(() => this.running.delete(tracked));
    this.running.add(tracked);
  }

  /** Waits up to `drainMs` for cancels in flight. */
  async close(drainMs = 10_000): Promise<void> {
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.running]), new Promise((resolve) => (timeout = setTimeout(resolve, drainMs)))]);
    clearTimeout(timeout);
  }
}
