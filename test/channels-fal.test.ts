import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VIDEO_MODELS } from '../src/catalog/video-models.js';
import { falAdapter } from '../src/channels/protocols/fal.js';
import type { PollOutcome } from '../src/channels/protocol.js';
import { adapterContext, copyFirstOutput, videoJob, type TestContext } from './fakes/adapter-context.js';
import { profileFor } from '../src/channels/profiles.js';
import { startFalFake, type FalFake } from './fakes/fal.js';
import { TINY_MP4, TINY_PNG } from './fakes/upstream-kit.js';

const KEY = 'fal-key';
const I2V = 'fal-ai/kling-video/v2/master/image-to-video';
const PNG = `data:image/png;base64,${TINY_PNG.toString('base64')}`;
let now = 1_800_000_000_000;
let fake: FalFake;
let ctx: TestContext;

beforeAll(async () => {
  fake = await startFalFake({ apiKey: KEY, clock: () => now, queuedMs: 1_000, runMs: 10_000 });
  ctx = adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel: I2V });
});
afterAll(async () => {
  await ctx.close();
  await fake.close();
});
beforeEach(() => {
  now += 3_600_000;
});

async function accepted(params: Record<string, unknown>, on: TestContext = ctx): Promise<string> {
  const outcome = await falAdapter.submit(on, videoJob(params));
  if (outcome.outcome !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(outcome)}`);
  return outcome.upstreamId;
}
const requestIdOf = (upstreamId: string): string => upstreamId.split('|')[1] ?? '';

async function bytesOf(outcome: PollOutcome): Promise<Buffer> {
  if (outcome.state !== 'succeeded') throw new Error(`expected success: ${JSON.stringify(outcome)}`);
  return Buffer.from(await (await fetch(outcome.outputs[0]?.url ?? '')).arrayBuffer());
}

describe('fal queue', () => {
  it('submits the generic input on the full model path; status and result live under owner/app', async () => {
    const id = await accepted({ prompt: 'a cat', image: PNG, resolution: '720p', aspect_ratio: '16:9', seed: -1, audio_enable: true, negative_prompt: 'blur' });
    expect(id).toMatch(/^fal-ai\/kling-video\|[0-9a-f-]{36}\|video$/);
    expect(fake.pathOf(requestIdOf(id))).toBe(I2V);
    expect(fake.book.get(requestIdOf(id))?.body).toEqual({
      prompt: 'a cat',
      image_url: PNG,
      duration: 5,
      resolution: '720p',
      aspect_ratio: '16:9',
      generate_audio: true,
      negative_prompt: 'blur',
    });
  });

  it('renames fields from the upstream_model query string, and sends data URLs as our public URL when there is one', async () => {
    const renamed = adapterContext({
      baseUrl: fake.origin,
      apiKey: KEY,
      upstreamModel: `${I2V}?end_image=tail_image_url&seed=random_seed`,
      publish: () => Promise.resolve('https://media.example/signed/in.png'),
    });
    const id = await accepted({ prompt: 'x', image: 'https://img.example/a.png', end_image: PNG, seed: 9 }, renamed);
    await renamed.close();
    expect(fake.book.get(requestIdOf(id))?.body).toMatchObject({
      image_url: 'https://img.example/a.png',
      tail_image_url: 'https://media.example/signed/in.png',
      random_seed: 9,
    });
  });

  it("IN_QUEUE -> queued, IN_PROGRESS -> running, COMPLETED -> the result's video (real MP4 bytes)", async () => {
    const id = await accepted({ prompt: 'x', image: PNG });
    expect(await falAdapter.poll(ctx, id)).toEqual({ state: 'queued', upstreamWord: 'IN_QUEUE' });
    now += 2_000;
    expect(await falAdapter.poll(ctx, id)).toEqual({ state: 'running', upstreamWord: 'IN_PROGRESS' });
    now += 10_000;
    const done = await falAdapter.poll(ctx, id);
    expect(done).toMatchObject({ reportedUsage: { predict_time_s: 10 } });
    expect((await bytesOf(done)).equals(TINY_MP4)).toBe(true);
  });

  it('image models: width/height as image_size, one PNG, and the images[] result', async () => {
    const flux = adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel: 'fal-ai/flux/dev' });
    const params = { model: 'm', prompt: 'a fox', width: 1024, height: 768, size: '1024x768', prompt_extend: false, output_format: 'png', n: 1, seed: 0 };
    const outcome = await falAdapter.submit(flux, { taskId: 't1', kind: 'image', model: 'm', params });
    if (outcome.outcome !== 'accepted') throw new Error(JSON.stringify(outcome));
    expect(fake.book.get(requestIdOf(outcome.upstreamId))?.body).toEqual({
      prompt: 'a fox',
      image_size: { width: 1024, height: 768 },
      enable_prompt_expansion: false,
      output_format: 'png',
      num_images: 1,
    });
    now += 60_000;
    const done = await falAdapter.poll(flux, outcome.upstreamId);
    expect(done.state === 'succeeded' && done.outputs[0]?.type).toBe('image');
    expect((await bytesOf(done)).equals(TINY_PNG)).toBe(true);
    await flux.close();
  });

  it('failures only show with the result: 504 request_timeout -> upstream_error, 422 content_policy_violation -> content_policy_violation, 422 validation -> upstream_error', async () => {
    const failed = await accepted({ prompt: 'x [fake:fail]' });
    const moderated = await accepted({ prompt: 'x [fake:moderation]' });
    const invalid = await accepted({ prompt: 'x [fake:invalid]' });
    now += 60_000;
    expect(await falAdapter.poll(ctx, failed)).toMatchObject({ state: 'failed', upstreamWord: 'COMPLETED', error: { code: 'upstream_error' } });
    expect(await falAdapter.poll(ctx, moderated)).toMatchObject({ state: 'failed', upstreamWord: 'COMPLETED', error: { code: 'content_policy_violation' } });
    expect(await falAdapter.poll(ctx, invalid)).toMatchObject({ state: 'failed', upstreamWord: 'COMPLETED', error: { code: 'upstream_error' } });
  });

  it('unknown and forgotten request ids are not_found; a stuck request stays running', async () => {
    expect((await falAdapter.poll(ctx, 'fal-ai/kling-video|nope|video')).state).toBe('not_found');
    const forgotten = await accepted({ prompt: 'x [fake:forget]' });
    expect((await falAdapter.poll(ctx, forgotten)).state).toBe('not_found');
    const stuck = await accepted({ prompt: 'x [fake:stuck]' });
    now += 86_400_000;
    expect((await falAdapter.poll(ctx, stuck)).state).toBe('running');
  });

  it('submit refusals (no job created): 429 with and without Retry-After, a bad key, an exhausted balance; a lost answer is unknown with one job upstream', async () => {
    const before = fake.http.stats.accepted;
    fake.http.inject({ on: 'submit', kind: '429-retry-after', retryAfterS: 2 });
    expect(await falAdapter.submit(ctx, videoJob({ prompt: 'x' }))).toMatchObject({ outcome: 'refused', retryAfterMs: 2_000 });
    fake.http.inject({ on: 'submit', kind: '429' });
    expect((await falAdapter.submit(ctx, videoJob({ prompt: 'x' }))).outcome).toBe('refused');
    const wrong = adapterContext({ baseUrl: fake.origin, apiKey: 'nope', upstreamModel: I2V });
    expect((await falAdapter.submit(wrong, videoJob({ prompt: 'x' }))).outcome).toBe('refused');
    expect((await falAdapter.probe(wrong)).ok).toBe(false);
    await wrong.close();
    expect((await falAdapter.submit(ctx, videoJob({ prompt: 'x [fake:quota]' }))).outcome).toBe('refused');
    expect(fake.http.stats.accepted).toBe(before);
    expect((await falAdapter.submit(ctx, videoJob({ prompt: 'x [fake:lose-answer]' }))).outcome).toBe('unknown');
    expect(fake.http.stats.accepted).toBe(before + 1);
    expect(typeof falAdapter.reconcile).toBe('undefined');
    expect((await falAdapter.probe(ctx)).ok).toBe(true);
  });

  it('poll: 429 throttled (Retry-After kept), a bare 5xx transient', async () => {
    const id = await accepted({ prompt: 'x' });
    fake.http.inject({ on: 'poll', kind: '429-retry-after', retryAfterS: 5 });
    expect(await falAdapter.poll(ctx, id)).toEqual({ state: 'throttled', retryAfterMs: 5_000 });
    fake.http.inject({ on: 'poll', kind: '500' });
    expect((await falAdapter.poll(ctx, id)).state).toBe('transient');
  });

  it('cancel: a queued request is cancelled and then fails; a completed one is not cancellable', async () => {
    const id = await accepted({ prompt: 'x' });
    expect(await falAdapter.cancel?.(ctx, id)).toEqual({ outcome: 'cancelled' });
    expect(await falAdapter.poll(ctx, id)).toMatchObject({ state: 'failed', error: { code: 'upstream_error' } });
    const done = await accepted({ prompt: 'x [fake:instant]' });
    expect(await falAdapter.cancel?.(ctx, done)).toEqual({ outcome: 'not_cancellable', reason: 'ALREADY_COMPLETED' });
  });

  it('refuses extra (no generic field) and a model path that is not owner/app, before any request', async () => {
    const before = fake.http.stats.requests;
    expect(await falAdapter.submit(ctx, videoJob({ prompt: 'x', images: [PNG], extra: { image_options: [{ type: 'subject' }] } }))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'unsupported_value', param: 'extra' },
    });
    const bad = adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel: 'kling' });
    expect((await falAdapter.submit(bad, videoJob({ prompt: 'x' }))).outcome).toBe('refused');
    await bad.close();
    expect(fake.http.stats.requests).toBe(before);
  });

  it('output copy: the real MP4 is kept byte for byte; not-media, missing and expired outputs are output_invalid', async () => {
    const ids: string[] = [];
    for (const marker of ['', ' [fake:not-media]', ' [fake:missing-output]', ' [fake:expire]'])
      ids.push(await accepted({ prompt: `x${marker} [fake:instant]` }));
    const [good, notMedia, missing, expiring] = await Promise.all(ids.map((id) => falAdapter.poll(ctx, id)));
    if (!good || !notMedia || !missing || !expiring) throw new Error('missing polls');
    now += 1;
    const kept = await copyFirstOutput(good, fake.origin);
    expect(kept.ok && kept.bytes.equals(TINY_MP4)).toBe(true);
    for (const outcome of [notMedia, missing, expiring])
      expect(await copyFirstOutput(outcome, fake.origin)).toMatchObject({ ok: false, code: 'output_invalid' });
  });
});

describe('fal Kling 2.1 Pro (the documented example target, with its built-in profile)', () => {
  const KLING = 'fal-ai/kling-video/v2.1/pro/image-to-video';
  const profiled = (upstreamModel = KLING): TestContext =>
    adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel, profile: profileFor('fal', upstreamModel) });

  it('the fake refuses what fal refuses: an integer duration is a 422 on the duration enum', async () => {
    const answer = await fetch(`${fake.origin}/${KLING}`, {
      method: 'POST',
      headers: { authorization: `Key ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'x', image_url: 'https://img.example/a.png', duration: 5 }),
    });
    expect(answer.status).toBe(422);
    expect(await answer.json()).toMatchObject({ detail: [{ loc: ['body', 'duration'], type: 'enum' }] });
  });

  it('sends duration as the string "5", the end frame as tail_image_url, and no field the endpoint does not declare', async () => {
    const ctx = profiled();
    const outcome = await falAdapter.submit(
      ctx,
      videoJob({ prompt: 'a cat', image: PNG, end_image: 'https://img.example/b.png', resolution: '1080p', seed: -1 }),
    );
    if (outcome.outcome !== 'accepted') throw new Error(JSON.stringify(outcome));
    const id = requestIdOf(outcome.upstreamId);
    expect(fake.book.get(id)?.body).toEqual({ prompt: 'a cat', image_url: PNG, tail_image_url: 'https://img.example/b.png', duration: '5' });
    expect(fake.ignoredFields.get(id)).toBeUndefined();
    now += 60_000;
    const done = await falAdapter.poll(ctx, outcome.upstreamId);
    expect(done).toMatchObject({ state: 'succeeded', reportedUsage: { predict_time_s: 10 } });
    await ctx.close();
  });

  it('refuses, before any request, what Kling cannot take: 7 s, 720p, a seed, an aspect ratio', async () => {
    const ctx = profiled();
    const before = fake.http.stats.requests;
    for (const [params, param] of [
      [{ duration: 7, resolution: '1080p' }, 'duration'],
      [{ resolution: '720p' }, 'resolution'],
      [{ resolution: '1080p', seed: 42 }, 'seed'],
      [{ resolution: '1080p', aspect_ratio: '16:9' }, 'aspect_ratio'],
    ] as const) {
      expect(
        falAdapter.check({ channel: 'c', upstreamModel: KLING, profile: ctx.profile }, 'video', videoJob({ prompt: 'x', image: PNG, ...params }).params),
      ).toMatchObject({ param });
      expect(await falAdapter.submit(ctx, videoJob({ prompt: 'x', image: PNG, ...params }))).toMatchObject({
        outcome: 'rejected',
        error: { code: 'unsupported_value', param },
      });
    }
    expect(fake.http.stats.requests).toBe(before);
    await ctx.close();
  });
});

