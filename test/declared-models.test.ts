/**
 * Models the operator declares (MEDIAGATE_MODELS_FILE, docs/guides/models.md), seen from
 * outside: the file checked whole (JSON paths, exit 78, `mediagate models check`), a declared
 * model validated with the built-ins' codes and precedence, created, polled, downloaded (the
 * sandbox honours duration, resolution, aspect ratio and size), priced, listed, deprecated and
 * retired on an injected clock, and routed to a channel; on each store.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODELS, ModelsConfigError, declareModels, parseModelsFile } from '../src/catalog/index.js';
import { ADAPTERS } from '../src/channels/protocols/index.js';
import { createTargetCheck } from '../src/channels/targets.js';
import { parsePricing } from '../src/billing/index.js';
import { ChannelsConfigError, loadChannelsConfig, parseChannelsConfig } from '../src/channels/config.js';
import { eventually } from './helpers/eventually.js';
import { createTestDatabase, selectedBackends, type TestDatabase } from './helpers/postgres.js';
import { probe } from './helpers/probe.js';
import { startServer, TEST_KEYS, type TestServer } from './helpers/server.js';
import { CLI } from './helpers/process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const VEO = 'google/veo-3.1';
const FAST = 'google/veo-3.1-fast';
const POSTER = 'acme/poster-xl';
const DEPRECATED_AT = Date.parse('2027-01-15T00:00:00Z');
const RETIRES_AT = Date.parse('2027-03-01T00:00:00Z');

const FILE = {
  models: [
    {
      id: VEO,
      kind: 'video',
      summary: 'Veo 3.1: text or a first frame to video, with sound.',
      display_name: 'Veo 3.1 (Vertex)',
      description: 'Google Veo 3.1 through Vertex AI: a clip from the prompt, or from a first frame and an optional last one, with generated sound.',
      params: {
        prompt: { type: 'string', required: true, max_length: 4000 },
        duration: { type: 'integer', enum: [4, 6, 8], default: 8 },
        resolution: { type: 'string', enum: ['720p', '1080p', '4k'], default: '720p' },
        aspect_ratio: { type: 'string', enum: ['16:9', '9:16'], default: '16:9' },
        image: { type: 'media', media: 'image' },
        end_image: { type: 'media', media: 'image', requires: ['image'] },
        images: { type: 'media[]', media: 'image', max_items: 3 },
        negative_prompt: { type: 'string', max_length: 2000 },
        seed: { type: 'integer', minimum: 0, maximum: 4294967295 },
        audio_enable: { type: 'boolean', default: true },
        person_generation: { type: 'string', enum: ['allow_adult', 'dont_allow'] },
      },
      lifecycle: { deprecated_at: '2027-01-15T00:00:00Z', retires_at: '2027-03-01T00:00:00Z', successor: FAST },
    },
    {
      id: FAST,
      kind: 'video',
      summary: 'Veo 3.1 Fast.',
      params: { prompt: { type: 'string', required: true }, duration: { type: 'integer', enum: [4, 6, 8], default: 4 } },
    },
    {
      id: POSTER,
      kind: 'image',
      summary: 'Posters up to 2048 px a side.',
      params: {
        prompt: { type: 'string', required: true },
        size: { type: 'size', min_side: 256, max_side: 2048, default: '1024x1024' },
        seed: { type: 'integer', minimum: 0, maximum: 2147483647 },
      },
    },
  ],
};

const BAD = {
  models: [
    { id: 'vendora/famw-2.7-t2v', kind: 'video', summary: 'x', params: { prompt: { type: 'text' } } },
    {
      id: 'acme/a',
      kind: 'video',
      summary: 'x',
      params: { duration: { type: 'integer', enum: [4, 6], default: 5 }, seed: { type: 'integer', minimum: 0, maximum: 9, default: 10 } },
      lifecycle: { deprecated_at: '15 Jan 2027', successor: 'acme/nope' },
    },
    { id: 'acme/a', kind: 'video', summary: 'x', params: {}, lifecycle: { deprecated_at: '2027-03-01T00:00:00Z', retires_at: '2027-01-01T00:00:00Z' } },
  ],
};
const BAD_FAULTS = [
  "models[0].id: 'vendora/famw-2.7-t2v' is a built-in model",
  'models[0].params.prompt.type: unknown type "text"',
  'models[1].params.duration.default: 5 is not in its enum',
  'models[1].params.seed.default: 10 is outside its range',
  'models[1].lifecycle.deprecated_at: must be an RFC 3339 date-time',
  "models[1].lifecycle.successor: 'acme/nope' is neither a built-in nor a declared model",
  "models[2].id: 'acme/a' is declared twice",
  'models[2].lifecycle.retires_at: is before deprecated_at',
];

const PRICING = { currency: 'USD', models: { [VEO]: { per_task: 0.05, per_second: { '720p': 0.1, '*': 0.2 } }, [POSTER]: { per_image: 0.03 } } };

interface Ran {
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number;
}

async function run(args: readonly string[], env: Record<string, string>): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: ROOT, env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env }, timeout: 30_000 },
      (error, stdout, stderr) => resolve({ stdout, stderr, code: error ? (typeof error.code === 'number' ? error.code : 1) : 0 }),
    );
  });
}

let dir: string;
let good: string;
let bad: string;
let pricing: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mediagate-models-'));
  good = join(dir, 'models.json');
  bad = join(dir, 'bad.json');
  pricing = join(dir, 'pricing.json');
  await writeFile(good, JSON.stringify(FILE));
  await writeFile(bad, JSON.stringify(BAD));
  await writeFile(pricing, JSON.stringify(PRICING));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

function faultsOf(text: string): readonly string[] {
  try {
    parseModelsFile(text, MODELS);
  } catch (error) {
    if (error instanceof ModelsConfigError) return error.faults;
    throw error;
  }
  return [];
}

describe('the models file', () => {
  it('a good file: one row per model, in the same shape as a built-in row', () => {
    const rows = parseModelsFile(JSON.stringify(FILE), MODELS);
    expect(rows.map((row) => [row.id, row.kind])).toEqual([
      [VEO, 'video'],
      [FAST, 'video'],
      [POSTER, 'image'],
    ]);
    expect(rows[0]).toMatchObject({ duration: { min: 4, max: 8 }, resolution: { values: ['720p', '1080p', '4k'], default: '720p' } });
    expect(rows[2]).toMatchObject({ side: { min: 256, max: 2048 }, defaults: { width: 1024, height: 1024 } });
  });

  it('a bad file: every fault, each with its JSON path', () => {
    const faults = faultsOf(JSON.stringify(BAD));
    for (const expected of BAD_FAULTS)
      expect(
        faults.some((fault) => fault.startsWith(expected)),
        `${expected} in\n${faults.join('\n')}`,
      ).toBe(true);
  });

  it.each([
    ['not JSON', '{', '(file): not valid JSON'],
    ['no models', '{"model": []}', 'model: unknown field'],
    [
      'a media default',
      JSON.stringify({ models: [{ id: 'a', kind: 'video', summary: 's', params: { image: { type: 'media', default: 'x' } } }] }),
      'models[0].params.image.default',
    ],
    [
      'a meaningful name of another type',
      JSON.stringify({ models: [{ id: 'a', kind: 'video', summary: 's', params: { duration: { type: 'string' } } }] }),
      'models[0].params.duration.type',
    ],
    [
      'requires an unknown name',
      JSON.stringify({ models: [{ id: 'a', kind: 'video', summary: 's', params: { end_image: { type: 'media', requires: ['image'] } } }] }),
      'models[0].params.end_image.requires[0]',
    ],
    ['a bad id', JSON.stringify({ models: [{ id: 'a b', kind: 'video', summary: 's', params: {} }] }), 'models[0].id'],
    ['an unknown kind', JSON.stringify({ models: [{ id: 'a', kind: 'audio', summary: 's', params: {} }] }), 'models[0].kind'],
    [
      'a display name of two lines',
      JSON.stringify({ models: [{ id: 'a', kind: 'video', summary: 's', display_name: 'A\nB', params: {} }] }),
      'models[0].display_name',
    ],
    ['an empty display name', JSON.stringify({ models: [{ id: 'a', kind: 'video', summary: 's', display_name: ' ', params: {} }] }), 'models[0].display_name'],
    [
      'a description of two paragraphs',
      JSON.stringify({ models: [{ id: 'a', kind: 'video', summary: 's', description: 'One.\n\nTwo.', params: {} }] }),
      'models[0].description',
    ],
    ['a description not text', JSON.stringify({ models: [{ id: 'a', kind: 'video', summary: 's', description: 7, params: {} }] }), 'models[0].description'],
    [
      'a default outside its sides',
      JSON.stringify({ models: [{ id: 'a', kind: 'image', summary: 's', params: { size: { type: 'size', max_side: 512, default: '1024x1024' } } }] }),
      'models[0].params.size.default',
    ],
  ])('%s', (_name, text, path) => {
    expect(
      faultsOf(text).some((fault) => fault.startsWith(path)),
      faultsOf(text).join('\n'),
    ).toBe(true);
  });

  it('`mediagate models check` a good file: exit 0 and a table of the declared models', async () => {
    const ran = await run(['models', 'check', good], {});
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(`${good}: OK (3 declared model(s))`);
    expect(ran.stdout).toMatch(/google\/veo-3\.1\s+Veo 3\.1 \(Vertex\)\s+video\s+prompt, duration/);
    // No display_name in the file: the one the listing will derive from the id.
    expect(ran.stdout).toMatch(/acme\/poster-xl\s+Poster Xl\s+image\s+prompt, size, seed/);
  });

  it('`mediagate models check` a bad file (or MEDIAGATE_MODELS_FILE): exit 78 and every fault', async () => {
    for (const ran of [await run(['models', 'check', bad], {}), await run(['models', 'check'], { MEDIAGATE_MODELS_FILE: bad })]) {
      expect(ran.code).toBe(78);
      for (const expected of BAD_FAULTS) expect(ran.stderr).toContain(expected);
    }
  });

  it('`mediagate serve` with a bad file exits 78 before it listens', async () => {
    const ran = await run(['serve'], { MEDIAGATE_MODELS_FILE: bad, PORT: '0', MEDIAGATE_DATA_DIR: join(dir, 'never') });
    expect(ran.code).toBe(78);
    expect(ran.stderr).toContain('MEDIAGATE_MODELS_FILE is invalid');
  });

  it('the pricing and channels files may name declared ids; `channels check` knows them', async () => {
    const channels = join(dir, 'channels.json');
    await writeFile(
      channels,
      JSON.stringify({
        channels: { veo: { protocol: 'mediagate', base_url: 'https://veo.example', api_key_env: 'VEO_KEY' } },
        routes: [{ model: VEO, to: [{ channel: 'veo' }] }],
      }),
    );
    const env = { MEDIAGATE_MODELS_FILE: good, MEDIAGATE_CHANNELS_FILE: channels, VEO_KEY: 'k' };
    const checked = await run(['channels', 'check'], env);
    expect(checked.code, checked.stderr).toBe(0);
    expect(checked.stdout).toContain(VEO);
    const without = await run(['channels', 'check'], { MEDIAGATE_CHANNELS_FILE: channels, VEO_KEY: 'k' });
    expect(without.code).toBe(78);
    const priced = await run(['pricing', 'check', pricing], { MEDIAGATE_MODELS_FILE: good });
    expect(priced.code, priced.stderr).toBe(0);
    expect(priced.stdout).toMatch(/acme\/poster-xl\s+image\s+USD 0\.03\/image/);
    expect((await run(['pricing', 'check', pricing], {})).code).toBe(78);
    expect(() => loadChannelsConfig(channels, { VEO_KEY: 'k' }, MODELS)).toThrow(ChannelsConfigError);
  });

  it("the guide's examples are valid: its models file, pricing file and channels file", () => {
    const guide = readFileSync(join(ROOT, 'docs/guides/models.md'), 'utf8');
    const blocks = [...guide.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
    const [models, prices, routes] = [
      blocks.find((b) => b.includes('"models": [')),
      blocks.find((b) => b.includes('"currency"')),
      blocks.find((b) => b.includes('"routes"')),
    ];
    const rows = parseModelsFile(models ?? '', MODELS);
    expect(rows.map((row) => row.id)).toEqual([VEO, FAST, POSTER]);
    expect(parsePricing(prices ?? '', [...MODELS, ...rows]).models.size).toBe(3);
    const config = parseChannelsConfig(routes ?? '', { FAL_KEY: 'k' }, [...MODELS, ...rows]);
    expect(config.targetsFor(VEO)[0]).toMatchObject({ channel: 'fal' });
  });

  it('a route whose adapter has no field for a declared parameter refuses it at create, naming it', async () => {
    const rows = parseModelsFile(JSON.stringify(FILE), MODELS);
    declareModels(rows);
    const path = join(dir, 'dashscope.json');
    await writeFile(
      path,
      JSON.stringify({
        channels: { wan: { protocol: 'dashscope', base_url: 'https://dashscope-intl.aliyuncs.com', api_key_env: 'WAN_KEY' } },
        routes: [{ model: VEO, to: [{ channel: 'wan', upstream_model: 'veo-like' }] }],
      }),
    );
    const check = createTargetCheck(loadChannelsConfig(path, { WAN_KEY: 'k' }, [...MODELS, ...rows]), ADAPTERS);
    const base = { model: VEO, prompt: 'p', duration: 8, resolution: '720p', aspect_ratio: '16:9', audio_enable: true };
    expect(check(VEO, 'video', { ...base, person_generation: 'dont_allow' })).toMatchObject({ param: 'person_generation' });
    expect(check(VEO, 'video', base)?.param).not.toBe('person_generation');
    declareModels([]);
  });
});

/** The PNG's width and height, from its IHDR chunk. */
const pngSize = (png: Buffer): [number, number] => [png.readUInt32BE(16), png.readUInt32BE(20)];

