/**
 * The operator-facing wiring of channels: MEDIAGATE_CHANNELS_FILE read once at start
 * (exit 78 with JSON paths), routed models as the only ones clients see, channel keys redacted
 * from logs, `mediagate channels check [--probe]` against real fakes, and the per-channel
 * metric series.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODELS } from '../src/catalog/index.js';
import { ChannelsConfigError, loadChannelsConfig, routedModels } from '../src/channels/config.js';
import { loadConfig } from '../src/config.js';
import { createMetrics } from '../src/http/metrics/metrics.js';
import { createMediagate } from '../src/service-factory.js';
import { startArkFake, type ArkFake } from './fakes/ark.js';
import { startDashscopeFake, type DashscopeFake } from './fakes/dashscope.js';
import { startReplicateFake, type ReplicateFake } from './fakes/replicate.js';
import { CLI } from './helpers/process.js';
import { startServer, type TestServer } from './helpers/server.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;

interface Ran {
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number;
}

/** The CLI as built, or a fixture script from the sources, with exactly `env` on top of PATH and HOME. */
async function run(args: readonly string[], env: Record<string, string>, fixture?: string): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      fixture === undefined ? [CLI, ...args] : ['--import', TSX, join(ROOT, fixture), ...args],
      { cwd: ROOT, env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env }, timeout: 30_000 },
      (error, stdout, stderr) => resolve({ stdout, stderr, code: error ? (typeof error.code === 'number' ? error.code : 1) : 0 }),
    );
  });
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mediagate-wiring-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

async function channelsFile(name: string, doc: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, typeof doc === 'string' ? doc : JSON.stringify(doc));
  return path;
}

const BAD = {
  channels: { wan: { protocol: 'dashscope', base_url: 'https://dashscope-intl.aliyuncs.com', api_key_env: 'WIRING_UNSET_KEY', poll_per_s: -1 } },
  routes: [{ model: 'vendora/famw-2.7-t2v', to: [{ channel: 'partner' }] }],
};
const BAD_FAULTS = ['channels.wan.poll_per_s', 'channels.wan.api_key_env', 'routes[0].to[0].channel'];

describe('MEDIAGATE_CHANNELS_FILE in config', () => {
  it('unset: no file, every catalog model routed to the sandbox', () => {
    const config = loadConfig({});
    expect(config.channelsFile).toBeUndefined();
    const channels = loadChannelsConfig(config.channelsFile, {});
    for (const row of MODELS) expect(channels.targetsFor(row.id)).toEqual([{ channel: 'sandbox', upstreamModel: row.id }]);
  });

  it('an absolute path; loaded with the same environment, the key comes from the variable the file names', async () => {
    const path = await channelsFile('good.json', {
      channels: { wan: { protocol: 'dashscope', base_url: 'https://dashscope-intl.aliyuncs.com', api_key_env: 'WIRING_KEY' } },
      routes: [{ model: 'vendora/famw-2.7-t2v', to: [{ channel: 'wan', upstream_model: 'wan2.7-t2v' }] }],
    });
    const env = { MEDIAGATE_CHANNELS_FILE: relative(process.cwd(), path), WIRING_KEY: 'sk-wiring-secret-1' };
    const config = loadConfig(env);
    expect(config.channelsFile).toBe(path);
    const channels = loadChannelsConfig(config.channelsFile, env);
    expect(channels.channels.get('wan')).toMatchObject({ apiKey: 'sk-wiring-secret-1', apiKeyEnv: 'WIRING_KEY' });
    expect(channels.secrets).toEqual(['sk-wiring-secret-1']);
    expect(routedModels(channels).map((row) => row.id)).toEqual(['vendora/famw-2.7-t2v']);
  });

  it('a fault throws ChannelsConfigError naming each JSON path at fault', async () => {
    const path = await channelsFile('bad-unit.json', BAD);
    let caught: unknown;
    try {
      loadChannelsConfig(loadConfig({ MEDIAGATE_CHANNELS_FILE: path }).channelsFile, {});
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ChannelsConfigError);
    const faults = (caught as ChannelsConfigError).faults;
    for (const at of BAD_FAULTS) expect(faults.some((line) => line.startsWith(`${at}:`))).toBe(true);
  });

  it('the factory loads the file the config names when no routing table is passed (never a silent sandbox)', async () => {
    const path = await channelsFile('unpassed.json', { routes: [{ model: 'vendora/famw-2.7-t2v', to: [{ channel: 'sandbox' }] }] });
    const config = loadConfig({
      MEDIAGATE_CHANNELS_FILE: path,
      MEDIAGATE_DATA_DIR: join(dir, 'data-unpassed'),
      MEDIAGATE_API_KEYS: 'mg_wiring_key_0123456789',
      MEDIAGATE_WORKERS: 'false',
    });
    const app = await createMediagate(config, { logger: pino({ level: 'silent' }) });
    try {
      const models = await app.http.inject({ method: 'GET', url: '/v1/models', headers: { authorization: 'Bearer mg_wiring_key_0123456789' } });
      expect(models.json<{ data: { id: string }[] }>().data.map((model) => model.id)).toEqual(['vendora/famw-2.7-t2v']);
    } finally {
      await app.close(0);
    }
  });
});

