import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createChannelHttp } from '../../src/channels/http.js';
import { createChannelMedia } from '../../src/channels/media.js';
import { copyOutput } from '../../src/channels/output-copy.js';
import type { TargetProfile } from '../../src/channels/profiles.js';
import type { ChannelContext, ChannelJob, PollOutcome, ProtocolAdapter } from '../../src/channels/protocol.js';

/**
 * A real ChannelContext for driving one adapter against a fake over HTTP: the channel's HTTP
 * client locked to the fake's origin, media inputs as the service reads them (with an optional
 * `publish` standing in for the deployment's public base URL), and a log that records warnings.
 */
export interface TestContext extends ChannelContext {
  readonly warnings: object[];
  close(): Promise<void>;
}

export function adapterContext(options: {
  baseUrl: string;
  apiKey: string;
  upstreamModel: string;
  publish?: (bytes: Buffer, mime: string) => Promise<string | null>;
  timeoutMs?: number;
  /** The target's profile (profileFor(protocol, upstreamModel) for a built-in one). */
  profile?: TargetProfile | undefined;
}): TestContext {
  const http = createChannelHttp({ baseUrl: options.baseUrl, timeoutMs: options.timeoutMs ?? 5_000 });
  const warnings: object[] = [];
  return {
    channel: 'test-channel',
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    apiKey: options.apiKey,
    upstreamModel: options.upstreamModel,
    profile: options.profile,
    http,
    media: createChannelMedia(options.publish ? { publish: options.publish } : {}),
    log: { debug: () => undefined, info: () => undefined, warn: (obj) => void warnings.push(obj) },
    now: () => Date.now(),
    warnings,
    close: () => http.close(),
  };
}

export function videoJob(params: Record<string, unknown>, model = 'test/model'): ChannelJob {
  return { taskId: `tsk_${Math.random().toString(36).slice(2, 12)}`, kind: 'video', model, params: { model, duration: 5, ...params } };
}

/**
 * Polls until the outcome leaves queued/running/throttled/transient, or throws after the deadline.
 * Each poll is a real request; between polls it waits for the next macrotask only, since the fakes
 * finish tasks by their clock, not by timers.
 */
export async function pollUntilSettled(
  adapter: ProtocolAdapter,
  ctx: ChannelContext,
  id: string,
  deadlineMs = 10_000,
): Promise<{ last: PollOutcome; seen: PollOutcome[] }> {
  const seen: PollOutcome[] = [];
  const until = Date.now() + deadlineMs;
  for (;;) {
    const outcome = await adapter.poll(ctx, id);
    seen.push(outcome);
    if (outcome.state !== 'queued' && outcome.state !== 'running' && outcome.state !== 'throttled' && outcome.state !== 'transient')
      return { last: outcome, seen };
    if (Date.now() > until) throw new Error(`poll did not settle within ${deadlineMs} ms; last ${JSON.stringify(outcome)}`);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/**
 * Copies the first output of a successful poll the way the lifecycle does (output-copy.ts), into
 * a fresh temporary file, and returns what was kept: the bytes, or the copy's failure.
 */
export async function copyFirstOutput(
  outcome: PollOutcome,
  channelBaseUrl: string,
): Promise<{ ok: true; bytes: Buffer } | { ok: false; code: string; transient: boolean; message: string }> {
  if (outcome.state !== 'succeeded') throw new Error(`expected success: ${JSON.stringify(outcome)}`);
  const output = outcome.outputs[0];
  if (!output) throw new Error('no output');
  const dir = await mkdtemp(join(tmpdir(), 'mg-copy-'));
  try {
    const destination = join(dir, 'out');
    const copied = await copyOutput(output.url, {
      channelBaseUrl,
      expect: output.type,
      destination,
      timeoutMs: 5_000,
      // As the lifecycle does: an output's headers go to the channel origin only.
      ...(output.headers === undefined ? {} : { originHeaders: output.headers }),
    });
    if (!copied.ok) return { ok: false, code: copied.error.code, transient: copied.transient, message: copied.error.message };
    return { ok: true, bytes: await readFile(destination) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
