// Target profiles at create and in the channels file (docs/channels.md "Target profiles"): a
// parameter the route's first target cannot express is a 400 `unsupported_value` naming it,
// before the task exists and before any upstream call; a profile declared in the channels file
// is checked at start, every fault with its JSON path, and then governs what is sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChannelsConfigError, parseChannelsConfig } from '../src/channels/config.js';
import { startFalFake, type FalFake } from './fakes/fal.js';
import { eventually } from './helpers/eventually.js';
import { startServer, type TestServer } from './helpers/server.js';

const KEY = 'fal-key';
let fal: FalFake;
let server: TestServer;

const file = (origin: string, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({
    channels: { fal: { protocol: 'fal', base_url: origin, api_key_env: 'T_FAL' } },
    routes: [
      { model: 'vendorb/famsd-2.0-i2v-spicy', to: [{ channel: 'fal', upstream_model: 'fal-ai/kling-video/v2.1/pro/image-to-video' }] },
      {
        model: 'vendora/famw-2.7-i2v',
        to: [
          {
            channel: 'fal',
            upstream_model: 'acme/wan-i2v',
            profile: {
              source: 'https://fal.ai/models/acme/wan-i2v/api',
              inputs: {
                prompt: { field: 'prompt', type: 'string' },
                image: { field: 'start_image_url', type: 'media' },
                duration: { field: 'num_seconds', type: 'string', values: ['5', '8'] },
                resolution: { refuse: 'renders 720p only', accept: ['720p'] },
                end_image: null,
              },
            },
            ...extra,
          },
        ],
      },
      { model: '*', to: [{ channel: 'sandbox' }] },
    ],
  });

beforeAll(async () => {
  fal = await startFalFake({ apiKey: KEY, queuedMs: 0, runMs: 0 });
  server = await startServer({ MEDIAGATE_ENGINE: 'instant' }, { channels: parseChannelsConfig(file(fal.origin), { T_FAL: KEY }) });
});
afterAll(async () => {
  await server?.close();
  await fal?.close();
});

async function create(body: Record<string, unknown>): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${server.url}/v1/video/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.keys[0]}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe('at create, the route target decides what it can take', () => {
  it('a value the target cannot express is 400 unsupported_value naming it, and nothing is sent upstream', async () => {
    const before = fal.http.stats.requests;
    const refused = await create({ model: 'vendorb/famsd-2.0-i2v-spicy', prompt: 'x', image: 'https://img.example/a.png' });
    expect(refused.status).toBe(400);
    // The request left resolution out: the 720p refused is the model's default, and the message says so.
    expect(refused.json['error']).toMatchObject({
      code: 'unsupported_value',
      param: 'resolution',
      message: expect.stringMatching(/1080p.*"720p" is the default of vendorb\/famsd-2\.0-i2v-spicy/),
    });
    const seven = await create({ model: 'vendorb/famsd-2.0-i2v-spicy', prompt: 'x', image: 'https://img.example/a.png', resolution: '1080p', duration: 7 });
    expect(seven.json['error']).toMatchObject({ code: 'unsupported_value', param: 'duration' });
    expect(fal.http.stats.requests).toBe(before);
  });

  it('a request the target can take is created and completes, its duration sent as the string the endpoint declares', async () => {
    const created = await create({ model: 'vendorb/famsd-2.0-i2v-spicy', prompt: 'kling at create', image: 'https://img.example/a.png', resolution: '1080p' });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const id = String(created.json['id']);
    await eventually(
      async () => {
        const res = await fetch(`${server.url}/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${server.keys[0]}` } });
        return ((await res.json()) as { status: string }).status === 'completed';
      },
      { deadline: 20_000, interval: 50, what: 'the task to complete' },
    );
    const task = [...fal.book.tasks.values()].find((candidate) => candidate.prompt === 'kling at create');
    expect(task?.body).toEqual({ prompt: 'kling at create', image_url: 'https://img.example/a.png', duration: '5' });
  });

  it('a profile declared in the channels file: its fields and types are what is sent; what it refuses is a 400', async () => {
    const refused = await create({ model: 'vendora/famw-2.7-i2v', prompt: 'x', image: 'https://img.example/a.png', end_image: 'https://img.example/b.png' });
    expect(refused.json['error']).toMatchObject({ code: 'unsupported_value', param: 'end_image' });
    const created = await create({ model: 'vendora/famw-2.7-i2v', prompt: 'declared', image: 'https://img.example/a.png', duration: 8 });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    await eventually(() => [...fal.book.tasks.values()].some((task) => task.prompt === 'declared'), { deadline: 10_000, interval: 20, what: 'the submission' });
    const task = [...fal.book.tasks.values()].find((candidate) => candidate.prompt === 'declared');
    expect(task?.body).toEqual({ prompt: 'declared', start_image_url: 'https://img.example/a.png', num_seconds: '8' });
  });
});

describe('a declared profile is checked at start', () => {
  it('every fault with its JSON path', () => {
    const bad = JSON.parse(file('https://queue.fal.run')) as { routes: { to: Record<string, unknown>[] }[] };
    const target = bad.routes[1]?.to[0];
    if (!target) throw new Error('no target');
    target['profile'] = {
      inputs: { duration: { field: 'num seconds', type: 'text', values: 'five' }, image: { refuse: 3, field: 'x' } },
      pixels: { min: 0, max: 1 },
      colour: 'blue',
    };
    let faults: readonly string[] = [];
    try {
      parseChannelsConfig(JSON.stringify(bad), { T_FAL: KEY });
    } catch (err) {
      if (!(err instanceof ChannelsConfigError)) throw err;
      faults = err.faults;
      expect(err.exitCode).toBe(78);
    }
    const at = 'routes[1].to[0].profile';
    expect(faults).toEqual(
      expect.arrayContaining([
        `${at}.colour: unknown field`,
        expect.stringMatching(new RegExp(`^${at.replace(/[[\].]/g, '\\$&')}\\.inputs\\.duration\\.field: `)),
        expect.stringMatching(/inputs\.duration\.type: must be one of/),
        expect.stringMatching(/inputs\.duration\.values: must be an array/),
        expect.stringMatching(/inputs\.image\.refuse: must be the reason/),
        expect.stringMatching(/inputs\.image\.field: a refused input takes only "accept"/),
        expect.stringMatching(/profile\.pixels: must be/),
      ]),
    );
  });
});
