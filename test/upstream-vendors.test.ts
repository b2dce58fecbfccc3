// The `kling`, `runway`, `luma` and `xai` protocols end to end: a real mediagate routes tasks to the
// fake Kling, Runway, Luma and xAI APIs over real HTTP; the client sees the task complete with our own URL and the
// upstream's bytes, or fail with the mapped code, with one accepted submission per task. Runs on
// SQLite and PostgreSQL; skipped in the split topology, whose child workers get no routing table.
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseChannelsConfig } from '../src/channels/config.js';
import { startKlingFake, type KlingFake } from './fakes/kling.js';
import { startLumaFake, type LumaFake } from './fakes/luma.js';
import { startRunwayFake, type RunwayFake } from './fakes/runway.js';
import { startXaiFake, type XaiFake } from './fakes/xai.js';
import { TINY_MP4 } from './fakes/upstream-kit.js';
import { eventually } from './helpers/eventually.js';
import { createTestDatabase, postgresAvailability, selectedBackends, type TestDatabase } from './helpers/postgres.js';
import { startServer, type TestServer } from './helpers/server.js';

const split = process.env['MEDIAGATE_TEST_TOPOLOGY'] === 'split';
const ACCESS = 'kling-e2e-access';
const SECRET = 'kling-e2e-secret';
const TIMINGS = { pollStartMs: 100, pollMaxMs: 400, leaseMs: 5_000, idleMs: 100, notFoundGraceMs: 1_000 };
/** Routed to kling-v2-6 (image to video). */
const KLING_I2V = 'vendora/famw-3.0-i2v-spicy';
/** Routed to kling-v3 (text to video). */
const KLING_T2V = 'vendora/famw-2.7-t2v';
const RUNWAY_KEY = 'runway-e2e-key';
/** Routed to runway veo3.1 (first and last frame, audio). */
const RUNWAY_VEO = 'famw-3-0-prime-image-to-video';
/** Routed to runway gen4_turbo (image to video). */
const RUNWAY_GEN4 = 'vendorb/famsd-2.0-i2v-spicy';
const LUMA_KEY = 'luma-e2e-key';
/** Routed to luma ray-2 (text to video). */
const LUMA = 'vendora/famw-2.7-ref2v-uncensored';
const XAI_KEY = 'xai-e2e-key';
/** Routed to xai grok-imagine-video (image to video). */
const XAI = 'vendora/famw-2.7-i2v';

interface TaskBody {
  id: string;
  status: string;
  outputs?: { type: string; url: string }[];
  error?: { code: string; message: string; param: string } | null;
}

const BACKENDS = [...(selectedBackends().includes('sqlite') ? ['sqlite'] : []), ...((await postgresAvailability()).enabled ? ['postgres'] : [])];