describe.each(selectedBackends())('a declared model on %s', (backend) => {
  let server: TestServer;
  let database: TestDatabase | undefined;
  let nowMs = Date.parse('2026-12-01T00:00:00Z');
  const [key] = TEST_KEYS;
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const post = (path: string, body: unknown) => fetch(`${server.url}${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
  const get = (path: string) => fetch(`${server.url}${path}`, { headers: auth });
  const json = async (response: Response) => (await response.json()) as Record<string, unknown>;

  beforeAll(async () => {
    database = backend === 'postgres' ? await createTestDatabase() : undefined;
    server = await startServer(
      { MEDIAGATE_MODELS_FILE: good, MEDIAGATE_PRICING_FILE: pricing, ...(database ? { DATABASE_URL: database.url } : {}) },
      { now: () => nowMs },
    );
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  const waitFinal = async (path: string) =>
    eventually(
      async () => {
        const body = await json(await get(path));
        const status = (body['data'] as Record<string, unknown> | undefined)?.['status'] ?? body['status'];
        return status === 'completed' || status === 'SUCCESS' || status === 'failed' || status === 'FAILURE' ? body : undefined;
      },
      { deadline: 60_000, interval: 200, what: `${path} final` },
    );

  it('is listed like a built-in: description, JSON Schema, price, lifecycle', async () => {
    const list = await json(await get('/v1/models'));
    const ids = (list['data'] as { id: string }[]).map((model) => model.id);
    expect(ids).toContain(VEO);
    expect(ids).toContain(POSTER);
    expect(ids).toContain('vendora/famw-2.7-t2v');
    const veo = await json(await get(`/v1/models/${VEO}`));
    expect(veo).toMatchObject({
      id: VEO,
      kind: 'video',
      endpoint: '/v1/video/generations',
      display_name: 'Veo 3.1 (Vertex)',
      family: 'google',
      summary: 'Veo 3.1: text or a first frame to video, with sound.',
      pricing: { currency: 'USD', per_task: 0.05 },
      lifecycle: { deprecated: false, deprecated_at: '2027-01-15T00:00:00Z', retires_at: '2027-03-01T00:00:00Z', successor: FAST },
    });
    const schema = veo['schema'] as { properties: Record<string, Record<string, unknown>>; required: string[] };
    expect(schema.required).toEqual(['model', 'prompt']);
    expect(schema.properties['duration']).toMatchObject({ type: 'integer', enum: [4, 6, 8], default: 8 });
    expect(schema.properties['person_generation']).toMatchObject({ enum: ['allow_adult', 'dont_allow'] });
    // The operator's paragraph, then (no channel routes it here) that the sandbox renders it.
    expect(veo['description']).toMatch(/^Google Veo 3\.1 through Vertex AI: .* rendered locally by the sandbox engine/);
    const fast = await json(await get(`/v1/models/${FAST}`));
    expect(fast['lifecycle']).toBeUndefined();
    // Without display_name and description: a name from the id, the summary as the paragraph.
    expect(fast).toMatchObject({ display_name: 'Veo 3.1 Fast', description: expect.stringMatching(/^Veo 3\.1 Fast\. On this deployment/) as unknown });
    const openapi = await (await fetch(`${server.url}/openapi.json`)).text();
    expect(openapi).toContain('VideoRequest_google_veo_3_1"');
    expect(openapi).toContain('ImageRequest_acme_poster_xl');
    expect(openapi).toContain(`request: ${VEO}"`);
  });

  it.each([
    ['unknown parameter first', { model: VEO, prompt: 'p', colour: 'red', duration: 'x' }, 'unsupported_parameter', 'colour'],
    ['missing prompt', { model: VEO, duration: 4 }, 'missing_parameter', 'prompt'],
    ['missing before type', { model: VEO, duration: 'four' }, 'missing_parameter', 'prompt'],
    ['a string for an integer', { model: VEO, prompt: 'p', duration: '4' }, 'invalid_parameter', 'duration'],
    ['a non-integer', { model: VEO, prompt: 'p', seed: 1.5 }, 'invalid_parameter', 'seed'],
    ['a blank prompt', { model: VEO, prompt: '  ' }, 'invalid_parameter', 'prompt'],
    ['a bad media string', { model: VEO, prompt: 'p', image: 'ftp://x' }, 'invalid_parameter', 'image'],
    ['a duration not in its enum', { model: VEO, prompt: 'p', duration: 5 }, 'unsupported_value', 'duration'],
    ['a resolution not in its enum (case-sensitive)', { model: VEO, prompt: 'p', resolution: '4K' }, 'unsupported_value', 'resolution'],
    ['a seed out of range', { model: VEO, prompt: 'p', seed: -1 }, 'unsupported_value', 'seed'],
    ['over max_length', { model: VEO, prompt: 'p', negative_prompt: 'x'.repeat(2001) }, 'unsupported_value', 'negative_prompt'],
    [
      'over max_items',
      { model: VEO, prompt: 'p', images: ['https://a.example/1.png', 'https://a.example/2.png', 'https://a.example/3.png', 'https://a.example/4.png'] },
      'unsupported_value',
      'images',
    ],
    ['requires not met', { model: VEO, prompt: 'p', end_image: 'https://a.example/e.png' }, 'missing_parameter', 'image'],
    ['media of another kind', { model: VEO, prompt: 'p', image: 'data:audio/wav;base64,AAAA' }, 'unsupported_value', 'image'],
    ['a passthrough value outside its enum', { model: VEO, prompt: 'p', person_generation: 'everyone' }, 'unsupported_value', 'person_generation'],
    ['an image model on the video path', { model: POSTER, prompt: 'p' }, 'unsupported_value', 'model'],
  ])('video: %s', async (_name, body, code, param) => {
    const response = await post('/v1/video/generations', body);
    expect(response.status).toBe(400);
    expect((await json(response))['error']).toMatchObject({ type: 'invalid_request_error', code, param });
  });

  it.each([
    ['a malformed size', { model: POSTER, prompt: 'p', size: '1024' }, 'invalid_parameter', 'size'],
    ['a size out of its sides', { model: POSTER, prompt: 'p', size: '4096x1024' }, 'unsupported_value', 'size'],
    ['width is not a parameter of it', { model: POSTER, prompt: 'p', width: 512 }, 'unsupported_parameter', 'width'],
    ['a video model on the image path', { model: VEO, prompt: 'p' }, 'unsupported_value', 'model'],
  ])('image: %s', async (_name, body, code, param) => {
    const response = await post('/v1/images/generations/async', body);
    expect(response.status).toBe(400);
    expect(await json(response)).toMatchObject({ code, data: null });
    expect(((await json(await post('/v1/images/generations/async', body)))['message'] as string).length).toBeGreaterThan(0);
    void param;
  });

  it('a video: created, polled, downloaded at the requested duration, resolution and aspect ratio, priced', async () => {
    const created = await post('/v1/video/generations', { model: VEO, prompt: 'a lighthouse at dusk', duration: 4, aspect_ratio: '9:16' });
    expect(created.status).toBe(200);
    expect(created.headers.get('deprecation')).toBeNull();
    const task = await json(created);
    const done = await waitFinal(`/v1/video/generations/${String(task['id'])}`);
    expect(done['status'], JSON.stringify(done['error'])).toBe('completed');
    const url = (done['outputs'] as { url: string }[])[0]?.url ?? '';
    const media = await probe(url);
    expect(Math.abs(media.duration - 4)).toBeLessThan(0.15);
    expect(media.video).toMatchObject({ width: 720, height: 1280, codec: 'h264' });
    expect(media.audio).toBeDefined();
    expect(done['usage']).toMatchObject({ seconds: 4, cost: 0.45, currency: 'USD' });
  }, 90_000);

  it('an image: created, polled, downloaded as a PNG of the requested size, priced', async () => {
    const created = await json(await post('/v1/images/generations/async', { model: POSTER, prompt: 'a poster', size: '512x768' }));
    expect(created['code']).toBe('success');
    const id = String((created['data'] as Record<string, unknown>)['task_id']);
    const done = await waitFinal(`/v1/images/generations/async/${id}`);
    const data = done['data'] as Record<string, unknown>;
    expect(data['status']).toBe('SUCCESS');
    const outputs = data['outputs'] as string[];
    const png = Buffer.from(await (await fetch(outputs[0] ?? '')).arrayBuffer());
    expect(pngSize(png)).toEqual([512, 768]);
    expect(JSON.stringify(data)).toContain('0.03');
  }, 90_000);

  it('deprecated, then retired, as the clock passes its dates (no restart)', async () => {
    const before = await json(await post('/v1/video/generations', { model: VEO, prompt: 'kept', duration: 4 }));
    nowMs = DEPRECATED_AT + 1000;
    const deprecated = await post('/v1/video/generations', { model: VEO, prompt: 'still served', duration: 4 });
    expect(deprecated.status).toBe(200);
    expect(deprecated.headers.get('deprecation')).toBe(`@${DEPRECATED_AT / 1000}`);
    expect(deprecated.headers.get('sunset')).toBe('Mon, 01 Mar 2027 00:00:00 GMT');
    expect(deprecated.headers.get('link')).toBe(`</v1/models/${FAST}>; rel="successor-version"`);
    expect((await json(await get(`/v1/models/${VEO}`)))['lifecycle']).toMatchObject({ deprecated: true });
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/mediagate_deprecated_model_creates_total\{model="google\/veo-3\.1"\} [1-9]/);
    // A built-in model's create carries none of it.
    const builtIn = await post('/v1/video/generations', { model: 'vendora/famw-2.7-t2v', prompt: 'p' });
    expect(builtIn.headers.get('deprecation')).toBeNull();

    nowMs = RETIRES_AT;
    const refused = await post('/v1/video/generations', { model: VEO, prompt: 'too late', duration: 4 });
    expect(refused.status).toBe(400);
    const error = (await json(refused))['error'] as Record<string, unknown>;
    expect(error).toMatchObject({ code: 'unsupported_value', param: 'model' });
    expect(error['message']).toContain(FAST);
    const ids = ((await json(await get('/v1/models')))['data'] as { id: string }[]).map((model) => model.id);
    expect(ids).not.toContain(VEO);
    expect(ids).toContain(FAST);
    expect(await (await fetch(`${server.url}/openapi.json`)).text()).not.toContain('google_veo_3_1"');
    expect(await (await fetch(`${server.url}/openapi.json`)).text()).not.toMatch(/google\/veo-3\.1(?!-fast)/);
    const retired = await get(`/v1/models/${VEO}`);
    expect(retired.status).toBe(200);
    expect((await json(retired))['lifecycle']).toMatchObject({ deprecated: true, retired: true, successor: FAST });
    const old = await get(`/v1/video/generations/${String(before['id'])}`);
    expect(old.status).toBe(200);
    expect((await json(old))['model']).toBe(VEO);
    nowMs = Date.parse('2026-12-01T00:00:00Z');
  }, 60_000);
});