describe('a bad channels file stops the real process', () => {
  for (const command of ['serve', 'worker']) {
    it(`mediagate ${command}: exit 78, one line per fault with its JSON path`, async () => {
      const path = await channelsFile(`bad-${command}.json`, BAD);
      const ran = await run([command], { MEDIAGATE_CHANNELS_FILE: path, MEDIAGATE_DATA_DIR: join(dir, `data-${command}`), PORT: '0' });
      expect(ran.code).toBe(78);
      expect(ran.stderr).toContain('MEDIAGATE_CHANNELS_FILE is invalid');
      for (const at of BAD_FAULTS) expect(ran.stderr).toContain(`  ${at}:`);
      expect(ran.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
    });
  }

  it('an unreadable file: exit 78 naming the file', async () => {
    const ran = await run(['serve'], { MEDIAGATE_CHANNELS_FILE: join(dir, 'missing.json'), MEDIAGATE_DATA_DIR: join(dir, 'data-missing'), PORT: '0' });
    expect(ran.code).toBe(78);
    expect(ran.stderr).toContain('(file): cannot read');
  });
});

describe('channel keys are redacted from logs', () => {
  it("a line holding a channel's key is written with [redacted] instead", async () => {
    const key = 'sk-wiring-never-logged-7f3a9c';
    const path = await channelsFile('secret.json', {
      channels: { wan: { protocol: 'dashscope', base_url: 'https://dashscope-intl.aliyuncs.com', api_key_env: 'CHANNEL_TEST_KEY' } },
      routes: [{ model: '*', to: [{ channel: 'wan' }] }],
    });
    const ran = await run(
      [],
      {
        MEDIAGATE_CHANNELS_FILE: path,
        CHANNEL_TEST_KEY: key,
        MEDIAGATE_DATA_DIR: join(dir, 'data-secret'),
        MEDIAGATE_API_KEYS: 'mg_wiring_key_0123456789',
        MEDIAGATE_WORKERS: 'false',
        LOG_FORMAT: 'json',
        PORT: '0',
      },
      'test/fixtures/log-channel-secret.ts',
    );
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain('upstream said [redacted]');
    expect(ran.stdout).toContain('answer echoed the key [redacted]');
    expect(ran.stdout + ran.stderr).not.toContain(key);
  });
});

const ROUTED_VIDEO = 'vendora/famw-2.7-t2v';
const ROUTED_IMAGE = 'vendora/famz-image-spicy';
const UNROUTED_VIDEO = 'vendorb/famsd-2.0-i2v-spicy';
const UNROUTED_IMAGE = 'vendora/famz-image-spicy-pro';

describe('what clients see: only routed models', () => {
  let server: TestServer;
  let fake: DashscopeFake;
  const auth = (): Record<string, string> => ({ authorization: `Bearer ${server.keys[0]}`, 'content-type': 'application/json' });

  beforeAll(async () => {
    fake = await startDashscopeFake({ apiKey: 'sk-routing-fake' });
    const path = await channelsFile('routed.json', {
      channels: { wan: { protocol: 'dashscope', base_url: fake.origin, api_key_env: 'ROUTING_KEY' } },
      routes: [
        { model: ROUTED_VIDEO, to: [{ channel: 'wan', upstream_model: 'wan2.7-t2v' }, { channel: 'sandbox' }] },
        { model: ROUTED_IMAGE, to: [{ channel: 'sandbox' }] },
      ],
    });
    const env = { MEDIAGATE_CHANNELS_FILE: path, ROUTING_KEY: 'sk-routing-fake', MEDIAGATE_ENGINE: 'instant' };
    server = await startServer(env, { channels: loadChannelsConfig(path, env) });
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });

  it('GET /v1/models lists exactly the routed models, in catalog order', async () => {
    const body = (await (await fetch(`${server.url}/v1/models`, { headers: auth() })).json()) as { data: { id: string }[] };
    expect(body.data.map((m) => m.id)).toEqual(
      [ROUTED_VIDEO, ROUTED_IMAGE].sort((a, b) => MODELS.findIndex((r) => r.id === a) - MODELS.findIndex((r) => r.id === b)),
    );
  });

  it('a model routed upstream is described without the sandbox; one routed to the sandbox says it renders locally', async () => {
    const body = (await (await fetch(`${server.url}/v1/models`, { headers: auth() })).json()) as { data: { id: string; description: string }[] };
    const text = (id: string): string => body.data.find((m) => m.id === id)?.description ?? '';
    expect(text(ROUTED_VIDEO)).toMatch(/^Makes a clip from the prompt alone/);
    expect(text(ROUTED_VIDEO)).not.toContain('sandbox');
    expect(text(ROUTED_IMAGE)).toContain('rendered locally by the sandbox engine');
  });

  it('GET /v1/models/{id}: a routed model answers, an unrouted one is 404 in the envelope', async () => {
    expect((await fetch(`${server.url}/v1/models/${ROUTED_VIDEO}`, { headers: auth() })).status).toBe(200);
    const res = await fetch(`${server.url}/v1/models/${UNROUTED_VIDEO}`, { headers: auth() });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 'not_found', param: 'model' } });
  });

  it('/openapi.json (and so /docs, which renders it) describes only the routed models', async () => {
    const openapi = await (await fetch(`${server.url}/openapi.json`)).text();
    expect(openapi).toContain(ROUTED_VIDEO);
    expect(openapi).toContain(ROUTED_IMAGE);
    expect(openapi).not.toContain(UNROUTED_VIDEO);
    expect(openapi).not.toContain(UNROUTED_IMAGE);
  });

  it('a create naming an unrouted model is 400 unsupported_value on model, in both families, before any upstream call', async () => {
    const video = await fetch(`${server.url}/v1/video/generations`, {
      method: 'POST',
      headers: auth(),
      body: JSON.stringify({ model: UNROUTED_VIDEO, prompt: 'a cat' }),
    });
    expect(video.status).toBe(400);
    expect(await video.json()).toMatchObject({ error: { code: 'unsupported_value', param: 'model' } });
    const image = await fetch(`${server.url}/v1/images/generations/async`, {
      method: 'POST',
      headers: auth(),
      body: JSON.stringify({ model: UNROUTED_IMAGE, prompt: 'a cat' }),
    });
    expect(image.status).toBe(400);
    expect(await image.json()).toMatchObject({ code: 'unsupported_value', data: null });
    expect(fake.http.stats.requests).toBe(0);
  });

  it('a create naming a routed model is accepted', async () => {
    const image = await fetch(`${server.url}/v1/images/generations/async`, {
      method: 'POST',
      headers: auth(),
      body: JSON.stringify({ model: ROUTED_IMAGE, prompt: 'a cat' }),
    });
    expect(image.status).toBe(200);
  });
});

