import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { arkAdapter as adapter } from '../../src/channels/protocols/ark.js';
import type { ChannelJob } from '../../src/channels/protocol.js';
import { profileFor } from '../../src/channels/profiles.js';
import { adapterContext, videoJob, type TestContext } from '../fakes/adapter-context.js';
import { startArkFake, type ArkFake } from '../fakes/ark.js';
import { TINY_MP4 } from '../fakes/upstream-kit.js';

const KEY = 'ark-test-key';
let fake: ArkFake;
let ctx: TestContext;
let now = Date.now();

beforeAll(async () => {
  fake = await startArkFake({ apiKey: KEY, clock: () => now, queuedMs: 1000, runMs: 4000, executionExpiresAfterS: 3600 });
  ctx = adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel: 'doubao-seedance-2-0-260128' });
});
afterAll(async () => {
  await ctx.close();
  await fake.close();
});

function job(prompt: string, extra: Record<string, unknown> = {}): ChannelJob {
  return videoJob(
    { prompt, image: 'https://example.com/a.png', resolution: '720p', aspect_ratio: 'adaptive', seed: -1, audio_enable: true, ...extra },
    'vendorb/famsd-2.0-i2v-spicy',
  );
}

async function accepted(j: ChannelJob): Promise<string> {
  const outcome = await adapter.submit(ctx, j);
  if (outcome.outcome !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(outcome)}`);
  return outcome.upstreamId;
}

describe('ark: what Seedance takes', () => {
  it('a seed above 4294967295 (the catalog allows 4294967296) and 4k are refused before any request; the fake refuses them too', async () => {
    const model = 'dreamina-seedance-2-0-260128';
    const seedance = adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel: model, profile: profileFor('ark', model) });
    const before = fake.http.stats.requests;
    expect(await adapter.submit(seedance, job('s', { seed: 4294967296 }))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'unsupported_value', param: 'seed' },
    });
    expect(await adapter.submit(seedance, job('s', { resolution: '4k' }))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'unsupported_value', param: 'resolution' },
    });
    expect(fake.http.stats.requests).toBe(before);
    // Values the create-task reference does not list are refused by the fake as Ark refuses them.
    const pngAsUpper = [
      { type: 'text', text: 'x' },
      { type: 'image_url', image_url: { url: 'data:image/PNG;base64,AAAA' }, role: 'first_frame' },
    ];
    for (const body of [
      { seed: 4294967296 },
      { resolution: '4k' },
      { resolution: '2k' },
      { ratio: '5:4' },
      { duration: 5.5 },
      { generate_audio: 'yes' },
      { content: pngAsUpper },
    ]) {
      const raw = await fetch(`${fake.origin}/api/v3/contents/generations/tasks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, content: [{ type: 'text', text: 'x' }], ...body }),
      });
      expect(raw.status).toBe(400);
    }
    const ok = await adapter.submit(seedance, job('s [fake:instant]', { seed: 4294967295, resolution: '1080p' }));
    if (ok.outcome !== 'accepted') throw new Error(JSON.stringify(ok));
    expect(await adapter.poll(seedance, ok.upstreamId)).toMatchObject({ state: 'succeeded', reportedUsage: { tokens: 108900, videos: 1 } });
    await seedance.close();
  });

  it('Base64 is documented for images only: a data-URL video is sent as our URL, or refused when there is none', async () => {
    const video = 'data:video/mp4;base64,AAAAIGZ0eXBpc29t';
    const refs = (extra: Record<string, unknown>) =>
      videoJob({ prompt: 'r', videos: [video], resolution: '720p', ...extra }, 'vendorb/famsd-2.0-mini-ref2v-spicy');
    expect(await adapter.submit(ctx, refs({}))).toMatchObject({ outcome: 'rejected', error: { code: 'invalid_parameter', param: 'videos[0]' } });
    const published = adapterContext({
      baseUrl: fake.origin,
      apiKey: KEY,
      upstreamModel: 'doubao-seedance-2-0-260128',
      publish: () => Promise.resolve('https://media.example/in.mp4'),
    });
    const outcome = await adapter.submit(published, refs({}));
    if (outcome.outcome !== 'accepted') throw new Error(JSON.stringify(outcome));
    expect(fake.book.get(outcome.upstreamId)?.body).toMatchObject({
      content: [{ type: 'text' }, { type: 'video_url', video_url: { url: 'https://media.example/in.mp4' } }],
    });
    await published.close();
  });
});