describe.skipIf(split).each(BACKENDS)('kling, runway, luma and xai through the real service (%s)', (backend) => {
  let kling: KlingFake;
  let runway: RunwayFake;
  let luma: LumaFake;
  let xai: XaiFake;
  let server: TestServer;
  let database: TestDatabase | undefined;
  let image: string;

  async function create(body: Record<string, unknown>): Promise<Response> {
    return fetch(`${server.url}/v1/video/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.keys[0]}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  }

  async function task(id: string): Promise<TaskBody> {
    return (await (await fetch(`${server.url}/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${server.keys[0]}` } })).json()) as TaskBody;
  }

  async function settle(body: Record<string, unknown>): Promise<TaskBody> {
    const res = await create(body);
    const created = (await res.json()) as { id?: string };
    expect(res.status, JSON.stringify(created)).toBe(200);
    return eventually(
      async () => {
        const got = await task(created.id ?? '');
        return got.status === 'completed' || got.status === 'failed' ? got : undefined;
      },
      { deadline: 20_000, interval: 50, what: `task ${created.id ?? ''} to settle` },
    );
  }

  beforeAll(async () => {
    kling = await startKlingFake({ accessKey: ACCESS, secretKey: SECRET, queuedMs: 100, runMs: 400 });
    runway = await startRunwayFake({ apiKey: RUNWAY_KEY, queuedMs: 100, runMs: 400 });
    luma = await startLumaFake({ apiKey: LUMA_KEY, queuedMs: 100, runMs: 400 });
    xai = await startXaiFake({ apiKey: XAI_KEY, queuedMs: 100, runMs: 400 });
    const png = await sharp({ create: { width: 512, height: 512, channels: 3, background: '#3366aa' } })
      .png()
      .toBuffer();
    image = `data:image/png;base64,${png.toString('base64')}`;
    const channels = parseChannelsConfig(
      JSON.stringify({
        channels: {
          // 3 s: the stuck task's wait; a task that completes takes 0.5 s upstream (upstream-lifecycle: 1 s in 3 s).
          kling: { protocol: 'kling', base_url: kling.origin, access_key_env: 'T_KLING_AK', secret_key_env: 'T_KLING_SK', timeout_s: 3 },
          runway: { protocol: 'runway', base_url: runway.origin, api_key_env: 'T_RUNWAY', timeout_s: 5 },
          luma: { protocol: 'luma', base_url: luma.origin, api_key_env: 'T_LUMA', timeout_s: 5 },
          xai: { protocol: 'xai', base_url: xai.origin, api_key_env: 'T_XAI', timeout_s: 5 },
        },
        routes: [
          { model: KLING_I2V, to: [{ channel: 'kling', upstream_model: 'kling-v2-6' }] },
          { model: KLING_T2V, to: [{ channel: 'kling', upstream_model: 'kling-v3' }] },
          { model: RUNWAY_VEO, to: [{ channel: 'runway', upstream_model: 'veo3.1' }] },
          { model: RUNWAY_GEN4, to: [{ channel: 'runway', upstream_model: 'gen4_turbo' }] },
          { model: LUMA, to: [{ channel: 'luma', upstream_model: 'ray-2' }] },
          { model: XAI, to: [{ channel: 'xai', upstream_model: 'grok-imagine-video' }] },
          { model: '*', to: [{ channel: 'sandbox' }] },
        ],
      }),
      { T_KLING_AK: ACCESS, T_KLING_SK: SECRET, T_RUNWAY: RUNWAY_KEY, T_LUMA: LUMA_KEY, T_XAI: XAI_KEY },
    );
    if (backend === 'postgres' && process.env['MEDIAGATE_TEST_BACKEND'] !== 'postgres') database = await createTestDatabase();
    const env = { MEDIAGATE_ENGINE: 'instant', ...(database ? { DATABASE_URL: database.url } : {}) };
    server = await startServer(env, { channels, upstreamTimings: TIMINGS, upstreamRequestTimeoutMs: 2_000 });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await database?.drop();
    await kling?.close();
    await runway?.close();
    await luma?.close();
    await xai?.close();
  });

  it('kling: image to video completes with our URL, the frame sent as bare Base64, our task id as external_task_id', async () => {
    const prompt = `a heron taking off ${backend} k-ok`;
    const final = await settle({ model: KLING_I2V, prompt, image, duration: 10, resolution: '1080p', audio_enable: true });
    expect(final.status, JSON.stringify(final.error)).toBe('completed');
    const url = final.outputs?.[0]?.url ?? '';
    expect(new URL(url).origin).toBe(new URL(server.url).origin);
    expect(Buffer.from(await (await fetch(url)).arrayBuffer()).equals(TINY_MP4)).toBe(true);
    expect(kling.acceptedByPrompt.get(prompt)).toBe(1);
    const [sent] = [...kling.book.tasks.values()].filter((t) => t.prompt === prompt);
    expect(sent?.body).toMatchObject({ model_name: 'kling-v2-6', duration: '10', mode: 'pro', sound: 'on', external_task_id: final.id });
    expect(String((sent?.body as Record<string, unknown>)['image'])).not.toMatch(/^data:/);
  });

  it('kling: text to video on kling-v3 takes any whole duration from 3 to 15 s', async () => {
    const prompt = `a paper boat ${backend} k3`;
    const final = await settle({ model: KLING_T2V, prompt, duration: 7, aspect_ratio: '9:16' });
    expect(final.status, JSON.stringify(final.error)).toBe('completed');
    const [sent] = [...kling.book.tasks.values()].filter((t) => t.prompt === prompt);
    expect(sent?.body).toMatchObject({ model_name: 'kling-v3', duration: '7', aspect_ratio: '9:16', mode: 'std' });
  });

  it('a value Kling cannot render is a 400 naming the parameter, before any upstream call', async () => {
    const before = kling.http.stats.requests;
    for (const [body, param] of [
      [{ model: KLING_I2V, prompt: 'x', image, duration: 6 }, 'duration'],
      [{ model: KLING_I2V, prompt: 'x', image, duration: 5, resolution: '480p' }, 'resolution'],
      [{ model: KLING_I2V, prompt: 'x', image, duration: 5, aspect_ratio: '9:16' }, 'aspect_ratio'],
      [{ model: KLING_I2V, prompt: 'x', image, duration: 5, audio_enable: true }, 'audio_enable'],
      [{ model: KLING_I2V, prompt: 'x', image, duration: 5, seed: 7 }, 'seed'],
      [{ model: KLING_T2V, prompt: 'x', duration: 2 }, 'duration'],
      [{ model: KLING_T2V, prompt: 'x', duration: 5, aspect_ratio: '4:3' }, 'aspect_ratio'],
    ] as const) {
      const res = await create(body);
      const json = (await res.json()) as { error?: { code?: string; param?: string } };
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(json.error).toMatchObject({ code: 'unsupported_value', param });
    }
    expect(kling.http.stats.requests).toBe(before);
  });

  it.each([
    ['[fake:fail]', 'upstream_error'],
    ['[fake:moderation]', 'content_policy_violation'],
    ['[fake:moderation-early]', 'content_policy_violation'],
    ['[fake:missing-output]', 'output_invalid'],
    ['[fake:stuck]', 'upstream_timeout'],
  ])('kling %s fails the task with %s, at most one submission', async (marker, code) => {
    const prompt = `failing kling ${marker} ${code} ${backend}`;
    const final = await settle({ model: KLING_T2V, prompt, duration: 5 });
    expect(final.status).toBe('failed');
    expect(final.error?.code, final.error?.message).toBe(code);
    expect(final.error?.message).not.toContain(SECRET);
    expect(final.error?.message).not.toContain('127.0.0.1');
    expect(kling.acceptedByPrompt.get(prompt) ?? 0).toBeLessThanOrEqual(1);
  });

  it('kling: a submission whose answer was lost is found by external_task_id and completes, paid once', async () => {
    const prompt = `kling lost answer ${backend} [fake:lose-answer]`;
    const final = await settle({ model: KLING_T2V, prompt, duration: 5 });
    expect(final.status, JSON.stringify(final.error)).toBe('completed');
    expect(kling.acceptedByPrompt.get(prompt)).toBe(1);
  });

  it('kling: a rate-limited submission (HTTP 429) is waited out, then submitted once', async () => {
    kling.http.inject({ on: 'submit', kind: '429-retry-after', retryAfterS: 1 });
    const prompt = `kling rate limited ${backend}`;
    const final = await settle({ model: KLING_T2V, prompt, duration: 5 });
    expect(final.status, JSON.stringify(final.error)).toBe('completed');
    expect(kling.acceptedByPrompt.get(prompt)).toBe(1);
    expect(kling.http.stats.throttled).toBeGreaterThanOrEqual(1);
  });

  it('kling: one signed token serves many calls', () => {
    expect(kling.tokens.size).toBeGreaterThanOrEqual(1);
    expect(kling.tokens.size).toBeLessThan(kling.http.stats.requests / 2);
  });

  it('runway: veo3.1 with first and last frame and audio completes with our URL', async () => {
    const prompt = `a tide coming in ${backend} r-ok`;
    const final = await settle({
      model: RUNWAY_VEO,
      prompt,
      image,
      end_image: image,
      duration: 8,
      aspect_ratio: '9:16',
      resolution: '1080p',
      audio_enable: true,
    });
    expect(final.status, JSON.stringify(final.error)).toBe('completed');
    const url = final.outputs?.[0]?.url ?? '';
    expect(new URL(url).origin).toBe(new URL(server.url).origin);
    expect(Buffer.from(await (await fetch(url)).arrayBuffer()).equals(TINY_MP4)).toBe(true);
    expect(runway.acceptedByPrompt.get(prompt)).toBe(1);
    const [sent] = [...runway.book.tasks.values()].filter((t) => t.prompt === prompt);
    expect(sent?.body).toMatchObject({
      model: 'veo3.1',
      ratio: '1080:1920',
      duration: 8,
      audio: true,
      promptImage: [{ position: 'first' }, { position: 'last' }],
    });
  });

  it('a value Runway cannot render is a 400 naming the parameter, before any upstream call', async () => {
    const before = runway.http.stats.requests;
    for (const [body, param] of [
      [{ model: RUNWAY_VEO, prompt: 'x', image, duration: 5 }, 'duration'],
      [{ model: RUNWAY_VEO, prompt: 'x', image, duration: 8, aspect_ratio: '1:1' }, 'aspect_ratio'],
      [{ model: RUNWAY_GEN4, prompt: 'x', image, duration: 5, end_image: image }, 'end_image'],
      [{ model: RUNWAY_GEN4, prompt: 'x', image, duration: 7 }, 'duration'],
      [{ model: RUNWAY_GEN4, prompt: 'x', image, duration: 5, resolution: '1080p' }, 'resolution'],
      [{ model: RUNWAY_GEN4, prompt: 'x', image, duration: 5, audio_enable: true }, 'audio_enable'],
    ] as const) {
      const res = await create(body);
      const json = (await res.json()) as { error?: { code?: string; param?: string } };
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(json.error).toMatchObject({ code: 'unsupported_value', param });
    }
    expect(runway.http.stats.requests).toBe(before);
  });

  it.each([
    ['[fake:fail]', 'upstream_error'],
    ['[fake:moderation]', 'content_policy_violation'],
    ['[fake:moderation-early]', 'content_policy_violation'],
    ['[fake:not-media]', 'output_invalid'],
    ['[fake:lose-answer]', 'upstream_submission_unknown'],
  ])('runway %s fails the task with %s, at most one submission', async (marker, code) => {
    const prompt = `failing runway ${marker} ${code} ${backend}`;
    const final = await settle({ model: RUNWAY_GEN4, prompt, image, duration: 5, aspect_ratio: '21:9' });
    expect(final.status).toBe('failed');
    expect(final.error?.code, final.error?.message).toBe(code);
    expect(final.error?.message).not.toContain(RUNWAY_KEY);
    expect(final.error?.message).not.toContain('127.0.0.1');
    expect(runway.acceptedByPrompt.get(prompt) ?? 0).toBeLessThanOrEqual(1);
  });

  it('runway: a rate-limited submission (HTTP 429) is waited out, then submitted once', async () => {
    runway.http.inject({ on: 'submit', kind: '429-retry-after', retryAfterS: 1 });
    const prompt = `runway rate limited ${backend}`;
    const final = await settle({ model: RUNWAY_GEN4, prompt, image, duration: 10 });
    expect(final.status, JSON.stringify(final.error)).toBe('completed');
    expect(runway.acceptedByPrompt.get(prompt)).toBe(1);
  });

  it('runway: cancelling our task sends exactly one DELETE /v1/tasks/{id}', async () => {
    const prompt = `runway cancel ${backend} [fake:slow]`;
    const res = await create({ model: RUNWAY_GEN4, prompt, image, duration: 5 });
    const { id } = (await res.json()) as { id: string };
    await eventually(() => runway.acceptedByPrompt.get(prompt) === 1, { deadline: 10_000, interval: 20, what: 'the runway submission' });
    const [upstream] = [...runway.book.tasks.values()].filter((t) => t.prompt === prompt);
    const cancelled = await fetch(`${server.url}/v1/video/generations/${id}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.keys[0]}` },
    });
    expect(cancelled.status).toBe(200);
    await eventually(() => runway.deleted.has(upstream?.id ?? ''), { deadline: 10_000, interval: 20, what: 'the upstream DELETE' });
    expect((await task(id)).status).toBe('cancelled');
    expect(runway.http.stats.byRole.get('cancel')).toBe(1);
  });

  it('luma: ray-2 completes with our URL, duration sent as "9s"', async () => {
    const prompt = `a glacier calving ${backend} l-ok`;
    const final = await settle({ model: LUMA, prompt, duration: 9, resolution: '1080p' });
    expect(final.status, JSON.stringify(final.error)).toBe('completed');
    expect(Buffer.from(await (await fetch(final.outputs?.[0]?.url ?? '')).arrayBuffer()).equals(TINY_MP4)).toBe(true);
    expect(luma.acceptedByPrompt.get(prompt)).toBe(1);
    const [sent] = [...luma.book.tasks.values()].filter((t) => t.prompt === prompt);
    expect(sent?.body).toMatchObject({ model: 'ray-2', duration: '9s', resolution: '1080p' });
  });

  it('a value Ray cannot render is a 400 naming the parameter, before any upstream call', async () => {
    const before = luma.http.stats.requests;
    for (const [body, param] of [
      [{ model: LUMA, prompt: 'x', duration: 6 }, 'duration'],
      [{ model: LUMA, prompt: 'x', duration: 5, seed: 3 }, 'seed'],
      [{ model: LUMA, prompt: 'x', duration: 5, audio_enable: true }, 'audio_enable'],
      [{ model: LUMA, prompt: 'x', duration: 5, negative_prompt: 'blur' }, 'negative_prompt'],
    ] as const) {
      const res = await create(body);
      const json = (await res.json()) as { error?: { code?: string; param?: string } };
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(json.error).toMatchObject({ code: 'unsupported_value', param });
    }
    expect(luma.http.stats.requests).toBe(before);
  });

  it.each([
    ['[fake:fail]', 'upstream_error'],
    ['[fake:moderation]', 'content_policy_violation'],
    ['[fake:moderation-early]', 'content_policy_violation'],
    ['[fake:missing-output]', 'output_invalid'],
    ['[fake:lose-answer]', 'upstream_submission_unknown'],
  ])('luma %s fails the task with %s, at most one submission', async (marker, code) => {
    const prompt = `failing luma ${marker} ${code} ${backend}`;
    const final = await settle({ model: LUMA, prompt, duration: 5 });
    expect(final.status).toBe('failed');
    expect(final.error?.code, final.error?.message).toBe(code);
    expect(final.error?.message).not.toContain(LUMA_KEY);
    expect(luma.acceptedByPrompt.get(prompt) ?? 0).toBeLessThanOrEqual(1);
  });

  it('luma: a rate-limited submission (HTTP 429) is waited out, then submitted once', async () => {
    luma.http.inject({ on: 'submit', kind: '429-retry-after', retryAfterS: 1 });
    const prompt = `luma rate limited ${backend}`;
    const final = await settle({ model: LUMA, prompt, duration: 5 });
    expect(final.status, JSON.stringify(final.error)).toBe('completed');
    expect(luma.acceptedByPrompt.get(prompt)).toBe(1);
  });

  it('xai: grok-imagine-video from an image completes with our URL (polls answered 202 meanwhile)', async () => {
    const prompt = `a kite in a storm ${backend} x-ok`;
    const final = await settle({ model: XAI, prompt, image, duration: 6, resolution: '720p' });
    expect(final.status, JSON.stringify(final.error)).toBe('completed');
    expect(Buffer.from(await (await fetch(final.outputs?.[0]?.url ?? '')).arrayBuffer()).equals(TINY_MP4)).toBe(true);
    expect(xai.acceptedByPrompt.get(prompt)).toBe(1);
    const [sent] = [...xai.book.tasks.values()].filter((t) => t.prompt === prompt);
    expect(sent?.body).toMatchObject({ model: 'grok-imagine-video', duration: 6, resolution: '720p' });
  });

  it('a value Grok Imagine cannot render is a 400 naming the parameter, before any upstream call', async () => {
    const before = xai.http.stats.requests;
    for (const [body, param] of [
      [{ model: XAI, prompt: 'x', image, duration: 16 }, 'duration'],
      [{ model: XAI, prompt: 'x', image, duration: 5, end_image: image }, 'end_image'],
      [{ model: XAI, prompt: 'x', image, duration: 5, seed: 9 }, 'seed'],
    ] as const) {
      const res = await create(body);
      const json = (await res.json()) as { error?: { code?: string; param?: string } };
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(json.error).toMatchObject({ code: 'unsupported_value', param });
    }
    expect(xai.http.stats.requests).toBe(before);
  });

  it.each([
    ['[fake:fail]', 'upstream_error'],
    ['[fake:moderation]', 'content_policy_violation'],
    ['[fake:moderation-early]', 'content_policy_violation'],
    ['[fake:missing-output]', 'output_invalid'],
    ['[fake:lose-answer]', 'upstream_submission_unknown'],
  ])('xai %s fails the task with %s, at most one submission', async (marker, code) => {
    const prompt = `failing xai ${marker} ${code} ${backend}`;
    const final = await settle({ model: XAI, prompt, image, duration: 5 });
    expect(final.status).toBe('failed');
    expect(final.error?.code, final.error?.message).toBe(code);
    expect(final.error?.message).not.toContain(XAI_KEY);
    expect(xai.acceptedByPrompt.get(prompt) ?? 0).toBeLessThanOrEqual(1);
  });

  it('xai: a rate-limited submission (HTTP 429) is waited out, then submitted once', async () => {
    xai.http.inject({ on: 'submit', kind: '429-retry-after', retryAfterS: 1 });
    const prompt = `xai rate limited ${backend}`;
    const final = await settle({ model: XAI, prompt, image, duration: 5 });
    expect(final.status, JSON.stringify(final.error)).toBe('completed');
    expect(xai.acceptedByPrompt.get(prompt)).toBe(1);
  });
});
