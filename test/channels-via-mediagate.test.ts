// The interface through a `mediagate` channel (docs/guides/channels.md#configuration, #what-clients-see): mediagate A routes
// every model to a second mediagate B, as `MEDIAGATE_TEST_TOPOLOGY=via-channel` does for the
// whole conformance suite (docs/development.md, "Tests"). This spec proves that topology does what it says:
// a task created at A is created at B with B's key, its output is copied into A's storage and
// served under A's signed URL with the bytes B rendered, the statuses are mapped, and a task B
// fails keeps B's error (code, param) at A.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './helpers/eventually.js';
import { startServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let upstream: { readonly url: string; readonly key: string };

beforeAll(async () => {
  process.env['MEDIAGATE_TEST_TOPOLOGY'] = 'via-channel';
  try {
    server = await startServer();
  } finally {
    delete process.env['MEDIAGATE_TEST_TOPOLOGY'];
  }
  if (!server.upstream) throw new Error('startServer did not start the upstream mediagate');
  upstream = server.upstream;
});

afterAll(async () => {
  await server?.close();
});

type Json = Record<string, unknown>;

async function call(base: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as Json };
}

const keyA = (): string => server.keys[0];

async function finalVideo(id: string, seen: Set<string>): Promise<Json> {
  return eventually(
    async () => {
      const { json } = await call(server.url, keyA(), 'GET', `/v1/video/generations/${id}`);
      seen.add(String(json['status']));
      return json['status'] === 'completed' || json['status'] === 'failed' ? json : undefined;
    },
    { deadline: 60_000, interval: 100, what: `video task ${id} to finish at A` },
  );
}

describe('a video task through a mediagate channel', () => {
  it('is created at B with B key, and completes at A with an MP4 copied into A storage under A signed URL', async () => {
    const created = await call(server.url, keyA(), 'POST', '/v1/video/generations', { model: 'vendora/famw-2.7-t2v', prompt: 'via a channel', duration: 5 });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const seen = new Set<string>();
    const task = await finalVideo(String(created.json['id']), seen);
    expect(task['status'], JSON.stringify(task['error'])).toBe('completed');
    // Observed at A: queued, then processing (B's status mapped), then completed.
    expect([...seen].filter((status) => status !== 'completed')).toEqual(expect.arrayContaining(['queued']));
    expect(task['progress']).toBe(100);

    // B holds the task (the first video task of this file), created with B's own key.
    const listed = await call(upstream.url, upstream.key, 'GET', '/v1/video/generations?limit=100');
    const atB = listed.json['data'] as Json[];
    expect(atB).toHaveLength(1);
    expect(atB[0]).toMatchObject({ status: 'completed', model: 'vendora/famw-2.7-t2v' });
    const outputsB = atB[0]?.['outputs'] as { url: string }[];

    // A's output: A's origin, A's signature; the bytes are an MP4.
    const outputs = task['outputs'] as { type: string; url: string }[];
    expect(outputs).toHaveLength(1);
    const url = new URL(outputs[0]?.url ?? '');
    expect(url.origin).toBe(new URL(server.url).origin);
    expect(url.origin).not.toBe(new URL(upstream.url).origin);
    const bytes = Buffer.from(await (await fetch(url)).arrayBuffer());
    expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
    const bytesB = Buffer.from(await (await fetch(outputsB[0]?.url ?? '')).arrayBuffer());
    expect(bytes.equals(bytesB)).toBe(true);
    // Without the signature, A refuses: the URL is A's own, not B's passed through.
    expect((await fetch(`${url.origin}${url.pathname}`)).status).toBeGreaterThanOrEqual(400);
  });

  it('a task B fails keeps B error code and param at A', async () => {
    // B cannot fetch this input (the address policy refuses a loopback address): B fails the task.
    const created = await call(server.url, keyA(), 'POST', '/v1/video/generations', {
      model: 'vendora/famw-2.7-i2v',
      prompt: 'unfetchable input',
      image: 'https://127.0.0.1:9/none.png',
    });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const task = await finalVideo(String(created.json['id']), new Set());
    expect(task['status']).toBe('failed');
    const error = task['error'] as Json;
    expect(error).toMatchObject({ type: 'generation_error', param: 'image' });
    expect(error['code']).not.toBe('upstream_error');
    expect(String(error['message'])).not.toContain(upstream.key);
    // B failed it (A passed the input on as it is), with the same code and param.
    const listed = await call(upstream.url, upstream.key, 'GET', '/v1/video/generations?limit=100');
    const failedAtB = (listed.json['data'] as Json[]).filter((candidate) => candidate['status'] === 'failed');
    expect(failedAtB).toHaveLength(1);
    expect(failedAtB[0]?.['error']).toMatchObject({ code: error['code'], param: 'image' });
  });
});

describe('an image task through a mediagate channel', () => {
  it('completes at A with a PNG of the requested size under A signed URL', async () => {
    const created = await call(server.url, keyA(), 'POST', '/v1/images/generations/async', {
      model: 'vendora/famz-image-spicy',
      prompt: 'a lighthouse',
      size: '1024x768',
    });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const id = String((created.json['data'] as Json)['task_id']);
    const data = await eventually(
      async () => {
        const { json } = await call(server.url, keyA(), 'GET', `/v1/images/generations/async/${id}`);
        const body = json['data'] as Json;
        return body['status'] === 'SUCCESS' || body['status'] === 'FAILURE' ? body : undefined;
      },
      { deadline: 60_000, interval: 100, what: `image task ${id} to finish at A` },
    );
    expect(data['status'], String(data['fail_reason'])).toBe('SUCCESS');
    const outputs = data['outputs'] as string[];
    expect(outputs).toHaveLength(1);
    const url = new URL(outputs[0] ?? '');
    expect(url.origin).toBe(new URL(server.url).origin);
    const png = Buffer.from(await (await fetch(url)).arrayBuffer());
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1024, 768]);
    // B rendered it: one image task at B.
    const listed = await call(upstream.url, upstream.key, 'GET', '/v1/images/generations/async?limit=100');
    expect(((listed.json['data'] as Json)['items'] as Json[]).length).toBe(1);
  });
});
