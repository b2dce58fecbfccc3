import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VIDEO_MODELS } from '../src/catalog/video-models.js';
import { profileFor } from '../src/channels/profiles.js';
import { geminiAdapter } from '../src/channels/protocols/gemini.js';
import { adapterContext, copyFirstOutput, videoJob, type TestContext } from './fakes/adapter-context.js';
import { startGeminiFake, type GeminiFake } from './fakes/gemini.js';
import { TINY_MP4, TINY_PNG } from './fakes/upstream-kit.js';
import { RAI_OUTPUT_REASON, RAI_PROMPT_REFUSAL } from './fakes/veo-kit.js';

const KEY = 'AIza-test-key';
const MODEL = 'veo-3.1-generate-preview';
const PNG = `data:image/png;base64,${TINY_PNG.toString('base64')}`;
let now = 1_800_000_000_000;
let fake: GeminiFake;
let ctx: TestContext;

beforeAll(async () => {
  fake = await startGeminiFake({ apiKey: KEY, clock: () => now, queuedMs: 1_000, runMs: 10_000 });
  ctx = adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel: MODEL, profile: profileFor('gemini', MODEL) });
});
afterAll(async () => {
  await ctx.close();
  await fake.close();
});
beforeEach(() => {
  now += 3_600_000;
});

