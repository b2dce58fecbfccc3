/**
 * Cancel, list and idempotent creates (decisions §8.1, decisions §8.2, decisions §8.4) over HTTP against the real
 * server on each backend: a paced engine makes renders long enough to cancel mid-way. On
 * PostgreSQL, two API processes receive the same Idempotency-Key at the same instant.
 */
import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError, Mediagate, NotFoundError, type VideoTask } from '../src/client/index.js';
import { createSandboxEngine } from '../src/engines/sandbox/engine.js';
import { defaultFfmpegPath } from '../src/engines/sandbox/ffmpeg-path.js';
import { eventually } from './helpers/eventually.js';
import { pacedEngine } from './helpers/paced-engine.js';
import { createTestDatabase, postgresAvailability, selectedBackends, type TestDatabase } from './helpers/postgres.js';
import { freePort, startProcess, type ServiceProcess } from './helpers/process.js';
import { startServer, TEST_KEYS, type TestServer } from './helpers/server.js';

const VIDEO = '/v1/video/generations';
const IMAGE = '/v1/images/generations/async';
const fast = { model: 'vendora/famw-2.7-t2v', prompt: 'a red fox', duration: 2, resolution: '480p' };
const slow = { ...fast, prompt: '[slow] a red fox' };
const imageBody = { model: 'vendora/famz-image-spicy', prompt: '[slow] a lighthouse', width: 256, height: 256 };
const broken = { model: 'vendora/famw-2.7-i2v', prompt: 'x', image: `data:image/png;base64,${Buffer.from('not an image').toString('base64')}` };

type Body = Record<string, unknown>;
interface Answer {
  status: number;
  headers: Headers;
  body: Body;
}

const BACKENDS = [
  ...(selectedBackends().includes('sqlite') ? ['sqlite' as const] : []),
  ...((await postgresAvailability()).enabled ? ['postgres' as const] : []),
];

