// The `gemini` and `vertex` protocols end to end: a real mediagate routes tasks to the fake
// Gemini API and the fake Vertex AI (with its token endpoint) over real HTTP; the client sees the
// task complete with our own URL and the upstream's bytes, or fail with the mapped code, with one
// accepted submission per task. Runs on SQLite and PostgreSQL; skipped in the split topology,
// whose child workers get no routing table.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseChannelsConfig } from '../src/channels/config.js';
import { startGeminiFake, type GeminiFake } from './fakes/gemini.js';
import { TINY_MP4 } from './fakes/upstream-kit.js';
import { startVertexFake, type VertexFake } from './fakes/vertex.js';
import { eventually } from './helpers/eventually.js';
import { createTestDatabase, postgresAvailability, selectedBackends, type TestDatabase } from './helpers/postgres.js';
import { startServer, type TestServer } from './helpers/server.js';

const split = process.env['MEDIAGATE_TEST_TOPOLOGY'] === 'split';
const GEMINI_KEY = 'AIza-e2e-key';
const PROJECT = 'mediagate-e2e';
const LOCATION = 'us-central1';
const EMAIL = 'veo@mediagate-e2e.iam.gserviceaccount.com';
const TIMINGS = { pollStartMs: 100, pollMaxMs: 400, leaseMs: 5_000, idleMs: 100, notFoundGraceMs: 1_000 };
const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
/** Routed to gemini first, vertex as its fallback (image to video). */
const I2V = 'vendora/famw-3.0-i2v-spicy';
/** Routed to vertex only (text to video). */
const T2V = 'vendora/famw-2.7-t2v';

interface TaskBody {
  id: string;
  status: string;
  outputs?: { type: string; url: string }[];
  error?: { code: string; message: string; param: string } | null;
}

const BACKENDS = [...(selectedBackends().includes('sqlite') ? ['sqlite'] : []), ...((await postgresAvailability()).enabled ? ['postgres'] : [])];

