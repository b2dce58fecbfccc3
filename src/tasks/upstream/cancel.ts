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
 */
import type { ChannelsConfig, RouteTarget } from '../../channels/config.js';
import type { ChannelContexts } from '../../channels/context.js';
import type { CancelResult, ChannelMetrics } from '../../channels/metrics.js';
import type { CancelOutcome, ChannelLog, ProtocolAdapter, ProtocolName } from '../../channels/protocol.js';
import type { TaskService } from '../service.js';
import type { UpstreamCancelRef } from '../../store/records.js';

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

export class UpstreamCanceller {
  private readonly running = new Set<Promise<unknown>>();
  private readonly now: () => number;

  constructor(private readonly options: UpstreamCancellerOptions) {
    this.now = options.now ?? Date.now;
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

  /** One upstream cancel through the job's channel adapter; never throws. */
  async cancel(job: UpstreamJobRef, reason: string): Promise<CancelResult> {
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
    if (answer.outcome === 'transient') log.warn(detail, 'upstream cancel failed; the upstream job may keep running');
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
