// The upstream lifecycle end to end: a real mediagate routes tasks to fake upstreams over real
// HTTP (test/fakes/), and the client sees queued -> processing -> completed with our own signed
// URLs and the upstream's bytes, or a failure with the mapped code. Runs on either backend
// (MEDIAGATE_TEST_BACKEND); the split topology's child workers get no routing table, so it is
// skipped there.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseChannelsConfig, type ChannelsConfig } from '../src/channels/config.js';
import { startArkFake, type ArkFake } from './fakes/ark.js';
import { startDashscopeFake, type DashscopeFake } from './fakes/dashscope.js';
import { TINY_MP4 } from './fakes/upstream-kit.js';
import { eventually } from './helpers/eventually.js';
import { createTestDatabase, postgresAvailability, selectedBackends, type TestDatabase } from './helpers/postgres.js';
import { startServer, type TestServer } from './helpers/server.js';

const split = process.env['MEDIAGATE_TEST_TOPOLOGY'] === 'split';
const DASHSCOPE_KEY = 'sk-dashscope-test';
const ARK_KEY = 'ark-test-key';
const TIMINGS = { pollStartMs: 100, pollMaxMs: 400, leaseMs: 5_000, idleMs: 100, notFoundGraceMs: 1_000 };

let dashscope: DashscopeFake;
let ark: ArkFake;
let server: TestServer;
let upstreamMediagate: TestServer;

interface TaskBody {
  id: string;
  status: string;
  progress: number | null;
  outputs?: { type: string; url: string }[];
  error?: { code: string; message: string; param: string } | null;
  usage?: { seconds: number; images: number; cost: number; currency: string } | null;
}

function channelsFor(): ChannelsConfig {
  const text = JSON.stringify({
    channels: {
      wan: { protocol: 'dashscope', base_url: dashscope.origin, api_key_env: 'T_DASHSCOPE', timeout_s: 3 },
      seedance: { protocol: 'ark', base_url: ark.origin, api_key_env: 'T_ARK' },
      // Connection refused: a refusal before acceptance, so the route fails over.
      dead: { protocol: 'dashscope', base_url: 'http://127.0.0.1:9', api_key_env: 'T_DASHSCOPE' },
      partner: { protocol: 'mediagate', base_url: upstreamMediagate.url, api_key_env: 'T_PARTNER' },
    },
    routes: [
      { model: 'vendora/famw-2.7-t2v', to: [{ channel: 'wan', upstream_model: 'wan2.7-t2v' }] },
      { model: 'vendorb/famsd-2.0-i2v-spicy', to: [{ channel: 'seedance', upstream_model: 'seedance-2-0' }] },
      { model: 'vendora/famw-2.7-i2v', to: [{ channel: 'dead' }, { channel: 'wan', upstream_model: 'wan2.7-i2v' }] },
      {
        model: 'vendorb/famsd-2.5-i2v-spicy',
        to: [
          { channel: 'wan', upstream_model: 'wan2.7-i2v' },
          { channel: 'seedance', upstream_model: 'seedance-2-0' },
        ],
      },
      { model: 'vendorc-h3-max-turbo-image-to-video', to: [{ channel: 'dead' }, { channel: 'sandbox' }] },
      { model: 'vendora/famw-3.0-i2v-spicy', to: [{ channel: 'partner' }] },
      { model: '*', to: [{ channel: 'sandbox' }] },
    ],
  });
  return parseChannelsConfig(text, { T_DASHSCOPE: DASHSCOPE_KEY, T_ARK: ARK_KEY, T_PARTNER: upstreamMediagate.keys[0] });
}

async function create(base: TestServer, body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${base.url}/v1/video/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${base.keys[0]}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { id?: string };
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json.id ?? '';
}

async function read(base: TestServer, id: string): Promise<TaskBody> {
  const res = await fetch(`${base.url}/v1/video/generations/${id}`, { headers: { authorization: `Bearer ${base.keys[0]}` } });
  return (await res.json()) as TaskBody;
}