async function accepted(params: Record<string, unknown>, on: TestContext = ctx): Promise<string> {
  const outcome = await geminiAdapter.submit(on, videoJob({ duration: 8, ...params }));
  if (outcome.outcome !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(outcome)}`);
  return outcome.upstreamId;
}
const opId = (name: string): string => name.split('/').pop() ?? '';

describe('gemini (Veo through the Gemini API)', () => {
  it('submits predictLongRunning with inline frames and Veo parameters; the operation name is the upstream id', async () => {
    const name = await accepted({ prompt: 'a cat', image: PNG, end_image: PNG, resolution: '1080p', aspect_ratio: '9:16', negative_prompt: 'blur', seed: -1 });
    expect(name).toMatch(/^models\/veo-3\.1-generate-preview\/operations\/[0-9a-f]{16}$/);
    const inline = { bytesBase64Encoded: TINY_PNG.toString('base64'), mimeType: 'image/png' };
    expect(fake.bodyOf(opId(name))).toEqual({
      instances: [{ prompt: 'a cat', image: inline, lastFrame: inline }],
      parameters: { sampleCount: 1, durationSeconds: 8, resolution: '1080p', aspectRatio: '9:16', negativePrompt: 'blur' },
    });
  });

  it('reference images travel as assets; adaptive aspect ratio is not sent', async () => {
    const name = await accepted({ prompt: 'x', images: [PNG, PNG], aspect_ratio: 'adaptive' });
    const body = fake.bodyOf(opId(name)) as { instances: { referenceImages: unknown[] }[]; parameters: Record<string, unknown> };
    expect(body.instances[0]?.referenceImages).toHaveLength(2);
    expect(body.instances[0]?.referenceImages[0]).toMatchObject({ referenceType: 'asset', image: { mimeType: 'image/png' } });
    expect(body.parameters).not.toHaveProperty('aspectRatio');
  });

  it('not done -> running; done -> the sample, copied with the key to the channel origin only (real MP4 bytes)', async () => {
    const name = await accepted({ prompt: 'x' });
    expect(await geminiAdapter.poll(ctx, name)).toEqual({ state: 'running', upstreamWord: 'not done' });
    now += 20_000;
    const done = await geminiAdapter.poll(ctx, name);
    expect(done).toMatchObject({ state: 'succeeded', reportedUsage: { videos: 1 } });
    if (done.state !== 'succeeded') throw new Error('not done');
    expect(done.outputs[0]?.url).toBe(`${fake.origin}/v1beta/files/${opId(name)}:download?alt=media`);
    // Without the key header the file is refused: the URI alone is worth nothing to a client.
    expect((await fetch(done.outputs[0]?.url ?? '')).status).toBe(403);
    // The lifecycle's copy sends the output's headers to the channel origin only.
    expect(done.outputs[0]?.headers).toEqual({ 'x-goog-api-key': KEY });
    const copied = await copyFirstOutput(done, fake.origin);
    expect(copied.ok && copied.bytes.equals(TINY_MP4)).toBe(true);
  });

  it('done with an error -> upstream_error; filtered samples -> content_policy_violation with the reason', async () => {
    const failed = await accepted({ prompt: 'x [fake:fail]' });
    const filtered = await accepted({ prompt: 'x [fake:moderation]' });
    now += 20_000;
    expect(await geminiAdapter.poll(ctx, failed)).toMatchObject({ state: 'failed', error: { code: 'upstream_error' } });
    const moderated = await geminiAdapter.poll(ctx, filtered);
    expect(moderated).toMatchObject({ state: 'failed', upstreamWord: 'done: filtered', error: { code: 'content_policy_violation' } });
    expect(moderated.state === 'failed' && moderated.error.message).toContain('support code 29310472');
    expect(RAI_OUTPUT_REASON).toContain('29310472');
  });

  it('a prompt refused by Responsible AI at submit is a final content_policy_violation; an invalid value is upstream_error', async () => {
    const before = fake.http.stats.accepted;
    const refused = await geminiAdapter.submit(ctx, videoJob({ prompt: 'x [fake:moderation-early]', duration: 8 }));
    expect(refused).toMatchObject({ outcome: 'rejected', error: { code: 'content_policy_violation' } });
    expect(refused.outcome === 'rejected' && refused.error.message).toContain(RAI_PROMPT_REFUSAL.slice(0, 40));
    expect(await geminiAdapter.submit(ctx, videoJob({ prompt: 'x [fake:invalid]', duration: 8 }))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'upstream_error' },
    });
    expect(fake.http.stats.accepted).toBe(before);
  });

  it('429: RetryInfo or Retry-After is honoured on submit (refused, fail over) and on poll (throttled)', async () => {
    expect(await geminiAdapter.submit(ctx, videoJob({ prompt: 'x [fake:rate-limit]', duration: 8 }))).toMatchObject({
      outcome: 'refused',
      retryAfterMs: 7_000,
    });
    fake.http.inject({ on: 'submit', kind: '429-retry-after', retryAfterS: 30 });
    expect(await geminiAdapter.submit(ctx, videoJob({ prompt: 'x', duration: 8 }))).toMatchObject({ outcome: 'refused', retryAfterMs: 30_000 });
    const name = await accepted({ prompt: 'x' });
    fake.http.inject({ on: 'poll', kind: '429' });
    expect(await geminiAdapter.poll(ctx, name)).toEqual({ state: 'throttled' });
    fake.http.inject({ on: 'poll', kind: '500' });
    expect((await geminiAdapter.poll(ctx, name)).state).toBe('transient');
  });

  it("a wrong key (the API's 400 API_KEY_INVALID) is refused, not rejected; the probe says so", async () => {
    const wrong = adapterContext({ baseUrl: fake.origin, apiKey: 'nope', upstreamModel: MODEL, profile: ctx.profile });
    expect(await geminiAdapter.submit(wrong, videoJob({ prompt: 'x', duration: 8 }))).toMatchObject({ outcome: 'refused', reason: 'HTTP 400 API_KEY_INVALID' });
    expect((await geminiAdapter.probe(wrong)).ok).toBe(false);
    await wrong.close();
    expect(await geminiAdapter.probe(ctx)).toEqual({ ok: true, detail: `model models/${MODEL}` });
    const unrouted = adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel: '' });
    expect(await geminiAdapter.probe(unrouted)).toEqual({ ok: true, detail: 'model list' });
    await unrouted.close();
  });

  it('a lost submit answer is unknown with exactly one operation upstream; there is no reconcile and no cancel', async () => {
    const before = fake.http.stats.accepted;
    expect((await geminiAdapter.submit(ctx, videoJob({ prompt: 'x [fake:lose-answer]', duration: 8 }))).outcome).toBe('unknown');
    expect(fake.http.stats.accepted).toBe(before + 1);
    expect('reconcile' in geminiAdapter).toBe(false);
    expect('cancel' in geminiAdapter).toBe(false);
    expect((await geminiAdapter.poll(ctx, `models/${MODEL}/operations/ffffffffffffffff`)).state).toBe('not_found');
    expect((await geminiAdapter.poll(ctx, 'garbage')).state).toBe('not_found');
  });

  it('the target profile refuses what Veo 3.1 cannot render before any request, naming the parameter', async () => {
    const before = fake.http.stats.requests;
    const refusals: [Record<string, unknown>, string][] = [
      [{ duration: 5 }, 'duration'],
      [{ duration: 6, resolution: '1080p' }, 'resolution'],
      [{ duration: 8, aspect_ratio: '1:1' }, 'aspect_ratio'],
      [{ duration: 8, seed: 42 }, 'seed'],
      [{ duration: 8, audio_enable: false }, 'audio_enable'],
      [{ duration: 6, images: [PNG] }, 'images'],
      [{ duration: 8, images: [PNG, PNG, PNG, PNG] }, 'images'],
      [{ duration: 8, end_image: PNG }, 'end_image'],
      [{ duration: 8, videos: ['https://v.example/a.mp4'] }, 'videos'],
    ];
    for (const [params, param] of refusals) {
      const problem = geminiAdapter.check({ channel: 'c', upstreamModel: MODEL, profile: ctx.profile }, 'video', { model: 'm', prompt: 'x', ...params });
      expect(problem?.param, JSON.stringify(params)).toBe(param);
      expect(await geminiAdapter.submit(ctx, videoJob({ prompt: 'x', ...params }))).toMatchObject({
        outcome: 'rejected',
        error: { code: 'unsupported_value', param },
      });
    }
    // Fast has no reference images; every Veo 3.1 model has a built-in profile on both protocols.
    const fast = profileFor('gemini', 'veo-3.1-fast-generate-preview');
    expect(
      geminiAdapter.check({ channel: 'c', upstreamModel: 'veo-3.1-fast-generate-preview', profile: fast }, 'video', { prompt: 'x', duration: 8, images: [PNG] })
        ?.param,
    ).toBe('images');
    for (const model of ['veo-3.1-generate-preview', 'veo-3.1-fast-generate-preview', 'veo-3.1-generate-001'])
      for (const protocol of ['gemini', 'vertex'] as const) expect(profileFor(protocol, model), `${protocol} ${model}`).toBeDefined();
    expect(geminiAdapter.check({ channel: 'c', upstreamModel: MODEL }, 'image', { prompt: 'x' })?.param).toBe('model');
    expect(fake.http.stats.requests).toBe(before);
  });

  it('a not-media sample and a done operation without samples are output_invalid', async () => {
    const notMedia = await accepted({ prompt: 'x [fake:not-media] [fake:instant]' });
    const missing = await accepted({ prompt: 'x [fake:missing-output] [fake:instant]' });
    expect(await geminiAdapter.poll(ctx, missing)).toMatchObject({ state: 'failed', error: { code: 'output_invalid' } });
    const done = await geminiAdapter.poll(ctx, notMedia);
    if (done.state !== 'succeeded') throw new Error(JSON.stringify(done));
    expect(await copyFirstOutput(done, fake.origin)).toMatchObject({ ok: false, code: 'output_invalid', message: expect.stringContaining('not an MP4') });
  });
});

it('documents every parameter a model accepts', () => {
  const documented = new Set(geminiAdapter.paramMapping.map((row) => row.param));
  const accepted = new Set(['prompt', 'duration', 'resolution', 'seed', ...VIDEO_MODELS.flatMap((row) => [...row.required, ...row.optional])]);
  for (const param of accepted) expect(documented, param).toContain(param);
});
