import { inTaskSpan, type TaskSpanAttributes } from '../../tracing/index.js';
/**
 * The upstream scheduler (docs/channels.md "The lifecycle"): drives every task routed to a
 * channel other than the sandbox, from submission to completion, through the channel's adapter.
 *
 * One loop per process, async I/O only: an upstream task in flight holds no render slot. The
 * loop claims due tasks (next_check_at <= now, which also leases them), runs one step for each,
 * and sleeps until the next due time. Every step's write is fenced by the attempt its claim
 * took, so a process that lost a task (lease expired) changes nothing. A step never sleeps for
 * a rate (submit_per_s, poll_per_s): one whose slot starts later puts its task back until then
 * (RateSlots), so the step slots (`maxSteps`) are only ever held by work.
 *
 * Guarantee kept here: one paid job per task. `submitting` is stored before the adapter's
 * submit; the upstream id in one guarded write on acceptance. A task found `submitting` by a
 * claim (its lease ran out: the process stopped between sending and storing) is never
 * submitted again: it is reconciled through the adapter, or fails `upstream_submission_unknown`.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { copyOutput } from '../../channels/output-copy.js';
import { endAttempt } from '../attempt-end.js';
import { Loop } from '../../loop.js';
import type { ChannelsConfig, RouteTarget } from '../../channels/config.js';
import type { ChannelContexts } from '../../channels/context.js';
import type { ChannelMetrics } from '../../channels/metrics.js';
import type { UpstreamFailure } from '../../channels/failure.js';
import type { ChannelContext, ChannelJob, PollOutcome, ProtocolAdapter, ProtocolName, SubmitOutcome, UpstreamOutput } from '../../channels/protocol.js';
import { isTaskFailureCode } from '../../failure-codes.js';
import { publishingTask, type InputStore } from '../../storage/inputs.js';
import type { OutputStorage } from '../../storage/storage.js';
import type { TaskService } from '../service.js';
import type { TaskError, UpstreamStep, UpstreamTask } from '../../store/records.js';
import { UpstreamCanceller, type SchedulerLog } from './cancel.js';
import { KeyedMutex, RateSlots } from './limits.js';
import { nextProgress } from './progress.js';

export type { SchedulerLog };

export interface SchedulerTimings {
  /** Lease of a step; longer than an upstream request's timeout. Default 60 s. */
  readonly leaseMs: number;
  /** Lease of an output copy. Default 6 min (output-copy's own limit is 5). */
  readonly copyLeaseMs: number;
  /** First poll after acceptance, and the interval after a change. Default 2 s. */
  readonly pollStartMs: number;
  /** The interval grows x1.5 while nothing changes, up to this. Default 30 s. */
  readonly pollMaxMs: number;
  /** A task not found upstream this long after acceptance fails `upstream_error`. Default 60 s. */
  readonly notFoundGraceMs: number;
  /** An undecided reconcile is asked again until this long after the submission. Default 10 min. */
  readonly reconcileDeadlineMs: number;
  /** Longest sleep of the loop when nothing is due (catches tasks created by other processes). Default 1 s. */
  readonly idleMs: number;
}

export const SCHEDULER_DEFAULTS: SchedulerTimings = {
  leaseMs: 60_000,
  copyLeaseMs: 360_000,
  pollStartMs: 2_000,
  pollMaxMs: 30_000,
  notFoundGraceMs: 60_000,
  reconcileDeadlineMs: 600_000,
  idleMs: 1_000,
};

export interface UpstreamSchedulerOptions {
  readonly service: TaskService;
  readonly channels: ChannelsConfig;
  readonly contexts: ChannelContexts;
  readonly adapters: Partial<Record<ProtocolName, ProtocolAdapter>>;
  readonly storage: OutputStorage;
  /** Stored data-URL inputs: the task's references are read back (as data URLs) for the adapter. */
  readonly inputs?: InputStore;
  /** Scratch directory for output copies (moved into storage when complete). */
  readonly workRoot: string;
  /** MEDIAGATE_FETCH_ALLOW_*: output URLs off the channel's origin go through the fetch policy. */
  readonly fetchAllow: { readonly hosts: readonly string[]; readonly private: boolean | readonly string[] };
  readonly log: SchedulerLog;
  readonly timings?: Partial<SchedulerTimings>;
  /** Steps running at once in this process. Default 64. */
  readonly maxSteps?: number;
  readonly now?: () => number;
  /** Per-channel series (channels/metrics.ts); none recorded when absent. */
  readonly metrics?: ChannelMetrics | undefined;
  /** Upstream cancels (shared with the process's 'cancelled' listener); one is made when absent. */
  readonly canceller?: UpstreamCanceller;
  /**
   * What every text of an upstream (a failure's message and param; the code is one of ours) passes through before
   * it is stored and shown: the logs' scrubber (logging.ts: keys, `Bearer` tokens, the
   * channels' own API keys, data URLs, length). An upstream that echoes our Authorization
   * header must not put our key in a task. Default: unchanged (specs of other behaviours).
   */
  readonly scrub?: (text: string) => string;
}

