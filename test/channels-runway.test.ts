// The runway adapter against the fake Runway API over real HTTP: the version header, text to
// video on gen4.5, progress, SAFETY failure codes, cancel by DELETE, and the probe.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { profileFor } from '../src/channels/profiles.js';
import { runwayRatio } from '../src/channels/profiles-runway.js';
import { runwayAdapter } from '../src/channels/protocols/runway.js';
import { adapterContext, pollUntilSettled, videoJob, type TestContext } from './fakes/adapter-context.js';
import { startRunwayFake, type RunwayFake } from './fakes/runway.js';

const KEY = 'rw-unit';

describe('runway adapter', () => {
  let fake: RunwayFake;
  let ctx: TestContext;

  beforeAll(async () => {
    fake = await startRunwayFake({ apiKey: KEY, queuedMs: 20, runMs: 200 });
    ctx = adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel: 'gen4.5', profile: profileFor('runway', 'gen4.5') });
  });
  afterAll(async () => {
    await ctx.close();
    await fake.close();
  });

  it('maps aspect ratio and resolution to the pixel ratio the model takes', () => {
    expect(runwayRatio('gen4.5', '9:16', '720p')).toBe('720:1280');
    expect(runwayRatio('gen4_turbo', '21:9', '720p')).toBe('1584:672');
    expect(runwayRatio('veo3.1', '16:9', '1080p')).toBe('1920:1080');
    expect(runwayRatio('veo3.1', 'adaptive', undefined)).toBe('1280:720');
  });

  it('gen4.5 text to video completes, with progress read as a fraction', async () => {
    const submitted = await runwayAdapter.submit(ctx, videoJob({ prompt: 'unit ok', duration: 3, aspect_ratio: '9:16', seed: 42 }));
    expect(submitted).toMatchObject({ outcome: 'accepted' });
    if (submitted.outcome !== 'accepted') return;
    const { last, seen } = await pollUntilSettled(runwayAdapter, ctx, submitted.upstreamId);
    expect(last).toMatchObject({ state: 'succeeded', reportedUsage: { videos: 1 } });
    for (const outcome of seen) if (outcome.state === 'running' && outcome.progress !== undefined) expect(outcome.progress).toBeLessThan(100);
  });

  it('gen4.5 refuses a text-to-video ratio it cannot make, before any request', () => {
    expect(
      runwayAdapter.check({ channel: 'rw', upstreamModel: 'gen4.5', profile: profileFor('runway', 'gen4.5') }, 'video', { prompt: 'x', aspect_ratio: '1:1' }),
    ).toMatchObject({
      param: 'aspect_ratio',
    });
  });

  it('a SAFETY.* failure code is content_policy_violation; the 400 of a refused body is invalid_parameter', async () => {
    const moderated = await runwayAdapter.submit(ctx, videoJob({ prompt: 'unit [fake:moderation]', duration: 3 }));
    if (moderated.outcome !== 'accepted') throw new Error('not accepted');
    expect((await pollUntilSettled(runwayAdapter, ctx, moderated.upstreamId)).last).toMatchObject({
      state: 'failed',
      error: { code: 'content_policy_violation' },
    });
    expect(await runwayAdapter.submit(ctx, videoJob({ prompt: 'unit [fake:invalid]', duration: 3 }))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'invalid_parameter' },
    });
  });

  it('cancels with DELETE /v1/tasks/{id}; a task already gone is not cancellable', async () => {
    const submitted = await runwayAdapter.submit(ctx, videoJob({ prompt: 'unit cancel [fake:stuck]', duration: 3 }));
    if (submitted.outcome !== 'accepted') throw new Error('not accepted');
    expect(await runwayAdapter.cancel?.(ctx, submitted.upstreamId)).toEqual({ outcome: 'cancelled' });
    expect(fake.deleted.has(submitted.upstreamId)).toBe(true);
    expect(await runwayAdapter.cancel?.(ctx, submitted.upstreamId)).toMatchObject({ outcome: 'not_cancellable' });
  });

  it('a wrong key is refused (fail over), and the probe reads the organization', async () => {
    const bad = adapterContext({ baseUrl: fake.origin, apiKey: 'wrong', upstreamModel: 'gen4.5', profile: profileFor('runway', 'gen4.5') });
    expect(await runwayAdapter.submit(bad, videoJob({ prompt: 'bad key', duration: 3 }))).toMatchObject({ outcome: 'refused' });
    expect(await runwayAdapter.probe(bad)).toMatchObject({ ok: false });
    await bad.close();
    expect(await runwayAdapter.probe(ctx)).toMatchObject({ ok: true });
  });
});
