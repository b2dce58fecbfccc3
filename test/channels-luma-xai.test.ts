// The luma and xai adapters against their fakes over real HTTP: Luma's URL-only keyframes (a data
// URL with no public base URL is refused naming the parameter, before any request), its credits
// probe; xAI's 202 without a body while pending, a withheld video as content_policy_violation,
// and the duration and cost it reports.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { profileFor } from '../src/channels/profiles.js';
import { lumaAdapter } from '../src/channels/protocols/luma.js';
import { xaiAdapter } from '../src/channels/protocols/xai.js';
import { adapterContext, pollUntilSettled, videoJob, type TestContext } from './fakes/adapter-context.js';
import { startLumaFake, type LumaFake } from './fakes/luma.js';
import { TINY_PNG } from './fakes/upstream-kit.js';
import { startXaiFake, type XaiFake } from './fakes/xai.js';

const DATA_IMAGE = `data:image/png;base64,${TINY_PNG.toString('base64')}`;

describe('luma adapter', () => {
  let fake: LumaFake;
  let ctx: TestContext;
  beforeAll(async () => {
    fake = await startLumaFake({ apiKey: 'lk', queuedMs: 20, runMs: 60 });
    ctx = adapterContext({ baseUrl: fake.origin, apiKey: 'lk', upstreamModel: 'ray-flash-2', profile: profileFor('luma', 'ray-flash-2') });
  });
  afterAll(async () => {
    await ctx.close();
    await fake.close();
  });

  it('sends keyframes by URL and completes', async () => {
    const submitted = await lumaAdapter.submit(
      ctx,
      videoJob({ prompt: 'luma frames', image: 'https://img.example/a.png', end_image: 'https://img.example/b.png', duration: 5 }),
    );
    if (submitted.outcome !== 'accepted') throw new Error(JSON.stringify(submitted));
    expect(fake.book.get(submitted.upstreamId)?.body).toMatchObject({
      keyframes: { frame0: { type: 'image', url: 'https://img.example/a.png' }, frame1: { type: 'image' } },
    });
    expect((await pollUntilSettled(lumaAdapter, ctx, submitted.upstreamId)).last).toMatchObject({ state: 'succeeded' });
  });

  it('a data URL with no public base URL is refused naming the parameter, and nothing is sent', async () => {
    const before = fake.http.stats.requests;
    expect(await lumaAdapter.submit(ctx, videoJob({ prompt: 'luma data', image: DATA_IMAGE, duration: 5 }))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'invalid_parameter', param: 'image' },
    });
    expect(fake.http.stats.requests).toBe(before);
  });

  it('probes with the credit balance; a wrong key fails the probe', async () => {
    expect(await lumaAdapter.probe(ctx)).toMatchObject({ ok: true });
    const bad = adapterContext({ baseUrl: fake.origin, apiKey: 'wrong', upstreamModel: 'ray-2' });
    expect(await lumaAdapter.probe(bad)).toMatchObject({ ok: false, reason: 'HTTP 401' });
    await bad.close();
  });
});

describe('xai adapter', () => {
  let fake: XaiFake;
  let ctx: TestContext;
  beforeAll(async () => {
    fake = await startXaiFake({ apiKey: 'xk', queuedMs: 100, runMs: 100 });
    ctx = adapterContext({ baseUrl: fake.origin, apiKey: 'xk', upstreamModel: 'grok-imagine-video', profile: profileFor('xai', 'grok-imagine-video') });
  });
  afterAll(async () => {
    await ctx.close();
    await fake.close();
  });

  it('reads a 202 without a body as running, then completes with the reported seconds and cost', async () => {
    const submitted = await xaiAdapter.submit(ctx, videoJob({ prompt: 'xai ok', duration: 5 }));
    if (submitted.outcome !== 'accepted') throw new Error(JSON.stringify(submitted));
    expect(await xaiAdapter.poll(ctx, submitted.upstreamId)).toMatchObject({ state: 'running', upstreamWord: 'pending' });
    expect((await pollUntilSettled(xaiAdapter, ctx, submitted.upstreamId)).last).toMatchObject({
      state: 'succeeded',
      reportedUsage: { videos: 1, seconds: 5, cost_in_usd_ticks: 2_500_000_000 },
    });
  });

  it('a withheld video (respect_moderation false) is content_policy_violation', async () => {
    const submitted = await xaiAdapter.submit(ctx, videoJob({ prompt: 'xai [fake:moderation]', duration: 5 }));
    if (submitted.outcome !== 'accepted') throw new Error(JSON.stringify(submitted));
    expect((await pollUntilSettled(xaiAdapter, ctx, submitted.upstreamId)).last).toMatchObject({
      state: 'failed',
      error: { code: 'content_policy_violation' },
    });
  });

  it('probes with the key record', async () => {
    expect(await xaiAdapter.probe(ctx)).toMatchObject({ ok: true });
  });
});
