/**
 * Per-channel metrics (docs/operations/metrics.md#channels). Defined here, recorded by the upstream
 * lifecycle through `ChannelMetrics`, served at GET /metrics with the process's other series.
 * Every series is labelled by `channel` (the configured name, never a URL or key); counts are
 * per process, like the rest of /metrics (sum them across processes).
 *
 * | series | type | labels | meaning |
 * |---|---|---|---|
 * | `mediagate_channel_in_flight` | gauge | channel | tasks held upstream (submitting, accepted, copying) by the whole deployment, as the store counted them at this process's last refresh (about once a second, in processes running the scheduler) |
 * | `mediagate_channel_submissions_total` | counter | channel, outcome | submissions by outcome: accepted, refused, rejected, unknown |
 * | `mediagate_channel_upstream_seconds` | histogram | channel, operation | upstream API call latency: submit, poll, cancel, reconcile, probe |
 * | `mediagate_channel_throttled_total` | counter | channel, operation | 429 answers (and throttles inside HTTP 200) |
 * | `mediagate_channel_polls_total` | counter | channel, outcome | polls by outcome: queued, running, succeeded, failed, not_found, throttled, transient |
 * | `mediagate_channel_copy_bytes_total` | counter | channel | output bytes copied into our storage |
 * | `mediagate_channel_cancels_total` | counter | channel, outcome | upstream cancels of cancelled tasks: cancelled, not_cancellable, transient, unsupported |
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CancelOutcome, PollOutcome, SubmitOutcome } from './protocol.js';

export type ChannelOperation = 'submit' | 'poll' | 'cancel' | 'reconcile' | 'probe';
export type SubmissionOutcome = SubmitOutcome['outcome'];
export type PollState = PollOutcome['state'];
/** An adapter's cancel outcome, or `unsupported` when the protocol has no cancel. */
export type CancelResult = CancelOutcome['outcome'] | 'unsupported';

/** What the lifecycle calls; one method per event it observes. */
export interface ChannelMetrics {
  /** The number of tasks currently in flight on the channel (set after a claim or a count). */
  setInFlight(channel: string, count: number): void;
  /** One submission answered (the adapter's `submit` outcome). */
  submitted(channel: string, outcome: SubmissionOutcome): void;
  /** The latency of one upstream API call, in milliseconds. */
  upstreamLatency(channel: string, operation: ChannelOperation, ms: number): void;
  /** One 429 (or throttle) from the upstream. */
  throttled(channel: string, operation: ChannelOperation): void;
  /** One poll answered (the adapter's `poll` state). */
  polled(channel: string, state: PollState): void;
  /** Bytes of one output copied into our storage. */
  copied(channel: string, bytes: number): void;
  /** One upstream cancel of a cancelled (or timed-out) task, by outcome. */
  cancelled(channel: string, outcome: CancelResult): void;
}

/** The series on `registry` (a fresh one when omitted, e.g. a worker-only process that serves no /metrics). */
export function createChannelMetrics(registry: Registry = new Registry()): ChannelMetrics {
  const registers = [registry];
  const inFlight = new Gauge({ name: 'mediagate_channel_in_flight', help: 'Upstream tasks in flight per channel', labelNames: ['channel'], registers });
  const submissions = new Counter({
    name: 'mediagate_channel_submissions_total',
    help: 'Upstream submissions by outcome (accepted, refused, rejected, unknown)',
    labelNames: ['channel', 'outcome'],
    registers,
  });
  const latency = new Histogram({
    name: 'mediagate_channel_upstream_seconds',
    help: 'Upstream API call latency by operation',
    labelNames: ['channel', 'operation'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const throttles = new Counter({
    name: 'mediagate_channel_throttled_total',
    help: 'Upstream 429 answers by operation',
    labelNames: ['channel', 'operation'],
    registers,
  });
  const polls = new Counter({ name: 'mediagate_channel_polls_total', help: 'Upstream polls by outcome', labelNames: ['channel', 'outcome'], registers });
  const copyBytes = new Counter({
    name: 'mediagate_channel_copy_bytes_total',
    help: 'Output bytes copied from upstreams into storage',
    labelNames: ['channel'],
    registers,
  });
  const cancels = new Counter({
    name: 'mediagate_channel_cancels_total',
    help: 'Upstream cancels by outcome (cancelled, not_cancellable, transient, unsupported)',
    labelNames: ['channel', 'outcome'],
    registers,
  });
  return {
    setInFlight: (channel, count) => inFlight.set({ channel }, count),
    submitted: (channel, outcome) => submissions.inc({ channel, outcome }),
    upstreamLatency: (channel, operation, ms) => latency.observe({ channel, operation }, ms / 1000),
    throttled: (channel, operation) => throttles.inc({ channel, operation }),
    polled: (channel, state) => polls.inc({ channel, outcome: state }),
    copied: (channel, bytes) => copyBytes.inc({ channel }, bytes),
    cancelled: (channel, outcome) => cancels.inc({ channel, outcome }),
  };
}