describe('mediagate channels check', () => {
  let dashscope: DashscopeFake;
  let ark: ArkFake;
  let file: string;
  beforeAll(async () => {
    [dashscope, ark] = await Promise.all([startDashscopeFake({ apiKey: 'sk-ds-good' }), startArkFake({ apiKey: 'ark-good' })]);
    file = await channelsFile('check.json', {
      channels: {
        wan: { protocol: 'dashscope', base_url: dashscope.origin, api_key_env: 'DS_KEY', max_in_flight: 20 },
        seedance: { protocol: 'ark', base_url: ark.origin, api_key_env: 'ARK_KEY' },
      },
      routes: [
        { model: ROUTED_VIDEO, to: [{ channel: 'wan', upstream_model: 'wan2.7-t2v' }, { channel: 'seedance' }] },
        { model: 'vendorb/famsd-2.0-i2v-spicy', to: [{ channel: 'seedance', upstream_model: 'dreamina-seedance-2-0-260128' }] },
      ],
    });
  });
  afterAll(async () => {
    await dashscope?.close();
    await ark?.close();
  });

  it('without a file: says every model goes to the sandbox, exit 0', async () => {
    const ran = await run(['channels', 'check'], {});
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain('MEDIAGATE_CHANNELS_FILE is not set');
  });

  it('a valid file: a table of channels and routes, no key printed, exit 0, nothing sent upstream', async () => {
    const ran = await run(['channels', 'check'], { MEDIAGATE_CHANNELS_FILE: file, DS_KEY: 'sk-ds-good', ARK_KEY: 'ark-good' });
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/wan\s+dashscope\s+http:\/\/127\.0\.0\.1:\d+\s+DS_KEY\s+20\s+2\s+10\s+1800/);
    expect(ran.stdout).toMatch(/seedance\s+ark\s+/);
    expect(ran.stdout).toContain(`${ROUTED_VIDEO}`);
    expect(ran.stdout).toContain('wan (wan2.7-t2v) -> seedance');
    expect(ran.stdout).not.toContain('sk-ds-good');
    expect(ran.stdout).not.toContain('ark-good');
    expect(dashscope.http.stats.requests + ark.http.stats.requests).toBe(0);
  });

  it('a variable the file names is unset: exit 78 with the JSON path', async () => {
    const ran = await run(['channels', 'check'], { MEDIAGATE_CHANNELS_FILE: file, DS_KEY: 'sk-ds-good' });
    expect(ran.code).toBe(78);
    expect(ran.stderr).toContain('channels.seedance.api_key_env:');
  });

  it('--probe with good keys: one authenticated call per channel, each ok, exit 0', async () => {
    const before = { ds: dashscope.http.stats.requests, ark: ark.http.stats.requests };
    const ran = await run(['channels', 'check', '--probe'], { MEDIAGATE_CHANNELS_FILE: file, DS_KEY: 'sk-ds-good', ARK_KEY: 'ark-good' });
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/\nwan\s+ok\s+\d+/);
    expect(ran.stdout).toMatch(/\nseedance\s+ok\s+\d+/);
    expect(dashscope.http.stats.requests - before.ds).toBe(1);
    expect(ark.http.stats.requests - before.ark).toBe(1);
  });

  it('--probe with a bad key: a failure line for that channel, the other ok, exit 1', async () => {
    const ran = await run(['channels', 'check', '--probe'], { MEDIAGATE_CHANNELS_FILE: file, DS_KEY: 'sk-ds-good', ARK_KEY: 'ark-wrong' });
    expect(ran.code).toBe(1);
    expect(ran.stdout).toMatch(/\nwan\s+ok\s+/);
    expect(ran.stdout).toMatch(/\nseedance\s+FAILED\s+\d+\s+\S/);
    expect(ran.stderr).toContain('1 of 2 channel probe(s) failed');
    expect(ran.stdout + ran.stderr).not.toContain('ark-wrong');
  });
});

