import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashscopeAdapter as adapter } from '../../src/channels/protocols/dashscope.js';
import type { ChannelJob } from '../../src/channels/protocol.js';
import { profileFor } from '../../src/channels/profiles.js';
import { adapterContext, videoJob, type TestContext } from '../fakes/adapter-context.js';
import { startDashscopeFake, type DashscopeFake } from '../fakes/dashscope.js';
import { TINY_MP4 } from '../fakes/upstream-kit.js';

const KEY = 'sk-dashscope-test';
let fake: DashscopeFake;
let ctx: TestContext;
let now = Date.now();

beforeAll(async () => {
  fake = await startDashscopeFake({ apiKey: KEY, clock: () => now, queuedMs: 1000, runMs: 4000 });
  ctx = adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel: 'wan2.7-i2v' });
});
afterAll(async () => {
  await ctx.close();
  await fake.close();
});

const IMAGE = 'https://example.com/first.png';

function job(prompt: string, extra: Record<string, unknown> = {}): ChannelJob {
  return videoJob({ prompt, image: IMAGE, resolution: '720p', seed: -1, ...extra }, 'vendora/famw-2.7-i2v');
}

async function accepted(j: ChannelJob): Promise<string> {
  const outcome = await adapter.submit(ctx, j);
  if (outcome.outcome !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(outcome)}`);
  return outcome.upstreamId;
}

describe('dashscope adapter over a fake DashScope', () => {
  it('maps the body (media[], upper-case resolution, no seed for -1) and walks PENDING -> RUNNING -> SUCCEEDED', async () => {
    const id = await accepted(job('a cat', { end_image: 'https://example.com/last.png', prompt_extend: false, duration: 7 }));
    const task = fake.book.get(id)!;
    expect(task.body).toEqual({
      model: 'wan2.7-i2v',
      input: {
        prompt: 'a cat',
        media: [
          { type: 'first_frame', url: IMAGE },
          { type: 'last_frame', url: 'https://example.com/last.png' },
        ],
      },
      parameters: { watermark: false, resolution: '720P', duration: 7, prompt_extend: false },
    });
    expect(await adapter.poll(ctx, id)).toEqual({ state: 'queued', upstreamWord: 'PENDING' });
    now += 2000;
    expect(await adapter.poll(ctx, id)).toEqual({ state: 'running', upstreamWord: 'RUNNING' });
    now += 5000;
    const done = await adapter.poll(ctx, id);
    expect(done.state).toBe('succeeded');
    if (done.state !== 'succeeded') return;
    expect(done.outputs).toHaveLength(1);
    expect(done.outputs[0]!.type).toBe('video');
    expect(new URL(done.outputs[0]!.url).origin).toBe(fake.origin);
    const bytes = Buffer.from(await (await fetch(done.outputs[0]!.url)).arrayBuffer());
    expect(bytes.equals(TINY_MP4)).toBe(true);
  });

  it('images: the async image endpoint, size W*H, the PNG in choices[]', async () => {
    const image: ChannelJob = {
      taskId: 'tsk_img',
      kind: 'image',
      model: 'vendora/famz-image-spicy',
      params: { model: 'vendora/famz-image-spicy', prompt: 'a fox', width: 1024, height: 1536, prompt_extend: true, output_format: 'png', n: 1 },
    };
    const id = await accepted(image);
    expect(fake.book.get(id)!.body).toEqual({
      model: 'wan2.7-i2v',
      input: { messages: [{ role: 'user', content: [{ text: 'a fox' }] }] },
      parameters: { n: 1, watermark: false, size: '1024*1536', prompt_extend: true },
    });
    now += 10_000;
    const done = await adapter.poll(ctx, id);
    expect(done).toMatchObject({ state: 'succeeded', outputs: [{ type: 'image' }] });
  });

  it.each([
    ['[fake:fail]', 'upstream_error', /InternalError\.Algo/],
    ['[fake:moderation]', 'content_policy_violation', /DataInspectionFailed/],
  ])('a task failing %s is failed %s with output.code in the message', async (marker, code, message) => {
    const id = await accepted(job(`x ${marker}`));
    now += 10_000;
    const done = await adapter.poll(ctx, id);
    expect(done.state).toBe('failed');
    if (done.state !== 'failed') return;
    expect(done.error.code).toBe(code);
    expect(done.error.message).toMatch(message);
    expect(done.error.message).not.toContain(KEY);
  });

  it('IPInfringementSuspect is a moderation result (content_policy_violation); InvalidParameter.DataInspection (an input could not be downloaded) is not', async () => {
    const ip = await accepted(job('x [fake:ip]'));
    now += 10_000;
    expect(await adapter.poll(ctx, ip)).toMatchObject({
      state: 'failed',
      error: { code: 'content_policy_violation', message: expect.stringMatching(/IPInfringementSuspect/) },
    });
    expect(await adapter.submit(ctx, job('x [fake:download-fail]'))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'upstream_error', message: expect.stringMatching(/InvalidParameter\.DataInspection/) },
    });
  });

  it('usage of a finished task is reported: video_duration and video_count', async () => {
    const id = await accepted(job('u', { duration: 7 }));
    now += 10_000;
    expect(await adapter.poll(ctx, id)).toMatchObject({ state: 'succeeded', reportedUsage: { seconds: 7, videos: 1 } });
  });

  it('Wan 2.7 lists no audio switch: parameters.audio is never sent; audio_enable false is refused before any request, true is what it does', async () => {
    const before = fake.http.stats.requests;
    expect(await adapter.submit(ctx, job('a', { audio_enable: false }))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'unsupported_value', param: 'audio_enable' },
    });
    expect(fake.http.stats.requests).toBe(before);
    for (const params of [{}, { audio_enable: true }]) {
      const id = await accepted(job('a', params));
      expect(fake.undocumented.get(id)).toBeUndefined();
    }
  });

  it('wan2.7-i2v (built-in profile): 480p is refused before any request; the fake refuses 480P and a duration out of 2-15 as the reference does', async () => {
    const i2v = adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel: 'wan2.7-i2v', profile: profileFor('dashscope', 'wan2.7-i2v') });
    try {
      const before = fake.http.stats.requests;
      expect(await adapter.submit(i2v, job('r', { resolution: '480p' }))).toMatchObject({
        outcome: 'rejected',
        error: { code: 'unsupported_value', param: 'resolution' },
      });
      expect(fake.http.stats.requests).toBe(before);
    } finally {
      await i2v.close();
    }
    for (const parameters of [{ resolution: '480P' }, { duration: 16 }, { duration: 5.5 }]) {
      const raw = await fetch(`${fake.origin}/api/v1/services/aigc/video-generation/video-synthesis`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'x-dashscope-async': 'enable', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'wan2.7-i2v', input: { prompt: 'x', media: [{ type: 'first_frame', url: 'https://img.example/a.png' }] }, parameters }),
      });
      expect(raw.status, JSON.stringify(parameters)).toBe(400);
    }
  });

  it('wan2.6-t2i (built-in profile): a size outside 1280*1280..1440*1440 pixels is refused before any request (the fake refuses it too); 1280x1280 passes', async () => {
    const t2i = adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel: 'wan2.6-t2i', profile: profileFor('dashscope', 'wan2.6-t2i') });
    const image = (width: number, height: number, size?: string): ChannelJob => ({
      taskId: 'tsk_img',
      kind: 'image',
      model: 'vendora/famz-image-spicy',
      params: { model: 'vendora/famz-image-spicy', prompt: 'a fox', width, height, ...(size ? { size } : {}), prompt_extend: true, output_format: 'png', n: 1 },
    });
    const before = fake.http.stats.requests;
    expect(await adapter.submit(t2i, image(1024, 1536))).toMatchObject({ outcome: 'rejected', error: { code: 'unsupported_value', param: 'width' } });
    expect(await adapter.submit(t2i, image(1024, 1024, '1024x1024'))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'unsupported_value', param: 'size' },
    });
    expect(fake.http.stats.requests).toBe(before);
    const raw = await fetch(`${fake.origin}/api/v1/services/aigc/image-generation/generation`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'x-dashscope-async': 'enable', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'wan2.6-t2i', input: { messages: [{ role: 'user', content: [{ text: 'x' }] }] }, parameters: { size: '1024*1536' } }),
    });
    expect(raw.status).toBe(400);
    const outcome = await adapter.submit(t2i, image(1280, 1280, '1280x1280'));
    if (outcome.outcome !== 'accepted') throw new Error(JSON.stringify(outcome));
    now += 10_000;
    expect(await adapter.poll(t2i, outcome.upstreamId)).toMatchObject({ state: 'succeeded', reportedUsage: { images: 1 } });
    await t2i.close();
  });

  it('an unknown id is HTTP 200 UNKNOWN -> not_found; an expired id likewise', async () => {
    expect(await adapter.poll(ctx, 'no-such-task')).toEqual({ state: 'not_found', upstreamWord: 'UNKNOWN' });
    const id = await accepted(job('old'));
    now += 25 * 3_600_000;
    expect(await adapter.poll(ctx, id)).toEqual({ state: 'not_found', upstreamWord: 'UNKNOWN' });
  });

  it('a stuck task stays running', async () => {
    const id = await accepted(job('x [fake:stuck]'));
    now += 3_600_000;
    expect(await adapter.poll(ctx, id)).toEqual({ state: 'running', upstreamWord: 'RUNNING' });
  });

  it.each([
    ['[fake:moderation-early]', { outcome: 'rejected', error: { code: 'content_policy_violation' } }],
    ['[fake:invalid]', { outcome: 'rejected', error: { code: 'upstream_error' } }],
    ['[fake:rate-limit]', { outcome: 'refused', reason: 'HTTP 429 Throttling.RateQuota' }],
    ['[fake:quota]', { outcome: 'refused', reason: 'HTTP 400 Arrearage' }],
  ])('a submission refused %s answers %o and creates nothing', async (marker, expected) => {
    const before = fake.http.stats.accepted;
    expect(await adapter.submit(ctx, job(`x ${marker}`))).toMatchObject(expected);
    expect(fake.http.stats.accepted).toBe(before);
  });

  it('business errors inside HTTP 200 are read from the body', async () => {
    const relay = await startDashscopeFake({ apiKey: KEY, errorsInHttp200: true });
    const rctx = adapterContext({ baseUrl: relay.origin, apiKey: KEY, upstreamModel: 'wan2.7-i2v' });
    try {
      expect(await adapter.submit(rctx, job('x [fake:moderation-early]'))).toMatchObject({ outcome: 'rejected', error: { code: 'content_policy_violation' } });
      expect(await adapter.submit(rctx, job('x [fake:quota]'))).toMatchObject({ outcome: 'refused', reason: 'HTTP 200 Arrearage' });
    } finally {
      await rctx.close();
      await relay.close();
    }
  });

  it('429 on submit carries Retry-After; 429 and 500 on poll are throttled / transient', async () => {
    fake.http.inject({ on: 'submit', kind: '429-retry-after', retryAfterS: 3 });
    expect(await adapter.submit(ctx, job('r'))).toEqual({ outcome: 'refused', reason: 'HTTP 429', retryAfterMs: 3000 });
    fake.http.inject({ on: 'submit', kind: '429' });
    expect(await adapter.submit(ctx, job('r'))).toEqual({ outcome: 'refused', reason: 'HTTP 429' });
    fake.http.inject({ on: 'submit', kind: '500' });
    expect(await adapter.submit(ctx, job('r'))).toMatchObject({ outcome: 'refused', reason: 'HTTP 500' });
    const id = await accepted(job('p'));
    fake.http.inject({ on: 'poll', kind: '429-retry-after', retryAfterS: 2 });
    expect(await adapter.poll(ctx, id)).toEqual({ state: 'throttled', retryAfterMs: 2000 });
    fake.http.inject({ on: 'poll', kind: '429' });
    expect(await adapter.poll(ctx, id)).toEqual({ state: 'throttled' });
    fake.http.inject({ on: 'poll', kind: '500' });
    expect(await adapter.poll(ctx, id)).toEqual({ state: 'transient', reason: 'HTTP 500' });
  });

  it('an accepted submission whose answer is lost is unknown, and the fake holds exactly one task for it', async () => {
    const outcome = await adapter.submit(ctx, job('lost one [fake:lose-answer]'));
    expect(outcome.outcome).toBe('unknown');
    expect(fake.acceptedByPrompt.get('lost one [fake:lose-answer]')).toBe(1);
    expect(typeof adapter.reconcile).toBe('undefined');
  });

  it('a bad key is refused (fail over), a missing async header is what the fake refuses', async () => {
    const bad = adapterContext({ baseUrl: fake.origin, apiKey: 'sk-wrong', upstreamModel: 'wan2.7-i2v' });
    try {
      expect(await adapter.submit(bad, job('k'))).toMatchObject({ outcome: 'refused' });
      expect(await adapter.probe(bad)).toMatchObject({ ok: false });
    } finally {
      await bad.close();
    }
    expect(await adapter.probe(ctx)).toMatchObject({ ok: true });
    const raw = await ctx.http.request({
      method: 'POST',
      path: '/api/v1/services/aigc/video-generation/video-synthesis',
      headers: { authorization: `Bearer ${KEY}` },
      json: {},
    });
    expect(raw).toMatchObject({ kind: 'response', status: 403, json: { code: 'AccessDenied' } });
  });

  it('Wan 3.x: negative_prompt and prompt_extend=true are refused before any request', async () => {
    const wan3 = adapterContext({ baseUrl: fake.origin, apiKey: KEY, upstreamModel: 'wan3.0-video' });
    try {
      const before = fake.http.stats.byRole.get('submit') ?? 0;
      expect(await adapter.submit(wan3, job('n', { negative_prompt: 'blur' }))).toMatchObject({
        outcome: 'rejected',
        error: { code: 'unsupported_value', param: 'negative_prompt' },
      });
      expect(await adapter.submit(wan3, job('n', { prompt_extend: true }))).toMatchObject({
        outcome: 'rejected',
        error: { code: 'unsupported_value', param: 'prompt_extend' },
      });
      expect(fake.http.stats.byRole.get('submit') ?? 0).toBe(before);
      const id = await accepted({ ...job('n', { prompt_extend: false, aspect_ratio: '16:9' }) });
      expect(fake.book.get(id)!.body).toMatchObject({ parameters: { ratio: '16:9' } });
    } finally {
      await wan3.close();
    }
  });

  it('cancel works while PENDING only', async () => {
    const id = await accepted(job('c'));
    expect(await adapter.cancel!(ctx, id)).toEqual({ outcome: 'cancelled', requestId: expect.any(String) as unknown });
    expect(await adapter.poll(ctx, id)).toMatchObject({ state: 'failed', upstreamWord: 'CANCELED', error: { code: 'upstream_error' } });
    const running = await accepted(job('c2'));
    now += 2000;
    expect(await adapter.cancel!(ctx, running)).toMatchObject({ outcome: 'not_cancellable' });
  });

  it('a data URL input is sent inline when the deployment cannot publish it, and as our URL when it can', async () => {
    const dataUrl = `data:image/png;base64,${Buffer.from('png').toString('base64')}`;
    const inline = await accepted(job('d', { image: dataUrl }));
    expect(fake.book.get(inline)!.body).toMatchObject({ input: { media: [{ type: 'first_frame', url: dataUrl }] } });
    const published = adapterContext({
      baseUrl: fake.origin,
      apiKey: KEY,
      upstreamModel: 'wan2.7-i2v',
      publish: () => Promise.resolve('https://media.example/signed/1'),
    });
    try {
      const id = await accepted({ ...job('d', { image: dataUrl }) });
      expect(id).toBeTruthy();
      const outcome = await adapter.submit(published, job('d', { image: dataUrl }));
      if (outcome.outcome !== 'accepted') throw new Error('not accepted');
      expect(fake.book.get(outcome.upstreamId)!.body).toMatchObject({ input: { media: [{ type: 'first_frame', url: 'https://media.example/signed/1' }] } });
    } finally {
      await published.close();
    }
  });

  it('an unknown status word is running and logged; SUSPENDED is running without a warning', async () => {
    const words = ['SUSPENDED', 'REBALANCING'];
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ request_id: 'r', output: { task_id: 't', task_status: words.shift() } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const odd = adapterContext({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: KEY, upstreamModel: 'wan2.7-i2v' });
    try {
      expect(await adapter.poll(odd, 't')).toEqual({ state: 'running', upstreamWord: 'SUSPENDED' });
      expect(odd.warnings).toHaveLength(0);
      expect(await adapter.poll(odd, 't')).toEqual({ state: 'running', upstreamWord: 'REBALANCING' });
      expect(odd.warnings).toHaveLength(1);
    } finally {
      await odd.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