/** How often the in-flight gauge is refreshed from the store. */
const IN_FLIGHT_REFRESH_MS = 1_000;

export class UpstreamScheduler {
  private readonly timings: SchedulerTimings;
  private readonly now: () => number;
  private readonly running = new Set<Promise<void>>();
  private readonly submitLocks = new KeyedMutex();
  private readonly rates: RateSlots;
  /** Claims and dispatches steps: at each wake-up, else at the next task due (at most idleMs). */
  private readonly ticks: Loop;
  private closed = true;
  private readonly canceller: UpstreamCanceller;
  private readonly metrics: ChannelMetrics | undefined;
  private inFlightRefreshedAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: UpstreamSchedulerOptions) {
    this.timings = { ...SCHEDULER_DEFAULTS, ...options.timings };
    this.ticks = new Loop({
      name: 'upstream-scheduler',
      intervalMs: this.timings.idleMs,
      turn: () => this.tick(),
      onError: (error) => options.log.error({ err: error }, 'upstream scheduler: a claim failed; trying again'),
    });
    this.now = options.now ?? Date.now;
    this.metrics = options.metrics;
    const { service } = options;
    this.rates = new RateSlots((channel, bucket, perSecond) => service.bookChannelSlot(channel, bucket, perSecond), this.now, this.timings.leaseMs);
    this.canceller =
      options.canceller ??
      new UpstreamCanceller({
        service: options.service,
        channels: options.channels,
        contexts: options.contexts,
        adapters: options.adapters,
        metrics: options.metrics,
        log: options.log,
        now: this.now,
      });
  }

  start(): void {
    this.closed = false;
    this.ticks.start();
  }

  /** A task was created here: look now rather than at the next idle wake-up. */
  notify(): void {
    if (!this.closed) this.ticks.notify();
  }

  /** Stops claiming; waits up to `drainMs` for steps in flight (an abandoned step is recovered by its lease). */
  async close(drainMs = 10_000): Promise<void> {
    await this.closeSteps(drainMs);
    if (!this.options.canceller) await this.canceller.close(drainMs);
  }

  private async closeSteps(drainMs: number): Promise<void> {
    this.closed = true;
    // The claim that runs is awaited too, within the same deadline (a store that hangs must not hold the close).
    const ticking = this.ticks.stop();
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([ticking, ...this.running]), new Promise((resolve) => (timeout = setTimeout(resolve, drainMs)))]);
    clearTimeout(timeout);
  }

  /** One claim pass; returns the wait before the next (at least 5 ms: a full claim does not spin). */
  private async tick(): Promise<number | undefined> {
    if (this.closed) return undefined;
    let delay = this.timings.idleMs;
    try {
      const room = (this.options.maxSteps ?? 64) - this.running.size;
      const claimed = room > 0 ? await this.options.service.claimUpstream(this.timings.leaseMs, room) : [];
      for (const task of claimed) this.track(this.step(task));
      // Upstream cancels still owed (no answer last time, or won by a process without channels).
      const left = room - claimed.length;
      const cancels = left > 0 ? await this.options.service.claimUpstreamCancels(this.timings.leaseMs, left) : [];
      for (const pending of cancels) this.track(this.canceller.retry(pending));
      const due = await this.options.service.nextUpstreamDue();
      if (due !== undefined) delay = Math.min(delay, due - this.now());
      if (claimed.length >= room && room > 0) delay = 0;
      await this.refreshInFlight();
    } catch (error) {
      this.options.log.error({ err: error }, 'upstream scheduler: a claim failed; trying again');
    }
    return Math.max(delay, 5);
  }

  /** The in-flight gauge of each channel, from the store (every process's tasks), about once a second. */
  private async refreshInFlight(): Promise<void> {
    const { metrics } = this;
    if (!metrics || this.now() - this.inFlightRefreshedAt < IN_FLIGHT_REFRESH_MS) return;
    this.inFlightRefreshedAt = this.now();
    for (const channel of this.options.channels.channels.values()) {
      if (channel.protocol === 'sandbox') continue;
      metrics.setInFlight(channel.name, await this.options.service.countUpstreamInFlight(channel.name));
    }
  }

  /** An adapter call, timed into the channel's latency histogram. */
  private async timed<T>(task: UpstreamTask, operation: 'submit' | 'poll' | 'reconcile', call: () => Promise<T>): Promise<T> {
    const started = this.now();
    try {
      // A client span in the task's trace (tracing/), with the provider's request id when it gave one.
      return await inTaskSpan(
        `mediagate.upstream.${operation}`,
        this.options.service.storedTraceOf(task.id),
        upstreamSpan(task),
        async (span) => {
          const answer = await call();
          span.set('mediagate.upstream.request_id', requestIdOf(answer) ?? task.requestId ?? undefined);
          return answer;
        },
        'client',
      );
    } finally {
      this.metrics?.upstreamLatency(task.channel, operation, this.now() - started);
    }
  }

  /**
   * A step's fenced write lost. When it lost to a cancel (possibly in a process without the
   * channels loaded), the upstream job may still need its cancel: taken once, so never twice.
   */
  private async lost(task: UpstreamTask): Promise<void> {
    await this.canceller.takeAndCancel(task.id, 'the task was cancelled while a step ran');
  }

  private track(step: Promise<void>): void {
    const tracked = step
      .catch((error: unknown) => this.options.log.error({ err: error }, 'upstream step failed'))
      .finally(() => {
        this.running.delete(tracked);
        this.notify();
      });
    this.running.add(tracked);
  }

  // -------------------------------------------------------------------------------------------
  // One step of one task
  // -------------------------------------------------------------------------------------------

  private async step(task: UpstreamTask): Promise<void> {
    const targets = this.options.channels.targetsFor(task.model);
    const target = targets[task.target];
    const channel = target && this.options.channels.channels.get(target.channel);
    const adapter = channel && this.options.adapters[channel.protocol];
    if (!target || target.channel !== task.channel || !channel || !adapter) {
      // The configuration changed under a task in flight: its channel is gone.
      const error = failure('upstream_unavailable', `The task's channel '${task.channel}' is no longer configured for ${task.model}.`);
      await this.fail(task, error);
      return;
    }
    const ctx = this.options.contexts.forTarget(target);
    if (task.upstreamState === null)
      return this.submit(
        task,
        targets,
        ctx,
        adapter,
        { maxInFlight: channel.maxInFlight, maxInFlightPerKey: channel.maxInFlightPerKey },
        channel.submitPerS,
        channel.timeoutS * 1000,
      );
    if (task.upstreamState === 'submitting') return this.resolveUnknown(task, ctx, adapter, 'the process stopped before the answer was stored');
    return this.poll(task, ctx, adapter, channel.pollPerS, channel.timeoutS * 1000, channel.baseUrl);
  }

  private async job(task: UpstreamTask): Promise<ChannelJob> {
    const params = this.options.inputs ? await this.options.inputs.resolve(task.id, task.params) : task.params;
    return { taskId: task.id, kind: task.kind, model: task.model, params, ...(task.since === null ? {} : { submittedAt: task.since }) };
  }

  /** The step as it was claimed: every column carried, then changed by the caller. */
  private base(task: UpstreamTask): UpstreamStep {
    return {
      status: task.status,
      channel: task.channel,
      target: task.target,
      upstreamState: task.upstreamState,
      upstreamId: task.upstreamId,
      requestId: task.requestId,
      since: task.since,
      nextCheckAt: this.now(),
      intervalMs: task.intervalMs,
      progress: task.progress,
      startedAt: task.startedAt,
    };
  }

  private async submit(
    task: UpstreamTask,
    targets: readonly RouteTarget[],
    ctx: ChannelContext,
    adapter: ProtocolAdapter,
    { maxInFlight, maxInFlightPerKey }: { maxInFlight: number; maxInFlightPerKey: number | null },
    submitPerS: number,
    timeoutMs: number,
  ): Promise<void> {
    const { service } = this.options;
    const later = (): Promise<boolean> => service.saveUpstream(task, { ...this.base(task), nextCheckAt: this.now() + this.timings.idleMs });
    // No slot for this key now: look again later without booking a submit_per_s slot, which the
    // tasks that can be submitted need (and without a step slot held while waiting for it).
    if (!(await service.hasUpstreamSlot(task, maxInFlight, maxInFlightPerKey))) {
      await later();
      return;
    }
    const slotAt = await this.rates.take(task.id, task.channel, 'submit', submitPerS, { now: task.attempt, next: task.attempt + 1 });
    if (slotAt !== undefined) {
      // Its submit_per_s slot starts later: the task comes back then, and spends it.
      await service.saveUpstream(task, { ...this.base(task), nextCheckAt: slotAt });
      return;
    }
    // The slot is checked again (max_in_flight, the key's share: store/slot-share.ts) and taken
    // (the `submitting` write) under the channel's lock: in this process, and in the database
    // across processes.
    const marked = await this.submitLocks.run(task.channel, async () => {
      const now = this.now();
      const step: UpstreamStep = { ...this.base(task), upstreamState: 'submitting', since: now, nextCheckAt: now + this.timings.leaseMs };
      const result = await service.markSubmitting(task, step, maxInFlight, maxInFlightPerKey);
      if (result === 'full') await later();
      return result === 'marked';
    });
    if (!marked) return;
    let outcome: SubmitOutcome;
    try {
      const job = await this.job(task);
      // What the adapter publishes (an input the upstream fetches by URL) belongs to this task.
      outcome = await this.timed(task, 'submit', () => publishingTask.run(task.id, () => adapter.submit(ctx, job)));
    } catch (error) {
      // A throw is an adapter bug; the request may have left: never risk a second paid job.
      this.options.log.error({ err: error, task: task.id, channel: task.channel }, 'adapter submit threw');
      outcome = { outcome: 'unknown', reason: 'the adapter failed' };
    }
    this.metrics?.submitted(task.channel, outcome.outcome);
    if (outcome.outcome === 'refused' && (outcome.retryAfterMs !== undefined || /\b429\b/.test(outcome.reason)))
      this.metrics?.throttled(task.channel, 'submit');
    const submitted: UpstreamTask = { ...task, upstreamState: 'submitting', since: this.now() };
    switch (outcome.outcome) {
      case 'accepted':
        await this.accept(submitted, outcome.upstreamId, outcome.requestId ?? null);
        return;
      case 'rejected':
        await this.fail(submitted, outcome.error);
        return;
      case 'unknown':
        await this.resolveUnknown(submitted, ctx, adapter, outcome.reason);
        return;
      case 'refused':
        await this.failover(submitted, targets, outcome.reason, outcome.requestId, outcome.retryAfterMs, timeoutMs);
        return;
    }
  }

  private async accept(task: UpstreamTask, upstreamId: string, requestId: string | null): Promise<void> {
    const now = this.now();
    const won = await this.options.service.saveUpstream(task, {
      ...this.base(task),
      upstreamState: 'accepted',
      upstreamId,
      requestId,
      since: now,
      nextCheckAt: now + this.timings.pollStartMs,
      intervalMs: this.timings.pollStartMs,
    });
    this.options.log.info({ task: task.id, channel: task.channel, upstreamId, requestId, stored: won }, 'upstream accepted the task');
    if (!won) await this.acceptedButLost(task, upstreamId, requestId);
  }

  /**
   * The upstream accepted, but the write of its id lost its fence: the task was cancelled (or
   * failed) meanwhile, in this process or another, or its lease passed to another process. Only
   * this step knows the job; unless another process now holds the task (it reconciles the
   * submission), the job is cancelled so that nothing keeps running and costing.
   */
  private async acceptedButLost(task: UpstreamTask, upstreamId: string, requestId: string | null): Promise<void> {
    const now = await this.options.service.get(task.owner, task.id);
    if (now && (now.status === 'queued' || now.status === 'processing')) {
      this.options.log.warn({ task: task.id, channel: task.channel, upstreamId, requestId }, 'upstream accepted after the step lost its lease');
      return;
    }
    // Clears the stored `submitting` state: no later taker looks for this job.
    await this.options.service.takeUpstreamCancel(task.id);
    await this.canceller.cancel(
      { id: task.id, model: task.model, channel: task.channel, target: task.target, upstreamId, requestId },
      `the task became ${now?.status ?? 'unknown'} while it was being submitted`,
    );
  }

  /** Refused before acceptance: the next target of the route, or `upstream_unavailable`. */
  private async failover(
    task: UpstreamTask,
    targets: readonly RouteTarget[],
    reason: string,
    requestId: string | undefined,
    retryAfterMs: number | undefined,
    timeoutMs: number,
  ): Promise<void> {
    const next = targets[task.target + 1];
    this.options.log.warn({ task: task.id, channel: task.channel, reason, requestId, next: next?.channel ?? null }, 'upstream refused the submission');
    const throttled = retryAfterMs !== undefined || /\b429\b/.test(reason);
    if (!next && throttled && this.now() - task.createdAt < timeoutMs) {
      // Every target refused, the last for its rate: wait it out and start over from the first.
      const interval = Math.min(this.timings.pollMaxMs, Math.round((task.intervalMs ?? this.timings.pollStartMs) * 1.5));
      const wait = retryAfterMs ?? interval + Math.round(Math.random() * interval * 0.2);
      const first = targets[0];
      await this.options.service.saveUpstream(task, {
        ...this.base(task),
        status: 'queued',
        channel: first?.channel ?? task.channel,
        target: 0,
        upstreamState: null,
        since: null,
        nextCheckAt: first?.channel === 'sandbox' ? null : this.now() + wait,
        intervalMs: interval,
      });
      return;
    }
    if (!next) {
      const names = targets.map((target) => target.channel).join(', ');
      await this.fail(task, failure('upstream_unavailable', `No target would accept the task (${names}); the last said: ${reason}.`, '', requestId));
      return;
    }
    const toSandbox = next.channel === 'sandbox';
    await this.options.service.saveUpstream(task, {
      ...this.base(task),
      status: 'queued',
      channel: next.channel,
      target: task.target + 1,
      upstreamState: null,
      since: null,
      nextCheckAt: toSandbox ? null : this.now(),
    });
  }

  /** Sent, answer lost (or the process stopped meanwhile): reconcile, or fail; never submit again. */
  private async resolveUnknown(task: UpstreamTask, ctx: ChannelContext, adapter: ProtocolAdapter, reason: string): Promise<void> {
    const since = task.since ?? task.createdAt;
    if (adapter.reconcile) {
      let answer;
      try {
        const reconcile = adapter.reconcile.bind(adapter);
        const job = await this.job(task);
        answer = await this.timed(task, 'reconcile', () => reconcile(ctx, job));
      } catch (error) {
        this.options.log.error({ err: error, task: task.id }, 'adapter reconcile threw');
        answer = { outcome: 'undecided' as const, reason: 'the adapter failed' };
      }
      if (answer.outcome === 'found') return this.accept(task, answer.upstreamId, task.requestId);
      if (answer.outcome === 'absent') {
        // Proven never created: submitting again on the same target is safe.
        await this.options.service.saveUpstream(task, { ...this.base(task), upstreamState: null, since: null, nextCheckAt: this.now() });
        return;
      }
      if (this.now() - since < this.timings.reconcileDeadlineMs) {
        // Still `submitting`: the next claim of it reconciles again.
        await this.options.service.saveUpstream(task, { ...this.base(task), upstreamState: 'submitting', nextCheckAt: this.now() + this.timings.pollStartMs });
        return;
      }
      reason = answer.reason;
    }
    this.options.log.warn({ task: task.id, channel: task.channel, reason }, 'upstream submission unknown');
    await this.fail(
      task,
      failure(
        'upstream_submission_unknown',
        `The submission to channel '${task.channel}' may have created a job upstream, but its answer was lost (${reason}); it is not submitted again.`,
      ),
    );
  }

  private async poll(task: UpstreamTask, ctx: ChannelContext, adapter: ProtocolAdapter, pollPerS: number, timeoutMs: number, baseUrl: string): Promise<void> {
    const upstreamId = task.upstreamId ?? '';
    const since = task.since ?? task.createdAt;
    if (this.now() - since > timeoutMs) {
      // Failed first: a cancel that gets no answer is then kept as owed on the final task and tried again.
      await this.fail(
        task,
        failure('upstream_timeout', `The upstream task ran past the channel's timeout_s (${timeoutMs / 1000} s).`, '', task.requestId ?? undefined),
      );
      if (upstreamId !== '') {
        const job = { id: task.id, model: task.model, channel: task.channel, target: task.target, upstreamId, requestId: task.requestId };
        await this.canceller.cancel(job, 'the upstream task ran past timeout_s');
      }
      return;
    }
    const slotAt = await this.rates.take(task.id, task.channel, 'poll', pollPerS, { now: task.attempt, next: task.attempt + 1 });
    if (slotAt !== undefined) {
      // Its poll_per_s slot starts later: the task comes back then, and spends it.
      if (!(await this.options.service.saveUpstream(task, { ...this.base(task), nextCheckAt: slotAt }))) await this.lost(task);
      return;
    }
    let answer: PollOutcome;
    try {
      answer = await this.timed(task, 'poll', () => adapter.poll(ctx, upstreamId));
    } catch (error) {
      this.options.log.error({ err: error, task: task.id }, 'adapter poll threw');
      answer = { state: 'transient', reason: 'the adapter failed' };
    }
    this.metrics?.polled(task.channel, answer.state);
    if (answer.state === 'throttled') this.metrics?.throttled(task.channel, 'poll');
    const now = this.now();
    const interval = task.intervalMs ?? this.timings.pollStartMs;
    const backedOff = Math.min(this.timings.pollMaxMs, Math.round(interval * 1.5));
    const again = async (ms: number, change: Partial<UpstreamStep> = {}): Promise<void> => {
      const saved = await this.options.service.saveUpstream(task, { ...this.base(task), upstreamState: 'accepted', nextCheckAt: now + ms, ...change });
      if (!saved) await this.lost(task);
    };
    switch (answer.state) {
      case 'queued':
      case 'running': {
        const running = answer.state === 'running' || task.status === 'processing';
        const startedAt = running ? (task.startedAt ?? now) : null;
        const progress = running ? nextProgress(task.progress, answer.progress, now - (startedAt ?? now)) : task.progress;
        const changed = running !== (task.status === 'processing') || (answer.progress !== undefined && progress !== task.progress);
        const next = changed ? this.timings.pollStartMs : backedOff;
        await again(next, { status: running ? 'processing' : 'queued', startedAt, progress, intervalMs: next });
        return;
      }
      case 'throttled': {
        const wait = answer.retryAfterMs ?? backedOff + Math.round(Math.random() * backedOff * 0.2);
        await again(Math.min(wait, this.timings.pollMaxMs * 4), { intervalMs: backedOff });
        return;
      }
      case 'transient':
        this.options.log.warn({ task: task.id, channel: task.channel, reason: answer.reason }, 'upstream poll failed; trying again');
        await again(backedOff, { intervalMs: backedOff });
        return;
      case 'not_found':
        if (now - since < this.timings.notFoundGraceMs) {
          await again(backedOff, { intervalMs: backedOff });
          return;
        }
        await this.fail(task, failure('upstream_error', `The upstream no longer knows the task (${answer.upstreamWord}).`, '', task.requestId ?? undefined));
        return;
      case 'failed':
        await this.fail(task, answer.error);
        return;
      case 'succeeded':
        // What the upstream says it used, when its adapter reads it: the operator's record, not the bill.
        await inTaskSpan('mediagate.output_copy', this.options.service.storedTraceOf(task.id), upstreamSpan(task), () =>
          this.copyAndComplete(task, answer.outputs, baseUrl, backedOff, answer.reportedUsage),
        );
        return;
    }
  }

  private async copyAndComplete(
    task: UpstreamTask,
    outputs: readonly UpstreamOutput[],
    baseUrl: string,
    retryMs: number,
    reportedUsage: unknown,
  ): Promise<void> {
    const { service, storage } = this.options;
    const expect = task.kind === 'image' ? 'image' : 'video';
    const wanted = outputs.filter((output) => output.type === expect);
    if (wanted.length === 0) {
      await this.fail(task, failure('output_invalid', `The upstream reported success without a ${expect} output.`, '', task.requestId ?? undefined));
      return;
    }
    const leased = await service.saveUpstream(task, { ...this.base(task), upstreamState: 'copying', nextCheckAt: this.now() + this.timings.copyLeaseMs });
    if (!leased) return this.lost(task);
    // Outputs an earlier, interrupted copy stored but never completed, and its partial files.
    await storage.discard(task.id);
    const scratch = join(this.options.workRoot, `upstream-${task.id}`);
    await rm(scratch, { recursive: true, force: true });
    await mkdir(scratch, { recursive: true });
    try {
      await this.copyInto(scratch, task, wanted, expect, baseUrl, retryMs, reportedUsage);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  private async copyInto(
    scratch: string,
    task: UpstreamTask,
    wanted: readonly UpstreamOutput[],
    expect: 'video' | 'image',
    baseUrl: string,
    retryMs: number,
    reportedUsage: unknown,
  ): Promise<void> {
    const { service, storage } = this.options;
    const ext = expect === 'image' ? 'png' : 'mp4';
    const copies: { path: string; type: 'video' | 'image'; contentType: string }[] = [];
    for (const [index, output] of wanted.entries()) {
      const destination = join(scratch, `${task.attempt}-${index}.${ext}`);
      const copied = await copyOutput(output.url, {
        channelBaseUrl: baseUrl,
        expect,
        destination,
        allow: this.options.fetchAllow,
        ...(output.headers === undefined ? {} : { originHeaders: output.headers }),
      });
      if (!copied.ok) {
        if (copied.transient) {
          this.options.log.warn({ task: task.id, reason: copied.error.message }, 'output copy failed; trying again');
          await service.saveUpstream(task, { ...this.base(task), upstreamState: 'accepted', nextCheckAt: this.now() + retryMs, intervalMs: retryMs });
          return;
        }
        await this.fail(task, { ...copied.error, ...(task.requestId === null ? {} : { requestId: task.requestId }) });
        return;
      }
      this.metrics?.copied(task.channel, copied.bytes);
      copies.push({ path: destination, type: expect, contentType: copied.contentType });
    }
    // Billed from our copies, as a render is from its files (attempt-end.ts).
    const won = await endAttempt(copies, {
      taskId: task.id,
      log: this.options.log,
      put: (copy) => storage.put(task.id, copy.path, ext),
      complete: (stored, metered) => service.completeUpstream(task, stored, metered, reportedUsage),
      remove: (key) => storage.delete(key),
    });
    if (!won) {
      await this.lost(task);
      return;
    }
    this.logOutcome(task, 'completed');
  }

  private async fail(task: UpstreamTask, error: UpstreamFailure): Promise<void> {
    const made = taskError(error);
    const scrub = this.options.scrub ?? ((text: string) => text);
    if (await this.options.service.failUpstream(task, { ...made, message: scrub(made.message), param: scrub(made.param) }))
      this.logOutcome(task, 'failed', made.code);
  }

  /**
   * The same line a worker logs when a render ends ("task completed" / "task failed"), with the
   * channel that ran it, so one search finds every finished task whichever way it was routed.
   * `durationMs` counts from creation: an upstream task has no attempt of ours to time.
   */
  private logOutcome(task: UpstreamTask, outcome: 'completed' | 'failed', failure?: string): void {
    const line = { task: task.id, model: task.model, channel: task.channel, outcome, durationMs: this.now() - task.createdAt, failure };
    if (outcome === 'failed') this.options.log.warn(line, 'task failed');
    else this.options.log.info(line, 'task completed');
  }
}

/** What every span of an upstream step says (tracing/): the task, its channel, the key's id, the provider's job id. */
function upstreamSpan(task: UpstreamTask): TaskSpanAttributes {
  return {
    taskId: task.id,
    model: task.model,
    channel: task.channel,
    keyId: task.owner,
    extra: { 'mediagate.upstream.id': task.upstreamId ?? undefined, 'mediagate.attempt': task.attempt },
  };
}

/** The provider's request id of an adapter's answer, when it carries one. */
function requestIdOf(answer: unknown): string | undefined {
  const id = typeof answer === 'object' && answer !== null ? (answer as { requestId?: unknown }).requestId : undefined;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

function failure(code: string, message: string, param = '', requestId?: string): UpstreamFailure {
  return requestId === undefined ? { code, param, message } : { code, param, message, requestId };
}

/**
 * The task's error: the adapter's code when it is one of ours (a `mediagate` channel's codes
 * are this interface's), else `upstream_error` naming the upstream's code; the upstream's
 * request id in the message.
 */
export function taskError(error: UpstreamFailure): TaskError {
  const known = isTaskFailureCode(error.code);
  let message = known ? error.message : `${error.message} (upstream code ${error.code})`;
  if (error.requestId !== undefined && !message.includes(error.requestId)) message = `${message} (upstream request id ${error.requestId})`;
  return { type: 'generation_error', code: known ? error.code : 'upstream_error', message, param: error.param };
}