describe('per-channel metrics', () => {
  it('the recorder writes every series with its labels into the /metrics registry', async () => {
    const metrics = createMetrics();
    const c = metrics.channels;
    c.setInFlight('wan', 3);
    c.submitted('wan', 'accepted');
    c.submitted('wan', 'refused');
    c.upstreamLatency('wan', 'poll', 250);
    c.throttled('wan', 'submit');
    c.polled('wan', 'running');
    c.copied('wan', 1234);
    const text = await metrics.registry.metrics();
    expect(text).toContain('mediagate_channel_in_flight{channel="wan"} 3');
    expect(text).toContain('mediagate_channel_submissions_total{channel="wan",outcome="accepted"} 1');
    expect(text).toContain('mediagate_channel_submissions_total{channel="wan",outcome="refused"} 1');
    expect(text).toContain('mediagate_channel_upstream_seconds_bucket{le="0.25",channel="wan",operation="poll"} 1');
    expect(text).toContain('mediagate_channel_upstream_seconds_sum{channel="wan",operation="poll"} 0.25');
    expect(text).toContain('mediagate_channel_throttled_total{channel="wan",operation="submit"} 1');
    expect(text).toContain('mediagate_channel_polls_total{channel="wan",outcome="running"} 1');
    expect(text).toContain('mediagate_channel_copy_bytes_total{channel="wan"} 1234');
  });

  it('GET /metrics of a real server declares every channel series', async () => {
    const server = await startServer({ MEDIAGATE_ENGINE: 'instant' });
    try {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      for (const name of ['in_flight', 'submissions_total', 'upstream_seconds', 'throttled_total', 'polls_total', 'copy_bytes_total']) {
        expect(text).toMatch(new RegExp(`# TYPE mediagate_channel_${name} (gauge|counter|histogram)`));
      }
    } finally {
      await server.close();
    }
  });
});

