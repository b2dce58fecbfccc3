/**
 * /metrics tells an operator what tasks did: queue wait and render time by model, settled tasks
 * by model, status and failure code, every status in the tasks gauge; a `mediagate worker`
 * process serves its own /metrics (MEDIAGATE_METRICS_PORT); MEDIAGATE_METRICS_TOKEN guards both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInstantEngine } from '../src/engines/instant.js';
import { EngineError, type Engine } from '../src/engines/types.js';
import { eventually } from './helpers/eventually.js';
import { freePort, startWorkerProcess, type ServiceProcess } from './helpers/process.js';
import { startServer, TEST_KEYS, type TestServer } from './helpers/server.js';

const TOKEN = 'metrics-token-0123456789abcdef';
const split = process.env['MEDIAGATE_TEST_TOPOLOGY'] === 'split';

/** The instant engine, failing tasks whose prompt is `fail` with invalid_input. */
function failingOnRequest(): Engine {
  const instant = createInstantEngine({ delayMs: 0 });
  return {
    name: 'instant-or-fail',
    async render(job) {
      if (job.params['prompt'] === 'fail') throw new EngineError('invalid_input', 'prompt', 'asked to fail');
      return instant.render(job);
    },
    close: () => instant.close(),
  };
}

async function settle(url: string, prompt: string): Promise<void> {
  const auth = { authorization: `Bearer ${TEST_KEYS[0]}` };
  const created = await fetch(`${url}/v1/video/generations`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt, duration: 2 }),
  });
  const id = String(((await created.json()) as Record<string, unknown>)['id']);
  await eventually(
    async () => {
      const task = (await (await fetch(`${url}/v1/video/generations/${id}`, { headers: auth })).json()) as Record<string, unknown>;
      return task['status'] === 'completed' || task['status'] === 'failed';
    },
    { deadline: 20_000, interval: 20, what: `task ${id} to settle` },
  );
}

/** The value of one series, or undefined when absent. */
function series(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = (match[2] ?? '').split(/,(?=[a-z_]+=")/).filter((l) => l !== '');
    if (have.length === wanted.length && wanted.every((l) => have.includes(l))) return Number(match[3]);
  }
  return undefined;
}

async function scrape(url: string, token = TOKEN): Promise<string> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return res.text();
}

function expectTaskSeries(text: string): void {
  const model = 'vendora/famw-2.7-t2v';
  expect(series(text, 'mediagate_tasks_settled_total', { model, status: 'completed', code: '' })).toBe(1);
  expect(series(text, 'mediagate_tasks_settled_total', { model, status: 'failed', code: 'invalid_input' })).toBe(1);
  expect(series(text, 'mediagate_task_queue_wait_seconds_count', { model })).toBe(2);
  expect(series(text, 'mediagate_task_render_seconds_count', { model })).toBe(2);
  expect(series(text, 'mediagate_task_render_seconds_bucket', { model, le: '+Inf' })).toBe(2);
}

describe('metrics of the API process', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_METRICS_TOKEN: TOKEN }, { engine: failingOnRequest() });
  });
  afterAll(async () => server.close());

  it('requires the metrics token when one is configured', async () => {
    const none = await fetch(`${server.url}/metrics`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(await none.json()).toMatchObject({ error: { code: 'invalid_api_key' } });
    const apiKey = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TEST_KEYS[0]}` } });
    expect(apiKey.status).toBe(401);
    await scrape(`${server.url}/metrics`);
  });

  it('reports every status in the tasks gauge, 0 when no task has it', async () => {
    const text = await scrape(`${server.url}/metrics`);
    for (const status of ['queued', 'processing', 'completed', 'failed', 'cancelled']) {
      expect(series(text, 'mediagate_tasks', { status }), status).toBeTypeOf('number');
    }
  });

  it.skipIf(split)('counts settled tasks by model, status and code, with queue wait and render time', async () => {
    await settle(server.url, 'fine');
    await settle(server.url, 'fail');
    const text = await scrape(`${server.url}/metrics`);
    expectTaskSeries(text);
    expect(series(text, 'mediagate_tasks', { status: 'completed' })).toBe(1);
    expect(series(text, 'mediagate_tasks', { status: 'queued' })).toBe(0);
  });
});

describe.skipIf(split)('metrics of a `mediagate worker` process', () => {
  let api: TestServer;
  let worker: ServiceProcess | undefined;
  let metricsUrl = '';
  beforeAll(async () => {
    api = await startServer({ MEDIAGATE_WORKERS: 'false' });
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    const databaseUrl = api.app.config.databaseUrl;
    worker = await startWorkerProcess({
      MEDIAGATE_DATA_DIR: api.dataDir,
      MEDIAGATE_API_KEYS: TEST_KEYS.join(','),
      MEDIAGATE_ENGINE: 'instant',
      MEDIAGATE_CONCURRENCY: '1',
      MEDIAGATE_METRICS_PORT: String(port),
      MEDIAGATE_METRICS_TOKEN: TOKEN,
      HOST: '127.0.0.1',
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    });
  });
  afterAll(async () => {
    worker?.child.kill('SIGTERM');
    await worker?.exited;
    await api.close();
  });

  it('serves /metrics on MEDIAGATE_METRICS_PORT, behind the token, with the tasks it settled', async () => {
    expect(worker?.output()).toContain(metricsUrl);
    expect((await fetch(metricsUrl)).status).toBe(401);
    expect((await fetch(metricsUrl.replace('/metrics', '/other'), { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
    await settle(api.url, 'fine');
    const text = await scrape(metricsUrl);
    expect(series(text, 'mediagate_tasks_settled_total', { model: 'vendora/famw-2.7-t2v', status: 'completed', code: '' })).toBe(1);
    expect(series(text, 'mediagate_task_queue_wait_seconds_count', { model: 'vendora/famw-2.7-t2v' })).toBe(1);
    expect(series(text, 'mediagate_tasks', { status: 'cancelled' })).toBe(0);
    expect(series(text, 'mediagate_tasks', { status: 'completed' })).toBe(1);
    // What keeps it from working: nothing now.
    expect(series(text, 'mediagate_dependency_down', { check: 'database' })).toBe(0);
    expect(series(text, 'mediagate_dependency_down', { check: 'disk' })).toBe(0);
    expect(series(text, 'mediagate_job_runner_restarts_total', {})).toBe(0);
    // Its readiness, without the token, as an API process's.
    const ready = await fetch(metricsUrl.replace('/metrics', '/readyz'));
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { database: 'ok', storage: 'ok' } });
    // The API process settled nothing itself: its counter has no series for it.
    expect(
      series(await (await fetch(`${api.url}/metrics`)).text(), 'mediagate_tasks_settled_total', {
        model: 'vendora/famw-2.7-t2v',
        status: 'completed',
        code: '',
      }),
    ).toBeUndefined();
  });
});
