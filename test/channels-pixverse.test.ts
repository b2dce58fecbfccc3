import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VIDEO_MODELS } from '../src/catalog/video-models.js';
import { pixverseAdapter, spaceAfterRefs } from '../src/channels/protocols/pixverse.js';
import { adapterContext, copyFirstOutput, videoJob, type TestContext } from './fakes/adapter-context.js';
import { startPixverseFake, type PixverseFake } from './fakes/pixverse.js';
import { TINY_MP4, TINY_PNG, isRecord } from './fakes/upstream-kit.js';

const KEY = 'pv-key';
const PNG = `data:image/png;base64,${TINY_PNG.toString('base64')}`;
const NOT_AN_IMAGE = `data:image/png;base64,${Buffer.from('GIF89a? no').toString('base64')}`;
let now = 1_800_000_000_000;
let fake: PixverseFake;
let ctx: TestContext;

beforeAll(async () => {
  fake = await startPixverseFake({ apiKey: KEY, clock: () => now, queuedMs: 1_000, runMs: 10_000 });
  ctx = adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel: 'v6' });
});
afterAll(async () => {
  await ctx.close();
  await fake.close();
});
beforeEach(() => {
  now += 3_600_000;
});

const base = { resolution: '720p', audio_enable: true, duration: 5 };

