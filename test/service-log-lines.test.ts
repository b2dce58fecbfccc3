/**
 * The lines an operator reads: one start-up line that says what the process loaded (channels,
 * routed models, pricing) and where it listens, said once; and one "task completed" / "task
 * failed" line per finished task whether the sandbox rendered it or a channel did.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseChannelsConfig } from '../src/channels/config.js';
import { createLogger } from '../src/logging.js';
import { startDashscopeFake, type DashscopeFake } from './fakes/dashscope.js';
import { eventually } from './helpers/eventually.js';
import { freePort, startProcess, startWorkerProcess } from './helpers/process.js';
import { startServer, type TestServer } from './helpers/server.js';

const KEY = 'mg_log_lines_key_0123456789';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mediagate-log-lines-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

type Line = Record<string, unknown>;

function jsonLines(output: string): Line[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Line);
}

async function loadedFiles(): Promise<Record<string, string>> {
  const channels = join(dir, 'channels.json');
  await writeFile(
    channels,
    JSON.stringify({
      channels: { wan: { protocol: 'dashscope', base_url: 'https://dashscope-intl.aliyuncs.com', api_key_env: 'LOG_LINES_DASHSCOPE_KEY' } },
      routes: [
        { model: 'vendora/famw-2.7-t2v', to: [{ channel: 'wan', upstream_model: 'wan2.7-t2v' }] },
        { model: 'vendora/famz-image-spicy', to: [{ channel: 'sandbox' }] },
      ],
    }),
  );
  const pricing = join(dir, 'pricing.json');
  await writeFile(pricing, JSON.stringify({ currency: 'EUR', models: { 'vendora/famw-2.7-t2v': { per_task: 0.05 } } }));
  return { MEDIAGATE_CHANNELS_FILE: channels, MEDIAGATE_PRICING_FILE: pricing, LOG_LINES_DASHSCOPE_KEY: 'sk-log-lines-never-logged' };
}

describe('the start-up line says what was loaded, once', () => {
  it('mediagate serve: one "mediagate listening" line with the URL, channels, routed models and pricing; no second listening line', async () => {
    const files = await loadedFiles();
    const port = await freePort();
    const service = await startProcess(['serve'], {
      PORT: String(port),
      MEDIAGATE_DATA_DIR: join(dir, 'serve'),
      MEDIAGATE_API_KEYS: KEY,
      MEDIAGATE_ENGINE: 'instant',
      LOG_FORMAT: 'json',
      MEDIAGATE_ADMIN_KEYS: 'mg_log_lines_admin_key_0123456789',
      ...files,
    });
    try {
      const listening = await eventually(() => jsonLines(service.output()).find((line) => line['msg'] === 'mediagate listening'), {
        what: 'the "mediagate listening" line',
      });
      expect(listening).toMatchObject({
        url: `http://127.0.0.1:${port}`,
        engine: 'instant',
        store: 'sqlite',
        channelsFile: files['MEDIAGATE_CHANNELS_FILE'],
        channels: ['wan:dashscope'],
        routedModels: 2,
        pricingFile: files['MEDIAGATE_PRICING_FILE'],
        currency: 'EUR',
        pricedModels: 1,
        adminKeys: 1,
      });
      // The address is said once: no framework line repeats it.
      const mentions = service
        .output()
        .split('\n')
        .filter((line) => line.includes(`127.0.0.1:${port}`));
      expect(mentions, service.output()).toHaveLength(1);
      expect(service.output()).not.toContain('sk-log-lines-never-logged');
      expect(service.output()).not.toContain('mg_log_lines_admin_key_0123456789');
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
    }
  });

  it('mediagate worker: "mediagate worker started" says the same', async () => {
    const files = await loadedFiles();
    const worker = await startWorkerProcess({
      MEDIAGATE_DATA_DIR: join(dir, 'worker'),
      MEDIAGATE_API_KEYS: KEY,
      MEDIAGATE_ENGINE: 'instant',
      LOG_FORMAT: 'json',
      ...files,
    });
    try {
      const started = jsonLines(worker.output()).find((line) => line['msg'] === 'mediagate worker started');
      expect(started).toMatchObject({ channels: ['wan:dashscope'], routedModels: 2, currency: 'EUR', pricedModels: 1 });
    } finally {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
  });
});

describe('a task routed to a channel logs its outcome like a rendered one', () => {
  let dashscope: DashscopeFake;
  let server: TestServer;
  const lines: Line[] = [];
  const written = new EventEmitter();

  beforeAll(async () => {
    dashscope = await startDashscopeFake({ apiKey: 'sk-dashscope-test', queuedMs: 50, runMs: 100 });
    const channels = parseChannelsConfig(
      JSON.stringify({
        channels: { wan: { protocol: 'dashscope', base_url: dashscope.origin, api_key_env: 'T_DASHSCOPE' } },
        routes: [
          { model: 'vendora/famw-2.7-t2v', to: [{ channel: 'wan', upstream_model: 'wan2.7-t2v' }] },
          { model: '*', to: [{ channel: 'sandbox' }] },
        ],
      }),
      { T_DASHSCOPE: 'sk-dashscope-test' },
    );
    const destination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(...jsonLines(chunk.toString()));
        written.emit('change');
        callback();
      },
    });
    server = await startServer(
      { MEDIAGATE_ENGINE: 'instant' },
      {
        channels,
        logger: createLogger({ level: 'info', destination, format: 'json' }),
        upstreamTimings: { pollStartMs: 50, pollMaxMs: 200, idleMs: 50 },
      },
    );
  }, 30_000);

  afterAll(async () => {
    await server.close();
    await dashscope.close();
  });

  async function create(model: string, prompt: string): Promise<string> {
    const res = await fetch(`${server.url}/v1/video/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.keys[0]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, prompt }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { id: string }).id;
  }

  function outcomeOf(id: string): Line | undefined {
    return lines.find((line) => line['task'] === id && (line['msg'] === 'task completed' || line['msg'] === 'task failed'));
  }

  it.each([
    ['completed', 'task completed', 'a channel task that succeeds', 30, undefined],
    ['failed', 'task failed', 'a channel task that fails [fake:fail]', 40, 'upstream_error'],
  ] as const)('%s upstream: one "%s" line naming the channel', async (outcome, msg, prompt, level, failure) => {
    const id = await create('vendora/famw-2.7-t2v', prompt);
    const line = await eventually(() => outcomeOf(id), { deadline: 15_000, what: `the outcome line of ${id}`, wake: { emitter: written } });
    expect(line).toMatchObject({ msg, level, model: 'vendora/famw-2.7-t2v', channel: 'wan', outcome });
    expect(line['failure']).toBe(failure);
    expect(typeof line['durationMs']).toBe('number');
    expect(lines.filter((other) => other['task'] === id && other['msg'] === msg)).toHaveLength(1);
  });

  it('the same words as a task the sandbox renders', async () => {
    const res = await fetch(`${server.url}/v1/images/generations/async`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.keys[0]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'vendora/famz-image-spicy-pro', prompt: 'rendered here' }),
    });
    expect(res.status).toBe(200);
    const id = ((await res.json()) as { data: { task_id: string } }).data.task_id;
    const line = await eventually(() => outcomeOf(id), { deadline: 15_000, what: `the outcome line of ${id}`, wake: { emitter: written } });
    expect(line).toMatchObject({ msg: 'task completed', outcome: 'completed' });
  });
});
