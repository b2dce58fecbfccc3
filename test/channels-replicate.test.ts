import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VIDEO_MODELS } from '../src/catalog/video-models.js';
import { replicateAdapter } from '../src/channels/protocols/replicate.js';
import type { PollOutcome } from '../src/channels/protocol.js';
import { adapterContext, copyFirstOutput, videoJob, type TestContext } from './fakes/adapter-context.js';
import { profileFor } from '../src/channels/profiles.js';
import { startReplicateFake, type ReplicateFake } from './fakes/replicate.js';
import { TINY_MP4, TINY_PNG } from './fakes/upstream-kit.js';

const KEY = 'r8_key';
/** A model the fake publishes no schema for: the generic field names travel as they are. */
const MODEL = 'acme/video-model';
const PNG = `data:image/png;base64,${TINY_PNG.toString('base64')}`;
let now = 1_800_000_000_000;
let fake: ReplicateFake;
let ctx: TestContext;

beforeAll(async () => {
  fake = await startReplicateFake({ apiKey: KEY, clock: () => now, queuedMs: 1_000, runMs: 10_000 });
  ctx = adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel: MODEL });
});
afterAll(async () => {
  await ctx.close();
  await fake.close();
});
beforeEach(() => {
  now += 3_600_000;
});

async function accepted(params: Record<string, unknown>, on: TestContext = ctx): Promise<string> {
  const outcome = await replicateAdapter.submit(on, videoJob(params));
  if (outcome.outcome !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(outcome)}`);
  return outcome.upstreamId;
}
const predictionOf = (upstreamId: string): string => upstreamId.split('|')[0] ?? '';

async function bytesOf(outcome: PollOutcome): Promise<Buffer> {
  if (outcome.state !== 'succeeded') throw new Error(`expected success: ${JSON.stringify(outcome)}`);
  return Buffer.from(await (await fetch(outcome.outputs[0]?.url ?? '')).arrayBuffer());
}

describe('replicate predictions', () => {
  it('creates on the official model path with the generic input', async () => {
    const id = await accepted({ prompt: 'a cat', image: 'https://img.example/a.png', end_image: PNG, duration: 10, seed: 3, aspect_ratio: '9:16' });
    expect(id).toMatch(/^[0-9a-f]{26}\|video$/);
    expect(fake.modelOf(predictionOf(id))).toBe(MODEL);
    expect(fake.book.get(predictionOf(id))?.body).toEqual({
      input: { prompt: 'a cat', image: 'https://img.example/a.png', end_image: PNG, duration: 10, seed: 3, aspect_ratio: '9:16' },
    });
  });

  it('owner/name:version and renames go to /v1/predictions with the version', async () => {
    const versioned = adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel: 'someone/wan:abc123?image=start_image&duration=num_seconds' });
    const id = await accepted({ prompt: 'x', image: 'https://img.example/a.png' }, versioned);
    await versioned.close();
    expect(fake.modelOf(predictionOf(id))).toBe('abc123');
    expect(fake.book.get(predictionOf(id))?.body).toEqual({
      version: 'abc123',
      input: { prompt: 'x', start_image: 'https://img.example/a.png', num_seconds: 5 },
    });
  });

  it('starting -> queued, processing -> running with progress from the logs, succeeded -> the output (real MP4 bytes)', async () => {
    const id = await accepted({ prompt: 'x' });
    expect(await replicateAdapter.poll(ctx, id)).toEqual({ state: 'queued', upstreamWord: 'starting' });
    now += 1_000 + 4_500;
    expect(await replicateAdapter.poll(ctx, id)).toEqual({ state: 'running', progress: 45, upstreamWord: 'processing' });
    now += 10_000;
    expect((await bytesOf(await replicateAdapter.poll(ctx, id))).equals(TINY_MP4)).toBe(true);
  });

  it('flux-schnell (built-in profile): a size becomes the nearest aspect ratio it takes; no width or height is sent', async () => {
    const model = 'black-forest-labs/flux-schnell';
    const flux = adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel: model, profile: profileFor('replicate', model) });
    const params = { model: 'm', prompt: 'a fox', width: 1536, height: 1024, size: '1536x1024', prompt_extend: false, output_format: 'png', n: 1, seed: 11 };
    const outcome = await replicateAdapter.submit(flux, { taskId: 't', kind: 'image', model: 'm', params });
    if (outcome.outcome !== 'accepted') throw new Error(JSON.stringify(outcome));
    const id = predictionOf(outcome.upstreamId);
    expect(fake.book.get(id)?.body).toEqual({ input: { prompt: 'a fox', aspect_ratio: '3:2', output_format: 'png', num_outputs: 1, seed: 11 } });
    expect(fake.ignoredInputs.get(id)).toBeUndefined();
    // prompt_extend: true is a request flux-schnell cannot honour: refused, not dropped.
    expect(replicateAdapter.check({ channel: 'c', upstreamModel: model, profile: flux.profile }, 'image', { ...params, prompt_extend: true })).toMatchObject({
      param: 'prompt_extend',
    });
    now += 60_000;
    const done = await replicateAdapter.poll(flux, outcome.upstreamId);
    expect(done.state === 'succeeded' && done.outputs.map((o) => o.type)).toEqual(['image']);
    expect(done).toMatchObject({ reportedUsage: { predict_time_s: 10 } });
    expect((await bytesOf(done)).equals(TINY_PNG)).toBe(true);
    await flux.close();
  });

  it('the fake ignores what a model does not declare, as Replicate does: the old generic width/height reached flux-schnell and did nothing', async () => {
    const flux = adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel: 'black-forest-labs/flux-schnell' });
    const outcome = await replicateAdapter.submit(flux, {
      taskId: 't',
      kind: 'image',
      model: 'm',
      params: { model: 'm', prompt: 'a fox', width: 512, height: 768 },
    });
    if (outcome.outcome !== 'accepted') throw new Error(JSON.stringify(outcome));
    expect(fake.ignoredInputs.get(predictionOf(outcome.upstreamId))).toEqual(['width', 'height']);
    await flux.close();
  });

  it('kling-v2.1 (built-in profile): start_image, the integer duration, 720p as mode standard; 1080p with an end frame as pro; 7 s refused', async () => {
    const model = 'kwaivgi/kling-v2.1';
    const kling = adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel: model, profile: profileFor('replicate', model) });
    const a = await accepted({ prompt: 'a cat', image: 'https://img.example/a.png', resolution: '720p' }, kling);
    expect(fake.book.get(predictionOf(a))?.body).toEqual({
      input: { prompt: 'a cat', start_image: 'https://img.example/a.png', mode: 'standard', duration: 5 },
    });
    const b = await accepted(
      { prompt: 'x', image: 'https://img.example/a.png', end_image: 'https://img.example/b.png', resolution: '1080p', duration: 10 },
      kling,
    );
    expect(fake.book.get(predictionOf(b))?.body).toMatchObject({ input: { mode: 'pro', duration: 10, end_image: 'https://img.example/b.png' } });
    expect(await replicateAdapter.submit(kling, videoJob({ prompt: 'x', image: 'https://img.example/a.png', duration: 7 }))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'unsupported_value', param: 'duration' },
    });
    await kling.close();
  });

  it('failed -> upstream_error; the NSFW checker (late, or at once) -> content_policy_violation; canceled and aborted -> upstream_error', async () => {
    const failed = await accepted({ prompt: 'x [fake:fail]' });
    const late = await accepted({ prompt: 'x [fake:moderation]' });
    const early = await accepted({ prompt: 'x [fake:moderation-early]' });
    expect(await replicateAdapter.poll(ctx, early)).toMatchObject({ state: 'failed', upstreamWord: 'failed', error: { code: 'content_policy_violation' } });
    const aborted = await accepted({ prompt: 'x' });
    fake.forceStatus(predictionOf(aborted), 'aborted');
    now += 60_000;
    expect(await replicateAdapter.poll(ctx, failed)).toMatchObject({ state: 'failed', error: { code: 'upstream_error' } });
    expect(await replicateAdapter.poll(ctx, late)).toMatchObject({ state: 'failed', error: { code: 'content_policy_violation' } });
    expect(await replicateAdapter.poll(ctx, aborted)).toMatchObject({ state: 'failed', upstreamWord: 'aborted', error: { code: 'upstream_error' } });
  });

  it('an unknown status word is running and logged, never shown', async () => {
    const id = await accepted({ prompt: 'x' });
    fake.forceStatus(predictionOf(id), 'warming_up');
    const warnings = ctx.warnings.length;
    expect((await replicateAdapter.poll(ctx, id)).state).toBe('running');
    expect(ctx.warnings.length).toBe(warnings + 1);
  });

  it('outputs deleted after the retention window are output_invalid; an expired output URL is refused', async () => {
    const id = await accepted({ prompt: 'x [fake:expire] [fake:instant]' });
    const done = await replicateAdapter.poll(ctx, id);
    if (done.state !== 'succeeded') throw new Error(JSON.stringify(done));
    expect((await fetch(done.outputs[0]?.url ?? '')).status).toBe(403);
    now += 1;
    expect(await replicateAdapter.poll(ctx, id)).toMatchObject({ state: 'failed', error: { code: 'output_invalid' } });
  });

  it('create refusals (no prediction made): 429 with and without Retry-After, bad token, 402 credit; 422 input validation is final', async () => {
    const before = fake.http.stats.accepted;
    fake.http.inject({ on: 'submit', kind: '429-retry-after', retryAfterS: 30 });
    expect(await replicateAdapter.submit(ctx, videoJob({ prompt: 'x' }))).toMatchObject({ outcome: 'refused', retryAfterMs: 30_000 });
    const throttled = await replicateAdapter.submit(ctx, videoJob({ prompt: 'x [fake:rate-limit]' }));
    expect(throttled.outcome).toBe('refused');
    expect(throttled).not.toHaveProperty('retryAfterMs');
    const wrong = adapterContext({ baseUrl: fake.origin, apiKey: 'nope', upstreamModel: MODEL });
    expect((await replicateAdapter.submit(wrong, videoJob({ prompt: 'x' }))).outcome).toBe('refused');
    expect((await replicateAdapter.probe(wrong)).ok).toBe(false);
    await wrong.close();
    expect((await replicateAdapter.submit(ctx, videoJob({ prompt: 'x [fake:quota]' }))).outcome).toBe('refused');
    expect(await replicateAdapter.submit(ctx, videoJob({ prompt: 'x [fake:invalid]' }))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'upstream_error' },
    });
    expect(fake.http.stats.accepted).toBe(before);
    expect((await replicateAdapter.probe(ctx)).ok).toBe(true);
  });

  it('a lost create is unknown with exactly one prediction upstream; unknown ids are not_found; poll 429 is throttled', async () => {
    const before = fake.http.stats.accepted;
    expect((await replicateAdapter.submit(ctx, videoJob({ prompt: 'x [fake:lose-answer]' }))).outcome).toBe('unknown');
    expect(fake.http.stats.accepted).toBe(before + 1);
    expect(typeof replicateAdapter.reconcile).toBe('undefined');
    expect((await replicateAdapter.poll(ctx, 'zzz|video')).state).toBe('not_found');
    const id = await accepted({ prompt: 'x' });
    fake.http.inject({ on: 'poll', kind: '429' });
    expect(await replicateAdapter.poll(ctx, id)).toEqual({ state: 'throttled' });
    fake.http.inject({ on: 'poll', kind: '500' });
    expect((await replicateAdapter.poll(ctx, id)).state).toBe('transient');
  });

  it('cancel: a running prediction is cancelled (and reads canceled); a finished one is not cancellable', async () => {
    const id = await accepted({ prompt: 'x' });
    expect(await replicateAdapter.cancel?.(ctx, id)).toEqual({ outcome: 'cancelled' });
    expect(await replicateAdapter.poll(ctx, id)).toMatchObject({ state: 'failed', upstreamWord: 'canceled' });
    const done = await accepted({ prompt: 'x [fake:instant]' });
    expect(await replicateAdapter.cancel?.(ctx, done)).toEqual({ outcome: 'not_cancellable', reason: 'succeeded' });
  });

  it('refuses a model that is neither owner/name nor a version, and extra, before any request', async () => {
    const before = fake.http.stats.requests;
    const bad = adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel: 'kling' });
    expect((await replicateAdapter.submit(bad, videoJob({ prompt: 'x' }))).outcome).toBe('refused');
    await bad.close();
    expect(await replicateAdapter.submit(ctx, videoJob({ prompt: 'x', extra: { image_options: [{ ref_name: 'a' }] } }))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'unsupported_value', param: 'extra' },
    });
    expect(fake.http.stats.requests).toBe(before);
  });

  it('output copy: the real MP4 is kept byte for byte; not-media, missing and expired outputs are output_invalid', async () => {
    const ids: string[] = [];
    for (const marker of ['', ' [fake:not-media]', ' [fake:missing-output]', ' [fake:expire]'])
      ids.push(await accepted({ prompt: `x${marker} [fake:instant]` }));
    const [good, notMedia, missing, expiring] = await Promise.all(ids.map((id) => replicateAdapter.poll(ctx, id)));
    if (!good || !notMedia || !missing || !expiring) throw new Error('missing polls');
    now += 1;
    const kept = await copyFirstOutput(good, fake.origin);
    expect(kept.ok && kept.bytes.equals(TINY_MP4)).toBe(true);
    for (const outcome of [notMedia, missing, expiring])
      expect(await copyFirstOutput(outcome, fake.origin)).toMatchObject({ ok: false, code: 'output_invalid' });
  });
});

it('documents every parameter a model accepts', () => {
  const documented = new Set(replicateAdapter.paramMapping.map((row) => row.param));
  const accepted = new Set([
    'prompt',
    'duration',
    'resolution',
    'seed',
    'size',
    'width',
    'height',
    'n',
    'output_format',
    ...VIDEO_MODELS.flatMap((row) => [...row.required, ...row.optional]),
  ]);
  for (const param of accepted) expect(documented, param).toContain(param);
});
