import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VIDEO_MODELS } from '../src/catalog/video-models.js';
import { minimaxAdapter } from '../src/channels/protocols/minimax.js';
import { adapterContext, copyFirstOutput, videoJob, type TestContext } from './fakes/adapter-context.js';
import { startMinimaxFake, type MinimaxFake } from './fakes/minimax.js';
import { TINY_MP4, isRecord } from './fakes/upstream-kit.js';

const KEY = 'mm-key';
const PNG_DATA_URL = 'data:image/png;base64,iVBORw0KGgo=';
let now = 1_800_000_000_000;
let fake: MinimaxFake;
let h3: TestContext;
let hailuo: TestContext;

beforeAll(async () => {
  fake = await startMinimaxFake({ apiKey: KEY, clock: () => now, queuedMs: 1_000, runMs: 10_000 });
  h3 = adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel: 'MiniMax-H3' });
  hailuo = adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel: 'MiniMax-Hailuo-2.3' });
});
afterAll(async () => {
  await Promise.all([h3.close(), hailuo.close()]);
  await fake.close();
});
beforeEach(() => {
  now += 3_600_000;
});

async function accepted(ctx: TestContext, params: Record<string, unknown>): Promise<string> {
  const outcome = await minimaxAdapter.submit(ctx, videoJob(params));
  if (outcome.outcome !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(outcome)}`);
  return outcome.upstreamId;
}

describe('minimax v2 (H3)', () => {
  it('maps an image-to-video request to content roles and upper-case resolution', async () => {
    const id = await accepted(h3, {
      prompt: 'a cat',
      image: PNG_DATA_URL,
      end_image: 'https://img.example/end.png',
      resolution: '768p',
      duration: 6,
      aspect_ratio: '16:9',
      seed: -1,
    });
    const body = fake.book.get(id)?.body;
    expect(body).toEqual({
      model: 'MiniMax-H3',
      content: [
        { type: 'text', text: 'a cat' },
        { type: 'image_url', image_url: { url: PNG_DATA_URL }, role: 'first_frame' },
        { type: 'image_url', image_url: { url: 'https://img.example/end.png' }, role: 'last_frame' },
      ],
      duration: 6,
      resolution: '768P',
      ratio: '16:9',
    });
  });

  it('walks queued -> running -> succeeded, and the output URL serves the real MP4', async () => {
    const id = await accepted(h3, { prompt: 'a dog', image: PNG_DATA_URL });
    expect(await minimaxAdapter.poll(h3, id)).toEqual({ state: 'queued', upstreamWord: 'queued' });
    now += 2_000;
    expect(await minimaxAdapter.poll(h3, id)).toEqual({ state: 'running', upstreamWord: 'running' });
    now += 10_000;
    const done = await minimaxAdapter.poll(h3, id);
    expect(done.state).toBe('succeeded');
    if (done.state !== 'succeeded') return;
    expect(done.outputs).toHaveLength(1);
    expect(done.outputs[0]?.type).toBe('video');
    const file = await fetch(done.outputs[0]?.url ?? '');
    expect(Buffer.from(await file.arrayBuffer()).equals(TINY_MP4)).toBe(true);
  });

  it('maps a failed task to upstream_error and a late moderation to content_policy_violation', async () => {
    const failed = await accepted(h3, { prompt: 'x [fake:fail]', image: PNG_DATA_URL });
    const moderated = await accepted(h3, { prompt: 'x [fake:moderation]', image: PNG_DATA_URL });
    now += 60_000;
    const a = await minimaxAdapter.poll(h3, failed);
    const b = await minimaxAdapter.poll(h3, moderated);
    expect(a).toMatchObject({ state: 'failed', upstreamWord: 'failed', error: { code: 'upstream_error', param: '' } });
    expect(b).toMatchObject({ state: 'failed', upstreamWord: 'failed', error: { code: 'content_policy_violation' } });
  });

  it("a stuck task stays running however long it takes (timeout_s is the lifecycle's)", async () => {
    const id = await accepted(h3, { prompt: 'x [fake:stuck]', image: PNG_DATA_URL });
    now += 24 * 3_600_000;
    expect(await minimaxAdapter.poll(h3, id)).toEqual({ state: 'running', upstreamWord: 'running' });
  });

  it('cancels a running task through DELETE; the task then reads cancelled; a finished one is not cancellable', async () => {
    const id = await accepted(h3, { prompt: 'x', image: PNG_DATA_URL });
    expect(await minimaxAdapter.cancel?.(h3, id)).toEqual({ outcome: 'cancelled' });
    expect(await minimaxAdapter.poll(h3, id)).toMatchObject({ state: 'failed', upstreamWord: 'cancelled', error: { code: 'upstream_error' } });
    const done = await accepted(h3, { prompt: 'x [fake:instant]', image: PNG_DATA_URL });
    expect((await minimaxAdapter.cancel?.(h3, done))?.outcome).toBe('not_cancellable');
  });

  it('an unknown id and a task the upstream forgot are not_found', async () => {
    expect(await minimaxAdapter.poll(h3, '999')).toEqual({ state: 'not_found', upstreamWord: 'invalid task_id (2013)' });
    const id = await accepted(h3, { prompt: 'x [fake:forget]', image: PNG_DATA_URL });
    expect((await minimaxAdapter.poll(h3, id)).state).toBe('not_found');
  });

  it('submission refusals: 429 with and without Retry-After, 5xx, a bad key, business rate limit and balance in HTTP 200', async () => {
    const before = fake.http.stats.accepted;
    fake.http.inject({ on: 'submit', kind: '429-retry-after', retryAfterS: 7 });
    expect(await minimaxAdapter.submit(h3, videoJob({ prompt: 'x', image: PNG_DATA_URL }))).toMatchObject({ outcome: 'refused', retryAfterMs: 7_000 });
    fake.http.inject({ on: 'submit', kind: '429' });
    const bare = await minimaxAdapter.submit(h3, videoJob({ prompt: 'x', image: PNG_DATA_URL }));
    expect(bare.outcome).toBe('refused');
    expect(bare).not.toHaveProperty('retryAfterMs');
    fake.http.inject({ on: 'submit', kind: '500' });
    expect((await minimaxAdapter.submit(h3, videoJob({ prompt: 'x', image: PNG_DATA_URL }))).outcome).toBe('refused');
    const wrongKey = adapterContext({ baseUrl: fake.origin, apiKey: 'wrong', upstreamModel: 'MiniMax-H3' });
    expect((await minimaxAdapter.submit(wrongKey, videoJob({ prompt: 'x', image: PNG_DATA_URL }))).outcome).toBe('refused');
    await wrongKey.close();
    expect((await minimaxAdapter.submit(h3, videoJob({ prompt: 'x [fake:rate-limit]', image: PNG_DATA_URL }))).outcome).toBe('refused');
    expect((await minimaxAdapter.submit(h3, videoJob({ prompt: 'x [fake:quota]', image: PNG_DATA_URL }))).outcome).toBe('refused');
    expect(fake.http.stats.accepted).toBe(before);
  });

  it('the documented error body: the business code is read from the end of the message (422 "... (1026)" is a moderation refusal)', async () => {
    const answer = await fetch(`${fake.origin}/v2/video_generation`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'MiniMax-H3', content: [{ type: 'text', text: 'x [fake:moderation-early]' }], ratio: '16:9' }),
    });
    expect(answer.status).toBe(422);
    expect(await answer.json()).toMatchObject({
      type: 'error',
      error: { type: 'unprocessable_entity_error', message: expect.stringMatching(/\(1026\)$/), http_code: '422' },
    });
    expect(await minimaxAdapter.submit(h3, videoJob({ prompt: 'x [fake:moderation-early]', image: PNG_DATA_URL }))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'content_policy_violation', message: expect.stringContaining('MiniMax 1026') },
    });
  });

  it('expired is terminal: upstream_timeout, not an unknown word running until timeout_s', async () => {
    const expiring = await startMinimaxFake({ apiKey: KEY, clock: () => now, queuedMs: 1_000, runMs: 10_000, expireAfterMs: 60_000 });
    const ctx = adapterContext({ baseUrl: expiring.origin, apiKey: KEY, upstreamModel: 'MiniMax-H3' });
    const outcome = await minimaxAdapter.submit(ctx, videoJob({ prompt: 'x [fake:stuck]', image: PNG_DATA_URL }));
    if (outcome.outcome !== 'accepted') throw new Error(JSON.stringify(outcome));
    now += 120_000;
    expect(await minimaxAdapter.poll(ctx, outcome.upstreamId)).toMatchObject({ state: 'failed', upstreamWord: 'expired', error: { code: 'upstream_timeout' } });
    expect(ctx.warnings).toEqual([]);
    await ctx.close();
    await expiring.close();
  });

  it('reports the output seconds of a finished task', async () => {
    const id = await accepted(h3, { prompt: 'x [fake:instant]', image: PNG_DATA_URL, duration: 6 });
    expect(await minimaxAdapter.poll(h3, id)).toMatchObject({ state: 'succeeded', reportedUsage: { seconds: 6, videos: 1 } });
  });

  it('rejections: input moderation and an invalid request are final', async () => {
    expect(await minimaxAdapter.submit(h3, videoJob({ prompt: 'x [fake:moderation-early]', image: PNG_DATA_URL }))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'content_policy_violation' },
    });
    // Frames and references together: the upstream refuses it (400).
    expect(await minimaxAdapter.submit(h3, videoJob({ prompt: 'x', image: PNG_DATA_URL, images: [PNG_DATA_URL] }))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'upstream_error' },
    });
  });

  it('an accepted submission whose answer is lost is unknown, and the fake holds exactly one job for it', async () => {
    const before = fake.http.stats.accepted;
    const outcome = await minimaxAdapter.submit(h3, videoJob({ prompt: 'lost one [fake:lose-answer]', image: PNG_DATA_URL }));
    expect(outcome.outcome).toBe('unknown');
    expect(fake.http.stats.accepted).toBe(before + 1);
    expect(fake.acceptedByPrompt.get('lost one [fake:lose-answer]')).toBe(1);
    expect(fake.http.stats.lostAnswers).toBeGreaterThan(0);
    expect(typeof minimaxAdapter.reconcile).toBe('undefined');
  });

  it('poll: 429 is throttled (with Retry-After when given), 5xx and a lost answer are transient', async () => {
    const id = await accepted(h3, { prompt: 'x', image: PNG_DATA_URL });
    fake.http.inject({ on: 'poll', kind: '429-retry-after', retryAfterS: 3 });
    expect(await minimaxAdapter.poll(h3, id)).toEqual({ state: 'throttled', retryAfterMs: 3_000 });
    fake.http.inject({ on: 'poll', kind: '429' });
    expect(await minimaxAdapter.poll(h3, id)).toEqual({ state: 'throttled' });
    fake.http.inject({ on: 'poll', kind: '500' });
    expect((await minimaxAdapter.poll(h3, id)).state).toBe('transient');
    fake.http.inject({ on: 'poll', kind: 'lose' });
    expect((await minimaxAdapter.poll(h3, id)).state).toBe('transient');
  });

  it('an output URL expires: fetched after its lifetime it is refused (the copy must happen first)', async () => {
    const id = await accepted(h3, { prompt: 'x [fake:expire] [fake:instant]', image: PNG_DATA_URL });
    const done = await minimaxAdapter.poll(h3, id);
    if (done.state !== 'succeeded') throw new Error('expected success');
    now += 1;
    expect((await fetch(done.outputs[0]?.url ?? '')).status).toBe(403);
  });

  it('an output that is not what it claims is still handed on (the output copy checks its bytes)', async () => {
    const id = await accepted(h3, { prompt: 'x [fake:not-media] [fake:instant]', image: PNG_DATA_URL });
    const done = await minimaxAdapter.poll(h3, id);
    if (done.state !== 'succeeded') throw new Error('expected success');
    const file = await fetch(done.outputs[0]?.url ?? '');
    expect(file.headers.get('content-type')).toBe('video/mp4');
    expect(
      Buffer.from(await file.arrayBuffer())
        .subarray(4, 8)
        .toString('latin1'),
    ).not.toBe('ftyp');
  });

  it('refuses what MiniMax cannot express before sending anything', async () => {
    const before = fake.http.stats.requests;
    const cases: [Record<string, unknown>, string][] = [
      [{ seed: 42 }, 'seed'],
      [{ negative_prompt: 'blur' }, 'negative_prompt'],
      [{ audio_enable: false }, 'audio_enable'],
      [{ prompt_extend: true }, 'prompt_extend'],
      [{ extra: { image_options: [] } }, 'extra'],
    ];
    for (const [params, param] of cases) {
      expect(await minimaxAdapter.submit(h3, videoJob({ prompt: 'x', image: PNG_DATA_URL, ...params }))).toMatchObject({
        outcome: 'rejected',
        error: { code: 'unsupported_value', param },
      });
    }
    const image = await minimaxAdapter.submit(h3, { taskId: 't', kind: 'image', model: 'm', params: { prompt: 'x' } });
    expect(image).toMatchObject({ outcome: 'rejected', error: { code: 'unsupported_value', param: 'model' } });
    // A data-URL video cannot travel without a public URL of ours.
    const video = await minimaxAdapter.submit(h3, videoJob({ prompt: 'x', videos: ['data:video/mp4;base64,AAAA'] }));
    expect(video).toMatchObject({ outcome: 'rejected', error: { code: 'unsupported_value', param: 'videos[0]' } });
    expect(fake.http.stats.requests).toBe(before);
  });

  it('references: images, videos and audios go as reference roles', async () => {
    const id = await accepted(h3, {
      prompt: 'x',
      images: ['https://a.example/1.png'],
      videos: ['https://a.example/v.mp4'],
      audios: ['https://a.example/a.mp3'],
      aspect_ratio: '1:1',
    });
    const body = fake.book.get(id)?.body;
    expect(isRecord(body) && body['content']).toEqual([
      { type: 'text', text: 'x' },
      { type: 'image_url', image_url: { url: 'https://a.example/1.png' }, role: 'reference_image' },
      { type: 'video_url', video_url: { url: 'https://a.example/v.mp4' }, role: 'reference_video' },
      { type: 'audio_url', audio_url: { url: 'https://a.example/a.mp3' }, role: 'reference_audio' },
    ]);
  });

  it('probe: ok with the key, not ok without', async () => {
    expect((await minimaxAdapter.probe(h3)).ok).toBe(true);
    const wrongKey = adapterContext({ baseUrl: fake.origin, apiKey: 'wrong', upstreamModel: 'MiniMax-H3' });
    expect((await minimaxAdapter.probe(wrongKey)).ok).toBe(false);
    await wrongKey.close();
  });
});

describe('minimax v1 (Hailuo)', () => {
  it('submits the flat body and polls Preparing/Queueing/Processing/Success, then files/retrieve', async () => {
    const id = await accepted(hailuo, { prompt: 'a cat', image: PNG_DATA_URL, resolution: '768p', duration: 6, prompt_extend: false });
    expect(id.startsWith('v1:')).toBe(true);
    expect(fake.book.get(id.slice(3))?.body).toEqual({
      model: 'MiniMax-Hailuo-2.3',
      prompt: 'a cat',
      first_frame_image: PNG_DATA_URL,
      duration: 6,
      resolution: '768P',
      prompt_optimizer: false,
    });
    expect(await minimaxAdapter.poll(hailuo, id)).toEqual({ state: 'queued', upstreamWord: 'Preparing' });
    now += 600;
    expect(await minimaxAdapter.poll(hailuo, id)).toEqual({ state: 'queued', upstreamWord: 'Queueing' });
    now += 1_000;
    expect(await minimaxAdapter.poll(hailuo, id)).toEqual({ state: 'running', upstreamWord: 'Processing' });
    now += 10_000;
    const done = await minimaxAdapter.poll(hailuo, id);
    if (done.state !== 'succeeded') throw new Error(`expected success: ${JSON.stringify(done)}`);
    const file = await fetch(done.outputs[0]?.url ?? '');
    expect(Buffer.from(await file.arrayBuffer()).equals(TINY_MP4)).toBe(true);
  });

  it('Fail with output moderation (1027) is content_policy_violation; a plain Fail is upstream_error', async () => {
    const moderated = await accepted(hailuo, { prompt: 'x [fake:moderation]' });
    const failed = await accepted(hailuo, { prompt: 'x [fake:fail]' });
    now += 60_000;
    expect(await minimaxAdapter.poll(hailuo, moderated)).toMatchObject({ state: 'failed', upstreamWord: 'Fail', error: { code: 'content_policy_violation' } });
    expect(await minimaxAdapter.poll(hailuo, failed)).toMatchObject({ state: 'failed', upstreamWord: 'Fail', error: { code: 'upstream_error' } });
  });

  it('business errors inside HTTP 200: 1002 refused, 1004 (key) refused, 1026 rejected as content policy; unknown id not_found', async () => {
    expect((await minimaxAdapter.submit(hailuo, videoJob({ prompt: 'x [fake:rate-limit]' }))).outcome).toBe('refused');
    const wrongKey = adapterContext({ baseUrl: fake.origin, apiKey: 'wrong', upstreamModel: 'MiniMax-Hailuo-02' });
    expect((await minimaxAdapter.submit(wrongKey, videoJob({ prompt: 'x' }))).outcome).toBe('refused');
    await wrongKey.close();
    expect(await minimaxAdapter.submit(hailuo, videoJob({ prompt: 'x [fake:moderation-early]' }))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'content_policy_violation' },
    });
    expect(await minimaxAdapter.poll(hailuo, 'v1:12345')).toMatchObject({ state: 'not_found' });
  });

  it('refuses what v1 cannot take and has no cancel', async () => {
    expect(await minimaxAdapter.submit(hailuo, videoJob({ prompt: 'x', aspect_ratio: '16:9' }))).toMatchObject({
      outcome: 'rejected',
      error: { param: 'aspect_ratio' },
    });
    expect(await minimaxAdapter.submit(hailuo, videoJob({ prompt: 'x', audio_enable: true }))).toMatchObject({
      outcome: 'rejected',
      error: { param: 'audio_enable' },
    });
    expect((await minimaxAdapter.cancel?.(hailuo, 'v1:1'))?.outcome).toBe('not_cancellable');
  });

  it('output copy: the real MP4 is kept byte for byte; not-media, missing and expired outputs are output_invalid', async () => {
    const ids: string[] = [];
    for (const marker of ['', ' [fake:not-media]', ' [fake:missing-output]', ' [fake:expire]'])
      ids.push(await accepted(h3, { prompt: `x${marker} [fake:instant]`, image: PNG_DATA_URL }));
    const [good, notMedia, missing, expiring] = await Promise.all(ids.map((id) => minimaxAdapter.poll(h3, id)));
    if (!good || !notMedia || !missing || !expiring) throw new Error('missing polls');
    now += 1;
    const kept = await copyFirstOutput(good, fake.origin);
    expect(kept.ok && kept.bytes.equals(TINY_MP4)).toBe(true);
    for (const outcome of [notMedia, missing, expiring])
      expect(await copyFirstOutput(outcome, fake.origin)).toMatchObject({ ok: false, code: 'output_invalid' });
  });
});

it('documents every parameter a video model accepts', () => {
  const documented = new Set(minimaxAdapter.paramMapping.map((row) => row.param));
  const accepted = new Set(['prompt', 'duration', 'resolution', 'seed', ...VIDEO_MODELS.flatMap((row) => [...row.required, ...row.optional])]);
  for (const param of accepted) expect(documented, param).toContain(param);
});
