/**
 * PostgreSQL goes away (through a TCP proxy that this spec cuts: the shared server is never
 * touched) and comes back: every request that needs it answers 503 service_unavailable with
 * Retry-After in its family's envelope, within a bounded time; polls of final tasks this
 * process holds keep answering; /readyz names the database; nothing accepted is lost, and every
 * task created after the outage completes. And the worker's job runner, stopped by a job
 * completion that failed mid-flight, is started again.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Engine } from '../src/engines/types.js';
import { eventually } from './helpers/eventually.js';
import { createTestDatabase, postgresAvailability, type TestDatabase } from './helpers/postgres.js';
import { startServer, type TestServer } from './helpers/server.js';
import { startTcpProxy, throughProxy, type TcpProxy } from './helpers/tcp-proxy.js';

const availability = await postgresAvailability();
/** How long the outage of the first spec lasts (MEDIAGATE_TEST_OUTAGE_MS=15000 plays the 15 s of the black-box runs). */
const OUTAGE_MS = Number(process.env['MEDIAGATE_TEST_OUTAGE_MS'] ?? '4000');
const VIDEO = { model: 'vendora/famw-2.7-t2v', prompt: 'a fox' } as const;
const IMAGE = { model: 'vendora/famz-image-spicy', prompt: 'a fox' } as const;

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly retryAfter: string | null;
  readonly ms: number;
}

/** A series without labels from a Prometheus text body (0 when absent). */
function counter(text: string, name: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}