describe.skipIf(split).each(BACKENDS)('gemini and vertex through the real service (%s)', (backend) => {
  let gemini: GeminiFake;
  let vertex: VertexFake;
  let server: TestServer;
  let database: TestDatabase | undefined;
  let dir: string;
  let image: string;

  async function create(body: Record<string, unknown>): Promise<Response> {
    return fetch(`${server.url}/v1/video/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.keys[0]}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  }

  async function settle(body: Record<string, unknown>): Promise<TaskBody> {
    const res = await create(body);
    const created = (await res.json()) as { id?: string };
    expect(res.status, JSON.stringify(created)).toBe(200);
    return eventually(
      async () => {
        const task = (await (
          await fetch(`${server.url}/v1/video/generations/${created.id ?? ''}`, { headers: { authorization: `Bearer ${server.keys[0]}` } })
        ).json()) as TaskBody;
        return task.status === 'completed' || task.status === 'failed' ? task : undefined;
      },
      { deadline: 20_000, interval: 50, what: `task ${created.id ?? ''} to settle` },
    );
  }

  beforeAll(async () => {
    gemini = await startGeminiFake({ apiKey: GEMINI_KEY, queuedMs: 100, runMs: 400 });
    vertex = await startVertexFake({ project: PROJECT, location: LOCATION, clientEmail: EMAIL, publicKey: pair.publicKey, queuedMs: 100, runMs: 400 });
    dir = await mkdtemp(join(tmpdir(), 'mg-google-e2e-'));
    const keyFile = join(dir, 'service-account.json');
    await writeFile(
      keyFile,
      JSON.stringify({
        type: 'service_account',
        project_id: PROJECT,
        private_key_id: 'e2e',
        private_key: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        client_email: EMAIL,
        token_uri: vertex.tokenUri,
      }),
    );
    const png = await sharp({ create: { width: 512, height: 512, channels: 3, background: '#aa6633' } })
      .png()
      .toBuffer();
    image = `data:image/png;base64,${png.toString('base64')}`;
    const channels = parseChannelsConfig(
      JSON.stringify({
        channels: {
          // 3 s: the stuck task's wait; a task that completes takes 0.5 s upstream (upstream-lifecycle: 1 s in 3 s).
          veo: { protocol: 'gemini', base_url: gemini.origin, api_key_env: 'T_GEMINI', timeout_s: 3 },
          'veo-vertex': {
            protocol: 'vertex',
            base_url: vertex.origin,
            project: PROJECT,
            location: LOCATION,
            credentials_file_env: 'T_VERTEX_KEY',
            timeout_s: 5,
          },
        },
        routes: [
          {
            model: I2V,
            to: [
              { channel: 'veo', upstream_model: 'veo-3.1-generate-preview' },
              { channel: 'veo-vertex', upstream_model: 'veo-3.1-generate-001' },
            ],
          },
          { model: T2V, to: [{ channel: 'veo-vertex', upstream_model: 'veo-3.1-fast-generate-preview' }] },
          { model: '*', to: [{ channel: 'sandbox' }] },
        ],
      }),
      { T_GEMINI: GEMINI_KEY, T_VERTEX_KEY: keyFile },
    );
    if (backend === 'postgres' && process.env['MEDIAGATE_TEST_BACKEND'] !== 'postgres') database = await createTestDatabase();
    const env = { MEDIAGATE_ENGINE: 'instant', ...(database ? { DATABASE_URL: database.url } : {}) };
    server = await startServer(env, { channels, upstreamTimings: TIMINGS, upstreamRequestTimeoutMs: 2_000 });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await database?.drop();
    await gemini?.close();
    await vertex?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('gemini: completes with our URL and the bytes downloaded with the key (never shown to the client)', async () => {
    const prompt = `a kite over dunes ${backend} g-ok`;
    const final = await settle({ model: I2V, prompt, image, duration: 8, resolution: '1080p' });
    expect(final.status, JSON.stringify(final.error)).toBe('completed');
    const url = final.outputs?.[0]?.url ?? '';
    expect(new URL(url).origin).toBe(new URL(server.url).origin);
    expect(JSON.stringify(final)).not.toContain(gemini.origin.replace('http://', ''));
    expect(Buffer.from(await (await fetch(url)).arrayBuffer()).equals(TINY_MP4)).toBe(true);
    expect(gemini.acceptedByPrompt.get(prompt)).toBe(1);
    expect(gemini.keylessDownloads.count).toBe(0);
  });

  it('vertex: completes with the inline video decoded into our storage', async () => {
    const prompt = `a lighthouse at dusk ${backend} v-ok`;
    const final = await settle({ model: T2V, prompt, duration: 8, aspect_ratio: '9:16' });
    expect(final.status, JSON.stringify(final.error)).toBe('completed');
    expect(Buffer.from(await (await fetch(final.outputs?.[0]?.url ?? '')).arrayBuffer()).equals(TINY_MP4)).toBe(true);
    expect(vertex.acceptedByPrompt.get(prompt)).toBe(1);
    expect(vertex.grants.ok).toBeGreaterThanOrEqual(1);
  });

  it('a value Veo cannot render is a 400 naming the parameter, before any upstream call', async () => {
    const before = gemini.http.stats.requests + vertex.http.stats.requests;
    for (const [body, param] of [
      [{ model: I2V, prompt: 'x', image, duration: 5 }, 'duration'],
      [{ model: I2V, prompt: 'x', image, duration: 6, resolution: '1080p' }, 'resolution'],
      [{ model: I2V, prompt: 'x', image, duration: 8, aspect_ratio: '1:1' }, 'aspect_ratio'],
      [{ model: I2V, prompt: 'x', image, duration: 8, audio_enable: false }, 'audio_enable'],
    ] as const) {
      const res = await create(body);
      const json = (await res.json()) as { error?: { code?: string; param?: string } };
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(json.error).toMatchObject({ code: 'unsupported_value', param });
    }
    expect(gemini.http.stats.requests + vertex.http.stats.requests).toBe(before);
  });

  it('gemini refuses with 429 before acceptance: the task fails over to vertex and is paid once', async () => {
    gemini.http.inject({ on: 'submit', kind: '429' });
    const prompt = `failover to vertex ${backend}`;
    const final = await settle({ model: I2V, prompt, image, duration: 8 });
    expect(final.status, JSON.stringify(final.error)).toBe('completed');
    expect(gemini.acceptedByPrompt.get(prompt) ?? 0).toBe(0);
    expect(vertex.acceptedByPrompt.get(prompt)).toBe(1);
  });

  it.each([
    ['gemini', '[fake:fail]', 'upstream_error'],
    ['gemini', '[fake:moderation]', 'content_policy_violation'],
    ['gemini', '[fake:moderation-early]', 'content_policy_violation'],
    ['gemini', '[fake:not-media]', 'output_invalid'],
    ['gemini', '[fake:lose-answer]', 'upstream_submission_unknown'],
    ['gemini', '[fake:stuck]', 'upstream_timeout'],
    ['vertex', '[fake:fail]', 'upstream_error'],
    ['vertex', '[fake:moderation]', 'content_policy_violation'],
    ['vertex', '[fake:moderation-early]', 'content_policy_violation'],
    ['vertex', '[fake:missing-output]', 'output_invalid'],
    ['vertex', '[fake:lose-answer]', 'upstream_submission_unknown'],
  ])('%s %s fails the task with %s, at most one submission', async (protocol, marker, code) => {
    const prompt = `failing ${protocol} ${marker} ${code} ${backend}`;
    const body = protocol === 'gemini' ? { model: I2V, prompt, image, duration: 8 } : { model: T2V, prompt, duration: 8 };
    const final = await settle(body);
    expect(final.status).toBe('failed');
    expect(final.error?.code, final.error?.message).toBe(code);
    expect(final.error?.message).not.toContain(GEMINI_KEY);
    expect(final.error?.message).not.toContain('127.0.0.1');
    const fake = protocol === 'gemini' ? gemini : vertex;
    expect(fake.acceptedByPrompt.get(prompt) ?? 0).toBeLessThanOrEqual(1);
    // A failure after acceptance never moves to the fallback target.
    if (protocol === 'gemini') expect(vertex.acceptedByPrompt.get(prompt) ?? 0).toBe(0);
  });

  it('gemini: a rate-limited operation poll (HTTP 429, Retry-After) is waited out; the task completes, submitted once', async () => {
    gemini.http.inject({ on: 'poll', kind: '429-retry-after', retryAfterS: 1 });
    const throttled = gemini.http.stats.throttled;
    const prompt = `gemini poll rate limited ${backend}`;
    const final = await settle({ model: I2V, prompt, image, duration: 8 });
    expect(final.status, JSON.stringify(final.error)).toBe('completed');
    expect(gemini.http.stats.throttled).toBe(throttled + 1);
    expect(gemini.acceptedByPrompt.get(prompt)).toBe(1);
    expect(vertex.acceptedByPrompt.get(prompt) ?? 0).toBe(0);
  });

  it('a rate-limited vertex submission with no target left is waited out, then submitted once', async () => {
    vertex.http.inject({ on: 'submit', kind: '429-retry-after', retryAfterS: 1 });
    const prompt = `vertex retry after ${backend}`;
    const final = await settle({ model: T2V, prompt, duration: 8 });
    expect(final.status, JSON.stringify(final.error)).toBe('completed');
    expect(vertex.acceptedByPrompt.get(prompt)).toBe(1);
  });
});