/** Reads the task until it settles, recording every (status, progress) seen on the way. */
async function settle(id: string, deadline = 15_000): Promise<{ final: TaskBody; seen: { status: string; progress: number | null }[] }> {
  const seen: { status: string; progress: number | null }[] = [];
  const final = await eventually(
    async () => {
      const task = await read(server, id);
      seen.push({ status: task.status, progress: task.progress });
      return task.status === 'completed' || task.status === 'failed' ? task : undefined;
    },
    { deadline, interval: 50, what: `task ${id} to settle` },
  );
  return { final, seen };
}

const IMAGE = 'https://example.com/first.png';

// On PostgreSQL the service's store is a fresh database; the upstream mediagate uses the run's default.
const BACKENDS = [...(selectedBackends().includes('sqlite') ? ['sqlite'] : []), ...((await postgresAvailability()).enabled ? ['postgres'] : [])];

describe.skipIf(split).each(BACKENDS)('upstream lifecycle through the real service (%s)', (backend) => {
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    dashscope = await startDashscopeFake({ apiKey: DASHSCOPE_KEY, queuedMs: 200, runMs: 800 });
    ark = await startArkFake({ apiKey: ARK_KEY, queuedMs: 200, runMs: 800 });
    // The upstream renders real MP4s (the sandbox engine): our copy checks them by their bytes.
    upstreamMediagate = await startServer();
    if (backend === 'postgres' && process.env['MEDIAGATE_TEST_BACKEND'] !== 'postgres') database = await createTestDatabase();
    const env = { MEDIAGATE_ENGINE: 'instant', ...(database ? { DATABASE_URL: database.url } : {}) };
    server = await startServer(env, { channels: channelsFor(), upstreamTimings: TIMINGS, upstreamRequestTimeoutMs: 2_000 });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await database?.drop();
    await upstreamMediagate?.close();
    await dashscope?.close();
    await ark?.close();
  });

  it("dashscope: queued -> processing -> completed, progress never back, output bytes the upstream's, our URL", async () => {
    const id = await create(server, { model: 'vendora/famw-2.7-t2v', prompt: 'a calm lake e2e-ds-1' });
    const { final, seen } = await settle(id);
    expect(final.status).toBe('completed');
    expect(final.progress).toBe(100);
    expect(seen[0]?.status).toBe('queued');
    expect(seen.some((s) => s.status === 'processing')).toBe(true);
    const progresses = seen.map((s) => s.progress ?? 0);
    for (let i = 1; i < progresses.length; i += 1) expect(progresses[i]).toBeGreaterThanOrEqual(progresses[i - 1]!);
    expect(seen.filter((s) => s.status !== 'completed').every((s) => (s.progress ?? 0) <= 99)).toBe(true);
    const url = final.outputs?.[0]?.url ?? '';
    expect(new URL(url).origin).toBe(new URL(server.url).origin);
    const bytes = Buffer.from(await (await fetch(url)).arrayBuffer());
    expect(bytes.equals(TINY_MP4)).toBe(true);
    // Billed from our copy of the delivered file (1 s), not from the requested duration (the default, 5 s).
    expect(final.usage).toEqual({ seconds: 1, images: 0, cost: 0, currency: 'USD' });
    expect(dashscope.acceptedByPrompt.get('a calm lake e2e-ds-1')).toBe(1);
  });

  it('ark: an i2v task completes with the upstream bytes', async () => {
    const id = await create(server, { model: 'vendorb/famsd-2.0-i2v-spicy', prompt: 'a red kite e2e-ark-1', image: IMAGE });
    const { final } = await settle(id);
    expect(final.status, JSON.stringify(final.error)).toBe('completed');
    const bytes = Buffer.from(await (await fetch(final.outputs?.[0]?.url ?? '')).arrayBuffer());
    expect(bytes.equals(TINY_MP4)).toBe(true);
    expect(ark.acceptedByPrompt.get('a red kite e2e-ark-1')).toBe(1);
  });

  it('mediagate: a second real mediagate as upstream; our bytes equal its output', async () => {
    const png = await sharp({ create: { width: 512, height: 512, channels: 3, background: '#3366aa' } })
      .png()
      .toBuffer();
    const image = `data:image/png;base64,${png.toString('base64')}`;
    const id = await create(server, { model: 'vendora/famw-3.0-i2v-spicy', prompt: 'a lighthouse e2e-mg-1', image });
    // A sandbox render of this size may finish between two polls: only the outcome is asserted.
    const { final } = await settle(id, 60_000);
    expect(final.status, JSON.stringify(final.error)).toBe('completed');
    const ours = Buffer.from(await (await fetch(final.outputs?.[0]?.url ?? '')).arrayBuffer());
    expect(ours.subarray(4, 8).toString('latin1')).toBe('ftyp');
    // The upstream's one output file, as it stored it: the same bytes.
    const outputs = join(upstreamMediagate.dataDir, 'outputs');
    const files = (await readdir(outputs, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile());
    expect(files).toHaveLength(1);
    const theirs = await readFile(join(files[0]!.parentPath, files[0]!.name));
    expect(theirs.equals(ours)).toBe(true);
  }, 90_000);

  it.each([
    ['[fake:fail]', 'upstream_error'],
    ['[fake:moderation]', 'content_policy_violation'],
    ['[fake:moderation-early]', 'content_policy_violation'],
    ['[fake:invalid]', 'upstream_error'],
    ['[fake:not-media]', 'output_invalid'],
    ['[fake:missing-output]', 'output_invalid'],
    ['[fake:stuck]', 'upstream_timeout'],
    ['[fake:forget]', 'upstream_error'],
    ['[fake:lose-answer]', 'upstream_submission_unknown'],
  ])('dashscope %s fails the task with %s, one submission', async (marker, code) => {
    const prompt = `a failing case ${marker} ${code}`;
    const id = await create(server, { model: 'vendora/famw-2.7-t2v', prompt });
    const { final } = await settle(id);
    expect(final.status).toBe('failed');
    expect(final.error?.code).toBe(code);
    expect(final.error?.message).not.toContain(DASHSCOPE_KEY);
    expect(final.error?.message).not.toContain('127.0.0.1');
    expect(dashscope.acceptedByPrompt.get(prompt) ?? 0).toBeLessThanOrEqual(1);
  });

  it('fails over to the next target when the first refuses before acceptance', async () => {
    const id = await create(server, { model: 'vendora/famw-2.7-i2v', prompt: 'failover e2e-fo-1', image: IMAGE });
    const { final } = await settle(id);
    expect(final.status, JSON.stringify(final.error)).toBe('completed');
    expect(dashscope.acceptedByPrompt.get('failover e2e-fo-1')).toBe(1);
  });

  it.each(['429', '500'] as const)('fails over to the next target on a %s before acceptance', async (fault) => {
    dashscope.http.inject({ on: 'submit', kind: fault });
    const prompt = `failover on ${fault} ${backend}`;
    const id = await create(server, { model: 'vendorb/famsd-2.5-i2v-spicy', prompt, image: IMAGE });
    const { final } = await settle(id);
    expect(final.status, JSON.stringify(final.error)).toBe('completed');
    expect(dashscope.acceptedByPrompt.get(prompt) ?? 0).toBe(0);
    expect(ark.acceptedByPrompt.get(prompt)).toBe(1);
  });

  it('fails over to the sandbox when the first target refuses', async () => {
    const id = await create(server, { model: 'vendorc-h3-max-turbo-image-to-video', prompt: 'to sandbox', image: IMAGE });
    const { final } = await settle(id);
    expect(final.status, JSON.stringify(final.error)).toBe('completed');
  });

  it('waits out a 429 with Retry-After when no target is left, then submits once more', async () => {
    dashscope.http.inject({ on: 'submit', kind: '429-retry-after', retryAfterS: 1 });
    const prompt = `retry after e2e-ra-1 ${backend}`;
    const id = await create(server, { model: 'vendora/famw-2.7-t2v', prompt });
    const { final } = await settle(id);
    expect(final.status, JSON.stringify(final.error)).toBe('completed');
    expect(dashscope.acceptedByPrompt.get(prompt)).toBe(1);
  });

  it('a task of a model routed to the sandbox still renders here', async () => {
    const id = await create(server, { model: 'vendord/v6/image-to-video', prompt: 'local', image: IMAGE });
    const { final } = await settle(id);
    expect(final.status, JSON.stringify(final.error)).toBe('completed');
  });
});