describe('mediagate channels check --probe reads the published input schemas', () => {
  let replicate: ReplicateFake;
  let file: string;
  beforeAll(async () => {
    replicate = await startReplicateFake({ apiKey: 'r8-good' });
    file = await channelsFile('schemas.json', {
      channels: { r8: { protocol: 'replicate', base_url: replicate.origin, api_key_env: 'R8_KEY' } },
      routes: [
        // The built-in profile: matches flux-schnell's schema.
        { model: 'vendora/famz-image-spicy-pro', to: [{ channel: 'r8', upstream_model: 'black-forest-labs/flux-schnell' }] },
        // The generic mapping on kling-v2.1 (renamed image only): duration is fine, but resolution, seed... are not its inputs.
        {
          model: 'vendora/famw-2.7-i2v',
          to: [
            {
              channel: 'r8',
              upstream_model: 'kwaivgi/kling-v2.1:v1?image=start_image',
              profile: {
                inputs: {
                  prompt: { field: 'prompt' },
                  image: { field: 'start_image', type: 'media' },
                  duration: { field: 'duration', type: 'string' },
                  resolution: { field: 'resolution' },
                },
              },
            },
          ],
        },
      ],
    });
  });
  afterAll(async () => {
    await replicate?.close();
  });

  it('a profile that matches is ok; every mismatch of another is a line, and the exit code is 1', async () => {
    const ran = await run(['channels', 'check', '--probe'], { MEDIAGATE_CHANNELS_FILE: file, R8_KEY: 'r8-good' });
    expect(ran.stdout).toMatch(/r8\s+black-forest-labs\/flux-schnell\s+ok\s+profile matches/);
    expect(ran.stdout).toMatch(/MISMATCH\s+'duration' \(from duration\) is the enum \[5,10\]; the mapping sends string values/);
    expect(ran.stdout).toMatch(/MISMATCH\s+sends 'resolution' \(from resolution\), which the model does not declare/);
    expect(ran.stderr).toContain('1 route target(s) do not match');
    expect(ran.code).toBe(1);
    expect(ran.stdout + ran.stderr).not.toContain('r8-good');
  });
});