describe.each(BACKENDS)('cancel, list and idempotency over HTTP on %s', (backend) => {
  let server: TestServer;
  let database: TestDatabase | undefined;

  beforeAll(async () => {
    database = backend === 'postgres' ? await createTestDatabase() : undefined;
    server = await startServer(
      { MEDIAGATE_CONCURRENCY: '1', ...(database ? { DATABASE_URL: database.url } : {}) },
      { engine: pacedEngine(createSandboxEngine({ ffmpegPath: defaultFfmpegPath() }), 300, 10) },
    );
  });
  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  async function call(
    method: string,
    path: string,
    options: { body?: unknown; key?: string; headers?: Record<string, string>; base?: string } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = { authorization: `Bearer ${options.key ?? TEST_KEYS[0]}`, ...options.headers };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${options.base ?? server.url}${path}`, {
      method,
      headers,
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as Body };
  }
  const create = async (body: unknown, headers: Record<string, string> = {}): Promise<string> => {
    const answer = await call('POST', VIDEO, { body, headers });
    expect(answer.status).toBe(200);
    return String(answer.body['id']);
  };
  const get = async (id: string): Promise<Body> => (await call('GET', `${VIDEO}/${id}`)).body;
  const errorOf = (answer: Answer) => ({ status: answer.status, ...(answer.body['error'] as Body) });
  /** Every file under the data directory whose path names the task (outputs and scratch). */
  const filesOf = async (id: string): Promise<string[]> => (await readdir(server.dataDir, { recursive: true })).filter((path) => path.includes(id));
  const idle = () => eventually(() => (server.app.pool?.active ?? 0) === 0, { deadline: 60_000 });

  describe('cancel', () => {
    it('cancels a processing render at once: status cancelled, no outputs, no files, never completes', async () => {
      const id = await create(slow);
      await eventually(
        async () => {
          const task = await get(id);
          return task['status'] === 'processing' && Number(task['progress']) > 0;
        },
        { deadline: 30_000 },
      );
      const cancelled = await call('POST', `${VIDEO}/${id}/cancel`);
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({ id, status: 'cancelled', outputs: [], error: null });
      expect(cancelled.body['completed_at']).toEqual(expect.any(Number));
      // The render stops at once (the paced render would take another 2 s and more).
      await eventually(() => (server.app.pool?.active ?? 0) === 0, { deadline: 1500, what: 'the render to stop' });
      expect(await get(id)).toMatchObject({ status: 'cancelled', outputs: [], error: null });
      expect(await filesOf(id)).toEqual([]);
      // Again: 200 with the same task.
      const again = await call('POST', `${VIDEO}/${id}/cancel`, { body: { ignored: true } });
      expect(again).toMatchObject({ status: 200, body: { id, status: 'cancelled' } });
    });

    it('cancels a queued task, which is then never run', async () => {
      const running = await create(slow);
      const queued = await create(slow);
      expect((await get(queued))['status']).toBe('queued');
      expect((await call('POST', `${VIDEO}/${queued}/cancel`)).body).toMatchObject({ status: 'cancelled', started_at: null });
      await call('POST', `${VIDEO}/${running}/cancel`);
      await idle();
      expect(await get(queued)).toMatchObject({ status: 'cancelled', started_at: null, outputs: [] });
    });

    it('refuses completed and failed tasks with 409 task_not_cancellable, untouched', async () => {
      const done = await create(fast);
      const failed = await create(broken);
      await eventually(async () => (await get(done))['status'] === 'completed' && (await get(failed))['status'] === 'failed', { deadline: 60_000 });
      for (const id of [done, failed]) {
        const before = await get(id);
        expect(errorOf(await call('POST', `${VIDEO}/${id}/cancel`))).toMatchObject({ status: 409, code: 'task_not_cancellable', param: 'task_id' });
        expect(await get(id)).toEqual(before);
      }
      const image = await call('POST', `${IMAGE}/${done}/cancel`);
      expect(image).toMatchObject({ status: 404, body: { code: 'task_not_found', data: null } });
    });

    it('scopes cancel to the key and the family: 404 task_not_found, and nothing cancelled', async () => {
      const id = await create(slow);
      expect(errorOf(await call('POST', `${VIDEO}/${id}/cancel`, { key: TEST_KEYS[1] }))).toMatchObject({
        status: 404,
        code: 'task_not_found',
        param: 'task_id',
      });
      expect(await call('POST', `${IMAGE}/${id}/cancel`)).toMatchObject({ status: 404, body: { code: 'task_not_found', data: null } });
      expect(errorOf(await call('POST', `${VIDEO}/vid_nope/cancel`))).toMatchObject({ status: 404, code: 'task_not_found' });
      expect((await get(id))['status']).not.toBe('cancelled');
      await call('POST', `${VIDEO}/${id}/cancel`);
      await idle();
    });

    it('answers the image family with its envelope: CANCELLED, finish_time set, fail_reason empty', async () => {
      const created = await call('POST', IMAGE, { body: imageBody });
      const id = String((created.body['data'] as Body)['task_id']);
      const answer = await call('POST', `${IMAGE}/${id}/cancel`);
      expect(answer).toMatchObject({
        status: 200,
        body: { code: 'success', message: '', data: { task_id: id, status: 'CANCELLED', fail_reason: '', outputs: [] } },
      });
      expect((answer.body['data'] as Body)['finish_time']).toBeGreaterThan(0);
      await idle();
    });

    it('settles a cancel racing the completion exactly once, either way, and a late worker changes nothing', async () => {
      const ids = await Promise.all(Array.from({ length: 6 }, () => create(fast)));
      const answers = await Promise.all(
        ids.map(async (id, i) => {
          await eventually(async () => i % 2 === 0 || (await get(id))['status'] !== 'queued', { deadline: 60_000 });
          return call('POST', `${VIDEO}/${id}/cancel`);
        }),
      );
      await idle();
      for (const [i, id] of ids.entries()) {
        const final = await get(id);
        const answer = answers[i];
        if (answer?.status === 200) {
          expect(final).toMatchObject({ status: 'cancelled', outputs: [], error: null });
          expect(await filesOf(id)).toEqual([]);
        } else {
          expect(answer && errorOf(answer)).toMatchObject({ status: 409, code: 'task_not_cancellable' });
          expect(final['status']).toBe('completed');
        }
      }
    });
  });

  describe('list', () => {
    it('pages newest first without duplicates or gaps while tasks are created concurrently', async () => {
      const key = TEST_KEYS[1];
      const before: string[] = [];
      for (let i = 0; i < 12; i += 1) before.push(String((await call('POST', VIDEO, { body: fast, key })).body['id']));
      const seen: string[] = [];
      let after = '';
      for (;;) {
        const [page] = await Promise.all([call('GET', `${VIDEO}?limit=5${after ? `&after=${after}` : ''}`, { key }), call('POST', VIDEO, { body: fast, key })]);
        expect(page.status).toBe(200);
        expect(page.body['object']).toBe('list');
        const data = page.body['data'] as Body[];
        seen.push(...data.map((task) => String(task['id'])));
        expect(page.body['last_id']).toBe(data.at(-1)?.['id'] ?? null);
        if (!page.body['has_more']) break;
        after = String(page.body['last_id']);
      }
      // Every task created before paging began, once each, newest first; none of another key.
      const old = seen.filter((id) => before.includes(id));
      expect(old).toEqual([...before].reverse());
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen.indexOf(before.at(-1) ?? '')).toBeGreaterThanOrEqual(0);
      await idle();
    });

    it('filters by status and model, in each family\u2019s words and shape', async () => {
      const id = await create(slow);
      await call('POST', `${VIDEO}/${id}/cancel`);
      const cancelled = await call('GET', `${VIDEO}?status=cancelled&limit=100`);
      expect((cancelled.body['data'] as Body[]).map((task) => task['status'])).toContain('cancelled');
      expect((cancelled.body['data'] as Body[]).every((task) => task['status'] === 'cancelled')).toBe(true);
      const byModel = await call('GET', `${VIDEO}?model=${encodeURIComponent('vendora/famw-2.7-i2v')}`);
      expect((byModel.body['data'] as Body[]).every((task) => task['model'] === 'vendora/famw-2.7-i2v')).toBe(true);
      const images = await call('GET', `${IMAGE}?status=CANCELLED&limit=1`);
      expect(images).toMatchObject({ status: 200, body: { code: 'success', message: '', data: { has_more: false } } });
      const items = (images.body['data'] as Body)['items'] as Body[];
      expect(items).toHaveLength(1);
      expect(items[0]).toMatchObject({ status: 'CANCELLED' });
      expect((images.body['data'] as Body)['last_id']).toBe(items[0]?.['task_id']);
      const empty = await call('GET', `${IMAGE}?status=SUCCESS`, { key: TEST_KEYS[1] });
      expect(empty.body['data']).toEqual({ items: [], has_more: false, last_id: null });
      await idle();
    });

    it('refuses bad query values with the decided codes and params', async () => {
      const video = async (query: string) => errorOf(await call('GET', `${VIDEO}?${query}`));
      for (const limit of ['0', '101', 'abc', '2.5', '-1'])
        expect(await video(`limit=${limit}`)).toMatchObject({ status: 400, code: 'invalid_parameter', param: 'limit' });
      expect(await video('after=nonsense')).toMatchObject({ status: 400, code: 'invalid_parameter', param: 'after' });
      expect(await video(`after=img_${'A'.repeat(30)}`)).toMatchObject({ status: 400, code: 'invalid_parameter', param: 'after' });
      const foreign = await call('POST', VIDEO, { body: fast, key: TEST_KEYS[1] });
      expect(await video(`after=${String(foreign.body['id'])}`)).toMatchObject({ status: 400, code: 'invalid_parameter', param: 'after' });
      expect(await video(`after=vid_${'A'.repeat(30)}`)).toMatchObject({ status: 400, code: 'invalid_parameter', param: 'after' });
      expect(await video('status=bogus')).toMatchObject({ status: 400, code: 'unsupported_value', param: 'status' });
      expect(await video('status=QUEUED')).toMatchObject({ status: 400, code: 'unsupported_value', param: 'status' });
      expect(await video('model=no/such-model')).toMatchObject({ status: 400, code: 'unsupported_value', param: 'model' });
      expect(await video('model=vendora%2Ffamz-image-spicy')).toMatchObject({ status: 400, code: 'unsupported_value', param: 'model' });
      expect(await video('limit=1&limit=2')).toMatchObject({ status: 400, code: 'invalid_parameter', param: 'limit' });
      const image = await call('GET', `${IMAGE}?status=queued`);
      expect(image).toMatchObject({ status: 400, body: { code: 'unsupported_value', data: null } });
      expect((await call('GET', `${IMAGE}?after=vid_${'A'.repeat(30)}`)).body).toMatchObject({ code: 'invalid_parameter', data: null });
      expect((await call('GET', VIDEO, { key: 'mg_wrong' })).status).toBe(401);
    });
  });

  describe('idempotent creates', () => {
    it('replays the same body with Idempotent-Replayed and refuses another with 422', async () => {
      const key = `replay-${backend}`;
      const first = await call('POST', VIDEO, { body: fast, headers: { 'idempotency-key': key } });
      expect(first.status).toBe(200);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      // The same request with its keys in another order is the same body.
      const replay = await call('POST', VIDEO, {
        body: { resolution: '480p', duration: 2, prompt: fast.prompt, model: fast.model },
        headers: { 'idempotency-key': key },
      });
      expect(replay).toMatchObject({ status: 200, body: { id: first.body['id'] } });
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      const other = await call('POST', VIDEO, { body: { ...fast, prompt: 'another' }, headers: { 'idempotency-key': key } });
      expect(errorOf(other)).toMatchObject({ status: 422, code: 'idempotency_key_reused' });
      // Per API key: the other key's same Idempotency-Key is its own.
      const mine = await call('POST', VIDEO, { body: fast, key: TEST_KEYS[1], headers: { 'idempotency-key': key } });
      expect(mine.status).toBe(200);
      expect(mine.body['id']).not.toBe(first.body['id']);
      await idle();
    });

    it('answers the image family in its envelope', async () => {
      const key = `image-${backend}`;
      const first = await call('POST', IMAGE, { body: imageBody, headers: { 'idempotency-key': key } });
      const id = (first.body['data'] as Body)['task_id'];
      const replay = await call('POST', IMAGE, { body: imageBody, headers: { 'idempotency-key': key } });
      expect(replay).toMatchObject({ status: 200, body: { code: 'success', data: { task_id: id } } });
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      const other = await call('POST', IMAGE, { body: { ...imageBody, width: 320 }, headers: { 'idempotency-key': key } });
      expect(other).toMatchObject({ status: 422, body: { code: 'idempotency_key_reused', data: null } });
      const bad = await call('POST', IMAGE, { body: imageBody, headers: { 'idempotency-key': 'x'.repeat(256) } });
      expect(bad).toMatchObject({ status: 400, body: { code: 'invalid_parameter', data: null } });
      await call('POST', `${IMAGE}/${String(id)}/cancel`);
      await idle();
    });

    it('refuses malformed keys with 400 invalid_parameter, param Idempotency-Key', async () => {
      for (const key of ['', 'x'.repeat(256), 'caf\u00e9']) {
        const answer = await call('POST', VIDEO, { body: fast, headers: { 'idempotency-key': key } });
        expect(errorOf(answer)).toMatchObject({ status: 400, code: 'invalid_parameter', param: 'Idempotency-Key' });
      }
      expect((await call('POST', VIDEO, { body: fast, headers: { 'idempotency-key': 'x'.repeat(255) } })).status).toBe(200);
      await idle();
    });

    it('takes no key for a request refused by validation', async () => {
      const key = `refused-${backend}`;
      const refused = await call('POST', VIDEO, { body: { ...fast, duration: 999 }, headers: { 'idempotency-key': key } });
      expect(errorOf(refused)).toMatchObject({ status: 400, code: 'unsupported_value', param: 'duration' });
      const accepted = await call('POST', VIDEO, { body: fast, headers: { 'idempotency-key': key } });
      expect(accepted.status).toBe(200);
      expect(accepted.headers.get('idempotent-replayed')).toBeNull();
      await idle();
    });

    it('makes one task of concurrent requests with one key (409 in use or a replay for the others)', async () => {
      const key = `concurrent-${backend}`;
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => call('POST', VIDEO, { body: fast, key: TEST_KEYS[1], headers: { 'idempotency-key': key } })),
      );
      const ok = answers.filter((answer) => answer.status === 200);
      expect(new Set(ok.map((answer) => answer.body['id'])).size).toBe(1);
      expect(ok.filter((answer) => answer.headers.get('idempotent-replayed') === null)).toHaveLength(1);
      for (const answer of answers.filter((each) => each.status !== 200)) {
        expect(errorOf(answer)).toMatchObject({ status: 409, code: 'idempotency_key_in_use' });
      }
      await idle();
    });

    it.runIf(backend === 'postgres')('stops a render when another process cancels it (the heartbeat finds the fence gone)', async () => {
      // A second server on the same database: it cancels; the first renders, and learns it only
      // from its heartbeat (every third of a 3 s lease), not from an in-process event.
      const worker = await startServer(
        { MEDIAGATE_CONCURRENCY: '1', MEDIAGATE_LEASE_S: '3', DATABASE_URL: database?.url ?? '', MEDIAGATE_DATA_DIR: server.dataDir },
        { engine: pacedEngine(createSandboxEngine({ ffmpegPath: defaultFfmpegPath() }), 1000, 10) },
      );
      try {
        await idle();
        const id = String((await call('POST', VIDEO, { body: slow, base: worker.url })).body['id']);
        // Either server's workers may take the job; the cancel goes to the other one.
        const runner = await eventually(() => (worker.app.pool?.active === 1 ? worker : server.app.pool?.active === 1 ? server : false), {
          deadline: 30_000,
          what: 'a server to run it',
        });
        const canceller = runner === worker ? server : worker;
        const cancelled = await call('POST', `${VIDEO}/${id}/cancel`, { base: canceller.url });
        expect(cancelled.body).toMatchObject({ status: 'cancelled' });
        // The paced render would take 10 s more; the heartbeat runs every second.
        await eventually(() => runner.app.pool?.active === 0, { deadline: 5_000, what: 'the render to stop' });
        expect(await get(id)).toMatchObject({ status: 'cancelled', outputs: [], error: null });
        expect(await filesOf(id), 'files left').toEqual([]);
      } finally {
        await worker.close();
      }
    });

    it.runIf(backend === 'postgres')('makes one task when two API processes receive one key at the same instant', async () => {
      const port = await freePort();
      const other: ServiceProcess = await startProcess(['serve', '--no-workers'], {
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: database?.url ?? '',
        MEDIAGATE_DATA_DIR: server.dataDir,
        MEDIAGATE_API_KEYS: TEST_KEYS.join(','),
        LOG_LEVEL: 'silent',
      });
      try {
        for (let round = 0; round < 10; round += 1) {
          const key = `two-processes-${round}`;
          const answers = await Promise.all([
            call('POST', VIDEO, { body: fast, headers: { 'idempotency-key': key } }),
            call('POST', VIDEO, { body: fast, headers: { 'idempotency-key': key }, base: other.url }),
          ]);
          expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
          expect(answers[0]?.body['id']).toBe(answers[1]?.body['id']);
          expect(answers.filter((answer) => answer.headers.get('idempotent-replayed') === 'true')).toHaveLength(1);
        }
      } finally {
        other.child.kill('SIGTERM');
        await other.exited;
      }
      await idle();
    });
  });

  it('documents every operation, header and code in /openapi.json', async () => {
    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, Body>> };
    const { paths } = document;
    expect(paths[VIDEO]?.['get']).toMatchObject({ operationId: 'listVideos' });
    expect(paths[IMAGE]?.['get']).toMatchObject({ operationId: 'listImages' });
    expect(paths['/v1/video/generations/{task_id}/cancel']?.['post']).toMatchObject({ responses: { '200': {}, '404': {}, '409': {} } });
    expect(paths['/v1/images/generations/async/{task_id}/cancel']?.['post']).toMatchObject({ responses: { '200': {}, '404': {}, '409': {} } });
    for (const path of [VIDEO, IMAGE]) {
      const create = paths[path]?.['post'];
      expect(create?.['parameters']).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', in: 'header' })]));
      expect(create).toMatchObject({ responses: { '200': { headers: { 'Idempotent-Replayed': {} } }, '409': {}, '422': {} } });
    }
    const text = JSON.stringify(document);
    for (const code of ['task_not_cancellable', 'idempotency_key_reused', 'idempotency_key_in_use']) expect(text).toContain(code);
  });

  it('ignores any body sent to cancel', async () => {
    const id = await create(slow);
    const answer = await fetch(`${server.url}${VIDEO}/${id}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEYS[0]}`, 'content-type': 'text/plain' },
      body: 'stop it',
    });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ id, status: 'cancelled' });
    await idle();
  });

  describe('the SDK against the real server', () => {
    it('cancels, lists every page and replays an idempotent create', async () => {
      const client = new Mediagate({ baseURL: server.url, apiKey: TEST_KEYS[0], maxRetries: 0 });
      const created = await client.videos.create({ ...slow } as Parameters<typeof client.videos.create>[0], { idempotencyKey: `sdk-${backend}` });
      const replay = await client.videos.create({ ...slow } as Parameters<typeof client.videos.create>[0], { idempotencyKey: `sdk-${backend}` }).withResponse();
      expect(replay.data.id).toBe(created.id);
      expect(replay.response.idempotentReplayed).toBe(true);
      const cancelled = await client.videos.cancel(created.id);
      expect(cancelled.status).toBe('cancelled');
      const all: VideoTask[] = [];
      for await (const task of await client.videos.list({ limit: 3 })) all.push(task);
      expect(all.map((task) => task.id)).toContain(created.id);
      expect(new Set(all.map((task) => task.id)).size).toBe(all.length);
      const cancelledOnly = await client.videos.list({ status: 'cancelled', limit: 100 });
      expect(cancelledOnly.data.every((task) => task.status === 'cancelled')).toBe(true);
      await idle();
      const done = all.find((task) => task.status === 'completed');
      if (done) await expect(client.videos.cancel(done.id)).rejects.toBeInstanceOf(ConflictError);
      await expect(client.videos.cancel('vid_missing')).rejects.toBeInstanceOf(NotFoundError);
    });
  });
});