async function accepted(params: Record<string, unknown>): Promise<string> {
  const outcome = await pixverseAdapter.submit(ctx, videoJob({ ...base, ...params }));
  if (outcome.outcome !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(outcome)}`);
  return outcome.upstreamId;
}

describe('pixverse', () => {
  it('image-to-video: uploads the image bytes first, then generates on /video/img with the img_id', async () => {
    const id = await accepted({ prompt: 'a cat', image: PNG, seed: 7 });
    expect(fake.endpointOf(id)).toBe('img');
    const body = fake.book.get(id)?.body;
    if (!isRecord(body)) throw new Error('no body');
    expect(body).toMatchObject({ model: 'v6', prompt: 'a cat', duration: 5, quality: '720p', seed: 7, generate_audio_switch: true });
    const upload = fake.uploads.get(body['img_id'] as number);
    expect(upload?.bytes?.equals(TINY_PNG)).toBe(true);
  });

  it('an https image is fetched by us and uploaded as the multipart file `image` (the only documented field); the fake refuses image_url', async () => {
    const fetched: string[] = [];
    const withFetch: TestContext = {
      ...ctx,
      media: {
        ...ctx.media,
        bytes: (value: string) =>
          value.startsWith('https://') ? (fetched.push(value), Promise.resolve({ bytes: TINY_PNG, mime: 'image/png' })) : ctx.media.bytes(value),
      },
    };
    const outcome = await pixverseAdapter.submit(withFetch, videoJob({ ...base, prompt: 'a cat', image: 'https://img.example/cat.png' }));
    if (outcome.outcome !== 'accepted') throw new Error(JSON.stringify(outcome));
    const body = fake.book.get(outcome.upstreamId)?.body;
    expect(fetched).toEqual(['https://img.example/cat.png']);
    expect(isRecord(body) && fake.uploads.get(body['img_id'] as number)?.bytes?.equals(TINY_PNG)).toBe(true);
    const form = new FormData();
    form.set('image_url', 'https://img.example/cat.png');
    const answer = await fetch(`${fake.origin}/openapi/v2/image/upload`, {
      method: 'POST',
      headers: { 'API-KEY': KEY, 'Ai-trace-id': crypto.randomUUID() },
      body: form,
    });
    expect(await answer.json()).toMatchObject({ ErrCode: 400011 });
  });

  it('text-to-video always sends aspect_ratio (required): the asked one, else 16:9 for a model without the parameter', async () => {
    const id = await accepted({ prompt: 'a cat' });
    expect(fake.endpointOf(id)).toBe('text');
    expect(fake.book.get(id)?.body).toMatchObject({ aspect_ratio: '16:9' });
    const square = await accepted({ prompt: 'a cat', aspect_ratio: '1:1' });
    expect(fake.book.get(square)?.body).toMatchObject({ aspect_ratio: '1:1' });
  });

  it('reference-to-video: uploads each image, fusion with type/ref_name, and a space after each @tag', async () => {
    const id = await accepted({
      prompt: '@image1 walks into @room.',
      images: [PNG, PNG],
      aspect_ratio: '16:9',
      extra: { image_options: [{ type: 'subject' }, { type: 'background', ref_name: 'room' }] },
    });
    expect(fake.endpointOf(id)).toBe('fusion');
    const body = fake.book.get(id)?.body;
    if (!isRecord(body)) throw new Error('no body');
    expect(body['prompt']).toBe('@image1 walks into @room .');
    expect(body['aspect_ratio']).toBe('16:9');
    const refs = body['image_references'] as Record<string, unknown>[];
    expect(refs.map((r) => [r['type'], r['ref_name']])).toEqual([
      ['subject', 'image1'],
      ['background', 'room'],
    ]);
    expect(refs.every((r) => fake.uploads.has(r['img_id'] as number))).toBe(true);
  });

  it('first and last frame go to /video/transition', async () => {
    const id = await accepted({ prompt: 'morph', image: PNG, end_image: PNG });
    expect(fake.endpointOf(id)).toBe('transition');
  });

  it('sends a fresh Ai-trace-id on every request: uploads, generations and polls', async () => {
    const before = fake.traceIds.length;
    const a = await accepted({ prompt: 'one', image: PNG });
    const b = await accepted({ prompt: 'two @image1 @image2 @image3', images: [PNG, PNG, PNG] });
    await pixverseAdapter.poll(ctx, a);
    await pixverseAdapter.poll(ctx, b);
    const sent = fake.traceIds.slice(before);
    expect(sent).toHaveLength(2 + 4 + 2);
    expect(new Set(sent).size).toBe(sent.length);
    for (const trace of sent) expect(trace).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('maps status 5 -> running, 1 -> succeeded (real MP4 bytes), 8 -> upstream_error, 7 -> content_policy_violation, 6 -> upstream_error', async () => {
    const ok = await accepted({ prompt: 'fine' });
    expect(await pixverseAdapter.poll(ctx, ok)).toEqual({ state: 'running', upstreamWord: '5' });
    const failed = await accepted({ prompt: 'x [fake:fail]' });
    const moderated = await accepted({ prompt: 'x [fake:moderation]' });
    const deleted = await accepted({ prompt: 'x' });
    fake.deleteVideo(deleted);
    now += 60_000;
    const done = await pixverseAdapter.poll(ctx, ok);
    if (done.state !== 'succeeded') throw new Error(`expected success: ${JSON.stringify(done)}`);
    expect(done.upstreamWord).toBe('1');
    expect(Buffer.from(await (await fetch(done.outputs[0]?.url ?? '')).arrayBuffer()).equals(TINY_MP4)).toBe(true);
    expect(await pixverseAdapter.poll(ctx, failed)).toMatchObject({ state: 'failed', upstreamWord: '8', error: { code: 'upstream_error' } });
    expect(await pixverseAdapter.poll(ctx, moderated)).toMatchObject({ state: 'failed', upstreamWord: '7', error: { code: 'content_policy_violation' } });
    expect(await pixverseAdapter.poll(ctx, deleted)).toMatchObject({ state: 'failed', upstreamWord: '6', error: { code: 'upstream_error' } });
  });

  it('business errors inside HTTP 200: bad key, concurrency limit and balance are refusals; input moderation and invalid parameters are final', async () => {
    const wrong = adapterContext({ baseUrl: fake.origin, apiKey: 'nope', upstreamModel: 'v6' });
    expect((await pixverseAdapter.submit(wrong, videoJob({ ...base, prompt: 'x' }))).outcome).toBe('refused');
    expect((await pixverseAdapter.probe(wrong)).ok).toBe(false);
    await wrong.close();
    expect((await pixverseAdapter.probe(ctx)).ok).toBe(true);
    expect((await pixverseAdapter.submit(ctx, videoJob({ ...base, prompt: 'x [fake:rate-limit]' }))).outcome).toBe('refused');
    expect((await pixverseAdapter.submit(ctx, videoJob({ ...base, prompt: 'x [fake:quota]' }))).outcome).toBe('refused');
    expect(await pixverseAdapter.submit(ctx, videoJob({ ...base, prompt: 'x [fake:moderation-early]' }))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'content_policy_violation' },
    });
    expect(await pixverseAdapter.submit(ctx, videoJob({ ...base, prompt: 'x [fake:invalid]' }))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'upstream_error' },
    });
  });

  it('an image the upload refuses is rejected on that parameter, before any generation', async () => {
    const before = fake.http.stats.accepted;
    expect(await pixverseAdapter.submit(ctx, videoJob({ ...base, prompt: 'x', image: NOT_AN_IMAGE }))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'invalid_parameter', param: 'image' },
    });
    expect(fake.http.stats.accepted).toBe(before);
  });

  it('a lost upload is a refusal (nothing paid); a lost generation is unknown with exactly one job upstream', async () => {
    fake.http.inject({ on: 'upload', kind: 'lose' });
    expect((await pixverseAdapter.submit(ctx, videoJob({ ...base, prompt: 'x', image: PNG }))).outcome).toBe('refused');
    const before = fake.http.stats.accepted;
    expect((await pixverseAdapter.submit(ctx, videoJob({ ...base, prompt: 'x [fake:lose-answer]', image: PNG }))).outcome).toBe('unknown');
    expect(fake.http.stats.accepted).toBe(before + 1);
    expect(typeof pixverseAdapter.reconcile).toBe('undefined');
    expect(typeof pixverseAdapter.cancel).toBe('undefined');
  });

  it('429 with and without Retry-After: refused on submit (no job created), throttled on poll; unknown ids are not_found', async () => {
    const before = fake.http.stats.accepted;
    fake.http.inject({ on: 'submit', kind: '429-retry-after', retryAfterS: 4 });
    expect(await pixverseAdapter.submit(ctx, videoJob({ ...base, prompt: 'x' }))).toMatchObject({ outcome: 'refused', retryAfterMs: 4_000 });
    fake.http.inject({ on: 'submit', kind: '429' });
    expect((await pixverseAdapter.submit(ctx, videoJob({ ...base, prompt: 'x' }))).outcome).toBe('refused');
    expect(fake.http.stats.accepted).toBe(before);
    const id = await accepted({ prompt: 'x' });
    fake.http.inject({ on: 'poll', kind: '429' });
    expect(await pixverseAdapter.poll(ctx, id)).toEqual({ state: 'throttled' });
    fake.http.inject({ on: 'poll', kind: '500' });
    expect((await pixverseAdapter.poll(ctx, id)).state).toBe('transient');
    expect(await pixverseAdapter.poll(ctx, '123')).toEqual({ state: 'not_found', upstreamWord: 'ErrCode 500030' });
    const forgotten = await accepted({ prompt: 'x [fake:forget]' });
    expect((await pixverseAdapter.poll(ctx, forgotten)).state).toBe('not_found');
  });

  it('a stuck task stays running', async () => {
    const stuck = await accepted({ prompt: 'x [fake:stuck]' });
    now += 86_400_000;
    expect((await pixverseAdapter.poll(ctx, stuck)).state).toBe('running');
  });

  it('refuses what PixVerse cannot express, before any request', async () => {
    const before = fake.http.stats.requests;
    const cases: [Record<string, unknown>, string][] = [
      [{ videos: ['https://v.example/a.mp4'] }, 'videos'],
      [{ audios: ['https://v.example/a.mp3'] }, 'audios'],
      [{ prompt_extend: true }, 'prompt_extend'],
      [{ end_image: PNG }, 'end_image'],
      [{ image: PNG, aspect_ratio: '16:9' }, 'aspect_ratio'],
      [{ image: PNG, images: [PNG] }, 'image'],
      [{ images: [PNG], negative_prompt: 'blur' }, 'negative_prompt'],
    ];
    for (const [params, param] of cases) {
      expect(await pixverseAdapter.submit(ctx, videoJob({ ...base, prompt: 'x', ...params }))).toMatchObject({
        outcome: 'rejected',
        error: { code: 'unsupported_value', param },
      });
    }
    expect(fake.http.stats.requests).toBe(before);
  });

  it('spaceAfterRefs leaves good tags alone and does not touch longer names', () => {
    expect(spaceAfterRefs('@hero, @hero2 and @hero', ['hero'])).toBe('@hero , @hero2 and @hero ');
    expect(spaceAfterRefs('@a b', ['a'])).toBe('@a b');
  });

  it('output copy: the real MP4 is kept byte for byte; not-media, missing and expired outputs are output_invalid', async () => {
    const ids: string[] = [];
    for (const marker of ['', ' [fake:not-media]', ' [fake:missing-output]', ' [fake:expire]'])
      ids.push(await accepted({ prompt: `x${marker} [fake:instant]` }));
    const [good, notMedia, missing, expiring] = await Promise.all(ids.map((id) => pixverseAdapter.poll(ctx, id)));
    if (!good || !notMedia || !missing || !expiring) throw new Error('missing polls');
    now += 1;
    const kept = await copyFirstOutput(good, fake.origin);
    expect(kept.ok && kept.bytes.equals(TINY_MP4)).toBe(true);
    for (const outcome of [notMedia, missing, expiring])
      expect(await copyFirstOutput(outcome, fake.origin)).toMatchObject({ ok: false, code: 'output_invalid' });
  });
});

it('documents every parameter a video model accepts', () => {
  const documented = new Set(pixverseAdapter.paramMapping.map((row) => row.param));
  const accepted = new Set(['prompt', 'duration', 'resolution', 'seed', ...VIDEO_MODELS.flatMap((row) => [...row.required, ...row.optional])]);
  for (const param of accepted) expect(documented, param).toContain(param);
});