describe('fal namespaced endpoints', () => {
  it('status, result and cancel go under namespace/owner/alias, as the submit answer says', async () => {
    const ctx = adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel: 'workflows/acme/upscale-pipeline/step-two' });
    const outcome = await falAdapter.submit(ctx, videoJob({ prompt: 'x' }));
    if (outcome.outcome !== 'accepted') throw new Error(JSON.stringify(outcome));
    expect(outcome.upstreamId).toMatch(/^workflows\/acme\/upscale-pipeline\|/);
    expect(await falAdapter.poll(ctx, outcome.upstreamId)).toEqual({ state: 'queued', upstreamWord: 'IN_QUEUE' });
    expect(await falAdapter.cancel?.(ctx, outcome.upstreamId)).toEqual({ outcome: 'cancelled' });
    const comfy = adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel: 'comfy/acme/flow' });
    const done = await falAdapter.submit(comfy, videoJob({ prompt: 'x [fake:instant]' }));
    if (done.outcome !== 'accepted') throw new Error(JSON.stringify(done));
    expect((await falAdapter.poll(comfy, done.upstreamId)).state).toBe('succeeded');
    await Promise.all([ctx.close(), comfy.close()]);
  });
});

it('documents every parameter a model accepts', () => {
  const documented = new Set(falAdapter.paramMapping.map((row) => row.param));
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