describe('a declared model routed to a channel', () => {
  let upstream: TestServer;
  let gateway: TestServer;
  let recorder: Server;
  /** The create bodies the upstream received: a recording proxy sits in front of it. */
  const recorded: Record<string, unknown>[] = [];
  const UPSTREAM_ENV = 'DECLARED_UPSTREAM_KEY';

  beforeAll(async () => {
    recorder = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks);
        if (request.method === 'POST' && body.length > 0) recorded.push(JSON.parse(body.toString('utf8')) as Record<string, unknown>);
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(request.headers))
          if (typeof value === 'string' && name !== 'host' && name !== 'content-length') headers[name] = value;
        const init = { method: request.method ?? 'GET', headers, ...(body.length > 0 ? { body } : {}) };
        fetch(`${upstream.url}${request.url ?? '/'}`, init)
          .then(async (answer) => {
            response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/octet-stream' });
            response.end(Buffer.from(await answer.arrayBuffer()));
          })
          .catch(() => response.destroy());
      });
    });
    await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
    const proxyUrl = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}`;
    // Its output URLs name the proxy too: the channel fetches outputs from the origin it calls.
    upstream = await startServer({ MEDIAGATE_MODELS_FILE: good, MEDIAGATE_PUBLIC_URL: proxyUrl });
    const channels = join(dir, 'routed.json');
    await writeFile(
      channels,
      JSON.stringify({
        channels: { b: { protocol: 'mediagate', base_url: proxyUrl, api_key_env: UPSTREAM_ENV } },
        routes: [{ model: VEO, to: [{ channel: 'b' }] }],
      }),
    );
    const rows = parseModelsFile(JSON.stringify(FILE), MODELS);
    gateway = await startServer(
      { MEDIAGATE_MODELS_FILE: good },
      {
        channels: loadChannelsConfig(channels, { [UPSTREAM_ENV]: upstream.keys[0] }, [...MODELS, ...rows]),
        upstreamTimings: { pollStartMs: 100, pollMaxMs: 300, idleMs: 100 },
      },
    );
  }, 60_000);
  afterAll(async () => {
    await gateway?.close();
    await new Promise((resolve) => recorder?.close(resolve));
    await upstream?.close();
  });

  it('only routed models are offered; the task goes upstream with its passthrough parameter as declared', async () => {
    const auth = { authorization: `Bearer ${gateway.keys[0]}`, 'content-type': 'application/json' };
    const ids = ((await (await fetch(`${gateway.url}/v1/models`, { headers: auth })).json()) as { data: { id: string }[] }).data.map((m) => m.id);
    expect(ids).toEqual([VEO]);
    const created = await fetch(`${gateway.url}/v1/video/generations`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ model: VEO, prompt: 'routed', duration: 4, person_generation: 'dont_allow' }),
    });
    expect(created.status).toBe(200);
    const id = String(((await created.json()) as { id: string }).id);
    const done = await eventually(
      async () => {
        const task = (await (await fetch(`${gateway.url}/v1/video/generations/${id}`, { headers: auth })).json()) as Record<string, unknown>;
        return task['status'] === 'completed' || task['status'] === 'failed' ? task : undefined;
      },
      { deadline: 60_000, interval: 200, what: 'the routed task' },
    );
    expect(done['status'], JSON.stringify(done['error'])).toBe('completed');
    const sent = recorded.find((body) => body['model'] === VEO);
    expect(sent).toMatchObject({
      prompt: 'routed',
      person_generation: 'dont_allow',
      duration: 4,
      resolution: '720p',
      aspect_ratio: '16:9',
      audio_enable: true,
    });
  }, 90_000);
});