describe('ark adapter over a fake ModelArk', () => {
  it('maps the body (content roles, lower-case resolution, ratio, seed -1, generate_audio) and walks queued -> running -> succeeded', async () => {
    const id = await accepted(job('a dog', { end_image: 'https://example.com/b.png', duration: 6 }));
    expect(id).toMatch(/^cgt-/);
    expect(fake.book.get(id)!.body).toEqual({
      model: 'doubao-seedance-2-0-260128',
      content: [
        { type: 'text', text: 'a dog' },
        { type: 'image_url', image_url: { url: 'https://example.com/a.png' }, role: 'first_frame' },
        { type: 'image_url', image_url: { url: 'https://example.com/b.png' }, role: 'last_frame' },
      ],
      watermark: false,
      resolution: '720p',
      ratio: 'adaptive',
      duration: 6,
      seed: -1,
      generate_audio: true,
    });
    expect(await adapter.poll(ctx, id)).toEqual({ state: 'queued', upstreamWord: 'queued' });
    now += 2000;
    expect(await adapter.poll(ctx, id)).toEqual({ state: 'running', upstreamWord: 'running' });
    now += 5000;
    const done = await adapter.poll(ctx, id);
    if (done.state !== 'succeeded') throw new Error(JSON.stringify(done));
    const bytes = Buffer.from(await (await fetch(done.outputs[0]!.url)).arrayBuffer());
    expect(bytes.equals(TINY_MP4)).toBe(true);
  });

  it('references: images, videos and audios with their roles', async () => {
    const ref = videoJob(
      { prompt: 'r', images: ['https://e.com/1.png'], videos: ['https://e.com/v.mp4'], audios: ['https://e.com/a.mp3'], resolution: '480p' },
      'vendorb/famsd-2.0-mini-ref2v-spicy',
    );
    const id = await accepted(ref);
    expect(fake.book.get(id)!.body).toMatchObject({
      content: [
        { type: 'text' },
        { type: 'image_url', role: 'reference_image' },
        { type: 'video_url', video_url: { url: 'https://e.com/v.mp4' }, role: 'reference_video' },
        { type: 'audio_url', role: 'reference_audio' },
      ],
    });
  });

  it.each([
    ['[fake:fail]', 'upstream_error', /InternalServiceError/],
    ['[fake:moderation]', 'content_policy_violation', /OutputVideoSensitiveContentDetected/],
  ])('a task failing late %s is failed %s', async (marker, code, message) => {
    const id = await accepted(job(`x ${marker}`));
    now += 10_000;
    const done = await adapter.poll(ctx, id);
    if (done.state !== 'failed') throw new Error(JSON.stringify(done));
    expect(done.error.code).toBe(code);
    expect(done.error.message).toMatch(message);
  });

  it('a stuck task runs, then expires past execution_expires_after -> upstream_timeout', async () => {
    const id = await accepted(job('x [fake:stuck]'));
    now += 60_000;
    expect(await adapter.poll(ctx, id)).toMatchObject({ state: 'running' });
    now += 3_600_000;
    expect(await adapter.poll(ctx, id)).toMatchObject({ state: 'failed', upstreamWord: 'expired', error: { code: 'upstream_timeout' } });
  });

  it('an unknown id is 404 -> not_found', async () => {
    expect(await adapter.poll(ctx, 'cgt-nope')).toEqual({ state: 'not_found', upstreamWord: 'HTTP 404' });
  });

  it.each([
    ['[fake:moderation-early]', { outcome: 'rejected', error: { code: 'content_policy_violation' } }],
    ['[fake:invalid]', { outcome: 'rejected', error: { code: 'upstream_error' } }],
    ['[fake:rate-limit]', { outcome: 'refused', reason: 'HTTP 429' }],
    ['[fake:quota]', { outcome: 'refused', reason: 'HTTP 403' }],
  ])('a submission refused %s answers %o and creates nothing', async (marker, expected) => {
    const before = fake.http.stats.accepted;
    const outcome = await adapter.submit(ctx, job(`x ${marker}`));
    expect(outcome).toMatchObject(expected);
    expect(fake.http.stats.accepted).toBe(before);
    if (outcome.outcome === 'rejected') expect(outcome.error.message).toMatch(/upstream request id \w+/);
  });

  it('the upstream refuses mixed frames and references as an invalid parameter (final)', async () => {
    expect(await adapter.submit(ctx, job('m', { images: ['https://e.com/1.png'] }))).toMatchObject({ outcome: 'rejected', error: { code: 'upstream_error' } });
  });

  it('negative_prompt, prompt_extend=true and image tasks are refused before any request', async () => {
    const before = fake.http.stats.byRole.get('submit') ?? 0;
    expect(await adapter.submit(ctx, job('n', { negative_prompt: 'x' }))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'unsupported_value', param: 'negative_prompt' },
    });
    expect(await adapter.submit(ctx, job('n', { prompt_extend: true }))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'unsupported_value', param: 'prompt_extend' },
    });
    expect(await adapter.submit(ctx, { taskId: 't', kind: 'image', model: 'm', params: { prompt: 'p' } })).toMatchObject({
      outcome: 'rejected',
      error: { code: 'unsupported_value', param: 'model' },
    });
    expect(fake.http.stats.byRole.get('submit') ?? 0).toBe(before);
  });

  it('429 with and without Retry-After, 500, lost answers', async () => {
    fake.http.inject({ on: 'submit', kind: '429-retry-after', retryAfterS: 5 });
    expect(await adapter.submit(ctx, job('q'))).toEqual({ outcome: 'refused', reason: 'HTTP 429', retryAfterMs: 5000 });
    fake.http.inject({ on: 'submit', kind: '500' });
    expect(await adapter.submit(ctx, job('q'))).toMatchObject({ outcome: 'refused', reason: 'HTTP 500' });
    const id = await accepted(job('q'));
    fake.http.inject({ on: 'poll', kind: '429' });
    expect(await adapter.poll(ctx, id)).toEqual({ state: 'throttled' });
    fake.http.inject({ on: 'poll', kind: 'lose' });
    expect(await adapter.poll(ctx, id)).toMatchObject({ state: 'transient' });
    const lost = await adapter.submit(ctx, job('lost [fake:lose-answer]'));
    expect(lost.outcome).toBe('unknown');
    expect(fake.acceptedByPrompt.get('lost [fake:lose-answer]')).toBe(1);
  });

  it('the queue cap of the account gives 429 (fail over)', async () => {
    const capped = await startArkFake({ apiKey: KEY, queueCap: 1, queuedMs: 60_000 });
    const c = adapterContext({ baseUrl: capped.origin, apiKey: KEY, upstreamModel: 'm' });
    try {
      expect((await adapter.submit(c, job('1'))).outcome).toBe('accepted');
      expect(await adapter.submit(c, job('2'))).toMatchObject({ outcome: 'refused', reason: 'HTTP 429' });
    } finally {
      await c.close();
      await capped.close();
    }
  });

  it('cancel: queued -> cancelled; running -> not cancellable', async () => {
    const id = await accepted(job('c'));
    expect(await adapter.cancel!(ctx, id)).toEqual({ outcome: 'cancelled' });
    expect(await adapter.poll(ctx, id)).toMatchObject({ state: 'failed', upstreamWord: 'cancelled' });
    const running = await accepted(job('c2'));
    now += 2000;
    expect(await adapter.cancel!(ctx, running)).toMatchObject({ outcome: 'not_cancellable' });
  });

  it('probe: ok with the key, not ok without', async () => {
    expect(await adapter.probe(ctx)).toMatchObject({ ok: true });
    const bad = adapterContext({ baseUrl: fake.origin, apiKey: 'wrong', upstreamModel: 'm' });
    try {
      expect(await adapter.probe(bad)).toEqual({ ok: false, reason: 'HTTP 401 AuthenticationError' });
      expect(await adapter.submit(bad, job('k'))).toMatchObject({ outcome: 'refused', reason: 'HTTP 401' });
    } finally {
      await bad.close();
    }
  });
});