async function call(server: TestServer, method: string, path: string, body?: object): Promise<Answer> {
  const started = Date.now();
  const response = await fetch(server.url + path, {
    method,
    headers: { authorization: `Bearer ${server.keys[0]}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
    retryAfter: response.headers.get('retry-after'),
    ms: Date.now() - started,
  };
}

async function completed(server: TestServer, id: string, deadline = 30_000): Promise<void> {
  await eventually(async () => (await call(server, 'GET', `/v1/video/generations/${id}`)).body['status'] === 'completed', {
    deadline,
    what: `task ${id} completed`,
  });
}

/** An engine whose renders wait for `release()` while `held` (to settle a task at a chosen moment). */
function gatedEngine() {
  let held = false;
  let releases: (() => void)[] = [];
  const rendering = new Set<string>();
  const engine: Engine = {
    name: 'gated',
    async render(job) {
      rendering.add(job.taskId);
      if (held) await new Promise<void>((resolve) => releases.push(resolve));
      const path = join(job.workDir, 'out.mp4');
      await writeFile(path, 'video');
      return { files: [{ path, type: 'video', contentType: 'video/mp4', ext: 'mp4' }] };
    },
    async close() {},
  };
  return {
    engine,
    rendering,
    hold: () => (held = true),
    release: () => {
      held = false;
      for (const resolve of releases.splice(0)) resolve();
      releases = [];
    },
  };
}

describe.skipIf(!availability.enabled)(`a PostgreSQL outage ${availability.reason}`, () => {
  let database: TestDatabase | undefined;
  let proxy: TcpProxy | undefined;
  let server: TestServer | undefined;

  afterEach(async () => {
    await proxy?.restore();
    await server?.close();
    await proxy?.close();
    await database?.drop();
    server = undefined;
    proxy = undefined;
    database = undefined;
  });

  async function start(env: Record<string, string> = {}, engine?: Engine): Promise<TestServer> {
    database = await createTestDatabase();
    const target = new URL(database.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    server = await startServer({ DATABASE_URL: throughProxy(database.url, proxy), MEDIAGATE_ENGINE: 'instant', ...env }, engine ? { engine } : {});
    return server;
  }

  it('answers 503 with Retry-After where the database is needed, serves final tasks it holds, names the database in /readyz, and loses nothing', async () => {
    // Renders of 300 ms, two at a time: tasks are still queued and rendering when the database goes.
    const app = await start({ MEDIAGATE_INSTANT_DELAY_MS: '300', LOG_LEVEL: process.env['OUTAGE_LOG'] ?? 'silent' });
    const cut = proxy as TcpProxy;
    // Before: tasks accepted and finished, each polled once (the process now holds their final bodies).
    const before: string[] = [];
    for (let i = 0; i < 4; i += 1) before.push((await call(app, 'POST', '/v1/video/generations', VIDEO)).body['id'] as string);
    for (const id of before) await completed(app, id);
    expect((await call(app, 'GET', '/readyz')).status).toBe(200);
    const inFlight: string[] = [];
    for (let i = 0; i < 6; i += 1) inFlight.push((await call(app, 'POST', '/v1/video/generations', VIDEO)).body['id'] as string);

    cut.cut();
    const answers: { what: string; answer: Answer }[] = [];
    const outageEnds = Date.now() + OUTAGE_MS;
    while (Date.now() < outageEnds) {
      answers.push({ what: 'create', answer: await call(app, 'POST', '/v1/video/generations', VIDEO) });
      answers.push({ what: 'image create', answer: await call(app, 'POST', '/v1/images/generations/async', IMAGE) });
      answers.push({ what: 'held poll', answer: await call(app, 'GET', `/v1/video/generations/${before[answers.length % before.length] ?? ''}`) });
      answers.push({ what: 'list', answer: await call(app, 'GET', '/v1/video/generations') });
    }
    const ready = await call(app, 'GET', '/readyz');
    await cut.restore();

    const unavailable = answers.filter(({ answer }) => answer.status === 503);
    const held = answers.filter(({ what }) => what === 'held poll');
    console.log(
      `outage ${OUTAGE_MS / 1000} s: ${answers.length} requests, ${unavailable.length} answered 503, ${held.filter(({ answer }) => answer.status === 200).length}/${held.length} held polls 200, slowest ${Math.max(...answers.map(({ answer }) => answer.ms))} ms`,
    );
    // No 500, no hang: every request needing the database is a 503 with Retry-After in its envelope.
    for (const { what, answer } of answers) {
      if (what === 'held poll') {
        expect(answer.status, what).toBe(200);
        continue;
      }
      expect(answer.status, what).toBe(503);
      expect(answer.retryAfter, what).toMatch(/^\d+$/);
      expect(answer.ms, what).toBeLessThan(10_000);
      if (what === 'image create') expect(answer.body).toMatchObject({ code: 'service_unavailable', data: null });
      else expect(answer.body).toMatchObject({ error: { type: 'server_error', code: 'service_unavailable', param: '' } });
    }
    expect(unavailable.length).toBeGreaterThan(0);
    expect(ready.status).toBe(503);
    expect(ready.retryAfter).toMatch(/^\d+$/);
    expect(ready.body).toMatchObject({ error: { code: 'service_unavailable' }, checks: { database: expect.not.stringMatching(/^ok$/) as unknown } });

    // After: ready again, the tasks from before are all there, and new ones complete.
    await eventually(async () => (await call(app, 'GET', '/readyz')).status === 200, { deadline: 20_000, what: 'ready again' });
    for (const id of before) expect((await call(app, 'GET', `/v1/video/generations/${id}`)).body['status']).toBe('completed');
    const after: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const created = await call(app, 'POST', '/v1/video/generations', VIDEO);
      expect(created.status).toBe(200);
      after.push(created.body['id'] as string);
    }
    for (const id of after) await completed(app, id);
    // The tasks queued or rendering when the database went complete too (a lease of 15 s may lapse first).
    for (const id of inFlight) await completed(app, id, 60_000);
    const listed = await call(app, 'GET', '/v1/video/generations?limit=100');
    const ids = ((listed.body['data'] as { id: string }[] | undefined) ?? []).map((task) => task.id);
    const lost = [...before, ...inFlight, ...after].filter((id) => !ids.includes(id));
    console.log(
      `after the outage: ${after.length}/${after.length} new tasks completed, ${inFlight.length}/${inFlight.length} in flight at the cut completed, ${lost.length} accepted tasks lost`,
    );
    expect(lost).toEqual([]);
  });

  it('starts the job runner again after a job completion failed mid-flight, and the next tasks complete', async () => {
    const gate = gatedEngine();
    const app = await start({ MEDIAGATE_LEASE_S: '2', MEDIAGATE_CONCURRENCY: '1' }, gate.engine);
    const cut = proxy as TcpProxy;
    gate.hold();
    const first = (await call(app, 'POST', '/v1/video/generations', VIDEO)).body['id'] as string;
    await eventually(() => gate.rendering.has(first), { what: 'the first render under way' });

    // The database goes while the render ends: its settle and graphile-worker's job completion fail.
    cut.cut();
    gate.release();
    // graphile-worker's runner stops ("Runner stopping ... worker pool exited with error"); ours notices.
    const metricsOf = async (): Promise<string> => (await fetch(`${app.url}/metrics`)).text();
    await eventually(async () => counter(await metricsOf(), 'mediagate_job_runner_restarts_total') >= 1, {
      deadline: 15_000,
      what: 'the stopped job runner counted',
    });
    const during = await call(app, 'GET', '/readyz');
    expect(during.status).toBe(503);
    await cut.restore();

    await eventually(async () => (await call(app, 'GET', '/readyz')).status === 200, { deadline: 30_000, what: 'ready again (the job runner runs)' });
    const next: string[] = [];
    for (let i = 0; i < 5; i += 1) next.push((await call(app, 'POST', '/v1/video/generations', VIDEO)).body['id'] as string);
    for (const id of next) await completed(app, id);
    // The task whose settle failed is not lost either: its lease lapses and it runs again.
    await completed(app, first);
    const restarts = counter(await metricsOf(), 'mediagate_job_runner_restarts_total');
    console.log(`job runner restarts: ${restarts}; ${next.length}/${next.length} later tasks completed; the interrupted task completed`);
  });
});
