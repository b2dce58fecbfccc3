import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyOutput } from '../../src/channels/output-copy.js';
import { mediagateAdapter as adapter, mediagateBody } from '../../src/channels/protocols/mediagate.js';
import type { ChannelJob } from '../../src/channels/protocol.js';
import { adapterContext, pollUntilSettled, type TestContext } from '../fakes/adapter-context.js';
import { startServer, TEST_KEYS, type TestServer } from '../helpers/server.js';
import { imageTask } from '../../src/wire/task-bodies.js';
import type { Task } from '../../src/store/records.js';

/** The upstream is a real mediagate (sandbox engine): the `mediagate` protocol is this interface. */
let upstream: TestServer;
let ctx: TestContext;
const dir = mkdtempSync(join(tmpdir(), 'mg-chan-'));

beforeAll(async () => {
  upstream = await startServer();
  ctx = adapterContext({ baseUrl: upstream.url, apiKey: TEST_KEYS[0], upstreamModel: 'vendora/famw-2.7-t2v', timeoutMs: 30_000 });
});
afterAll(async () => {
  await ctx.close();
  await upstream.close();
});

const T2V = 'vendora/famw-2.7-t2v';
const video = (params: Record<string, unknown>): ChannelJob => ({
  taskId: `tsk_${Math.random().toString(36).slice(2, 12)}`,
  kind: 'video',
  model: T2V,
  params: { model: T2V, prompt: 'a lighthouse', duration: 2, resolution: '480p', ...params },
});

describe('a failed image task keeps its code and param through a mediagate channel', () => {
  it("the image envelope carries data.error on FAILURE, and the adapter keeps the upstream's code and param", async () => {
    const failed: Task = {
      id: 'tsk_img',
      kind: 'image',
      model: 'vendora/famz-image-spicy',
      owner: 'o',
      status: 'failed',
      progress: 0,
      createdAt: 1_800_000_000_000,
      startedAt: null,
      completedAt: 1_800_000_001_000,
      error: { type: 'generation_error', code: 'content_policy_violation', message: 'the prompt was refused', param: 'prompt' },
      outputs: [],
      attempt: 1,
      version: 3,
      usage: { seconds: 0, images: 0, cost: 0 },
    };
    const body = imageTask(failed, () => '', 'USD');
    expect(body.data).toMatchObject({ status: 'FAILURE', fail_reason: 'the prompt was refused', error: failed.error });
    const stub = createServer((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)));
    await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
    const sctx = adapterContext({ baseUrl: base, apiKey: 'k', upstreamModel: 'vendora/famz-image-spicy' });
    try {
      expect(await adapter.poll(sctx, 'i:tsk_img')).toMatchObject({ state: 'failed', error: { code: 'content_policy_violation', param: 'prompt' } });
    } finally {
      await sctx.close();
      stub.closeAllConnections();
      await new Promise((resolve) => stub.close(resolve));
    }
  });
});

describe('mediagate adapter against a real mediagate', () => {
  it('video: accepted with the family in the id, polled to completion, output copied byte for byte', async () => {
    const submitted = await adapter.submit(ctx, video({}));
    if (submitted.outcome !== 'accepted') throw new Error(JSON.stringify(submitted));
    expect(submitted.upstreamId).toMatch(/^v:/);
    const { last, seen } = await pollUntilSettled(adapter, ctx, submitted.upstreamId, 60_000);
    expect(seen.every((s) => s.state !== 'throttled')).toBe(true);
    if (last.state !== 'succeeded') throw new Error(JSON.stringify(last));
    expect(last.outputs).toHaveLength(1);
    // The upstream's billed seconds (read from its file) come back as reported usage; its cost does not.
    expect(last.reportedUsage).toEqual({ seconds: 2 });
    const path = join(dir, 'v.mp4');
    const copied = await copyOutput(last.outputs[0]!.url, { channelBaseUrl: upstream.url, expect: 'video', destination: path });
    expect(copied).toMatchObject({ ok: true, contentType: 'video/mp4' });
    const direct = Buffer.from(await (await fetch(last.outputs[0]!.url)).arrayBuffer());
    expect(readFileSync(path).equals(direct)).toBe(true);
  });

  it('image: the image family, size or width/height, a PNG output', async () => {
    const model = 'vendora/famz-image-spicy';
    const job: ChannelJob = {
      taskId: 'tsk_img1',
      kind: 'image',
      model,
      params: { model, prompt: 'a fox', width: 256, height: 256, prompt_extend: true, output_format: 'png', n: 1 },
    };
    const ictx = adapterContext({ baseUrl: upstream.url, apiKey: TEST_KEYS[0], upstreamModel: model });
    try {
      expect(mediagateBody(ictx, job)).toEqual({ prompt: 'a fox', width: 256, height: 256, prompt_extend: true, model });
      expect(mediagateBody(ictx, { ...job, params: { ...job.params, size: '256x256' } })).toEqual({
        prompt: 'a fox',
        size: '256x256',
        prompt_extend: true,
        model,
      });
      const submitted = await adapter.submit(ictx, job);
      if (submitted.outcome !== 'accepted') throw new Error(JSON.stringify(submitted));
      expect(submitted.upstreamId).toMatch(/^i:/);
      const { last } = await pollUntilSettled(adapter, ictx, submitted.upstreamId, 60_000);
      if (last.state !== 'succeeded') throw new Error(JSON.stringify(last));
      expect(last.reportedUsage).toEqual({ images: 1 });
      const copied = await copyOutput(last.outputs[0]!.url, { channelBaseUrl: upstream.url, expect: 'image', destination: join(dir, 'i.png') });
      expect(copied).toMatchObject({ ok: true, contentType: 'image/png' });
    } finally {
      await ictx.close();
    }
  });

  it('cancel: a task still running upstream is cancelled; a finished or unknown one is not cancellable', async () => {
    const running = await adapter.submit(ctx, video({ prompt: 'cancel me' }));
    if (running.outcome !== 'accepted') throw new Error(JSON.stringify(running));
    expect(await adapter.cancel?.(ctx, running.upstreamId)).toMatchObject({ outcome: 'cancelled' });
    // Cancelling a cancelled task answers 200 with it again (decisions 8.1).
    expect(await adapter.cancel?.(ctx, running.upstreamId)).toMatchObject({ outcome: 'cancelled' });
    const polled = await adapter.poll(ctx, running.upstreamId);
    expect(polled).toMatchObject({ state: 'failed', upstreamWord: 'cancelled' });

    const model = 'vendora/famz-image-spicy';
    const ictx = adapterContext({ baseUrl: upstream.url, apiKey: TEST_KEYS[0], upstreamModel: model });
    try {
      const job: ChannelJob = {
        taskId: 'tsk_img_cancel',
        kind: 'image',
        model,
        params: { model, prompt: 'a fox', width: 256, height: 256, output_format: 'png', n: 1 },
      };
      const done = await adapter.submit(ictx, job);
      if (done.outcome !== 'accepted') throw new Error(JSON.stringify(done));
      const { last } = await pollUntilSettled(adapter, ictx, done.upstreamId, 60_000);
      expect(last.state).toBe('succeeded');
      expect(await adapter.cancel?.(ictx, done.upstreamId)).toMatchObject({ outcome: 'not_cancellable', reason: 'HTTP 409 task_not_cancellable' });
    } finally {
      await ictx.close();
    }
    expect(await adapter.cancel?.(ctx, 'v:vid_00000000unknown')).toMatchObject({ outcome: 'not_cancellable' });
  });

  it("a request the upstream refuses keeps the upstream's code and param (final)", async () => {
    const outcome = await adapter.submit(ctx, video({ duration: 99 }));
    expect(outcome).toMatchObject({ outcome: 'rejected', error: { code: 'unsupported_value', param: 'duration' } });
  });

  it('a bad channel key is refused (fail over), and probe says so', async () => {
    const bad = adapterContext({ baseUrl: upstream.url, apiKey: 'mg_wrong_key_000000000000', upstreamModel: T2V });
    try {
      expect(await adapter.submit(bad, video({}))).toMatchObject({ outcome: 'refused', reason: 'HTTP 401' });
      expect(await adapter.probe(bad)).toEqual({ ok: false, reason: 'HTTP 401' });
    } finally {
      await bad.close();
    }
    expect(await adapter.probe(ctx)).toMatchObject({ ok: true });
  });

  it('an unknown id is not_found', async () => {
    expect(await adapter.poll(ctx, 'v:vid_doesnotexist')).toEqual({ state: 'not_found', upstreamWord: 'HTTP 404' });
    expect(await adapter.poll(ctx, 'i:img_doesnotexist')).toEqual({ state: 'not_found', upstreamWord: 'HTTP 404' });
  });

  it('an upstream that is down is refused before sending (not_sent), never unknown', async () => {
    const down = adapterContext({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', upstreamModel: T2V });
    try {
      expect(await adapter.submit(down, video({}))).toMatchObject({ outcome: 'refused', reason: 'not sent: ECONNREFUSED' });
      expect(await adapter.poll(down, 'v:x')).toMatchObject({ state: 'transient' });
    } finally {
      await down.close();
    }
  });

  it('a submission whose answer is lost is unknown; reconcile sends the same Idempotency-Key and finds a task to poll', async () => {
    const keys: string[] = [];
    let lose = true;
    // Forwards to the upstream, then (once) destroys the client's socket instead of answering.
    const proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        keys.push(String(req.headers['idempotency-key'] ?? ''));
        void fetch(`${upstream.url}${req.url ?? '/'}`, {
          method: req.method ?? 'GET',
          headers: {
            authorization: String(req.headers['authorization'] ?? ''),
            'content-type': 'application/json',
            'idempotency-key': String(req.headers['idempotency-key'] ?? ''),
          },
          ...(req.method === 'POST' ? { body: Buffer.concat(chunks) } : {}),
        }).then(async (answer) => {
          const body = Buffer.from(await answer.arrayBuffer());
          if (req.method === 'POST' && lose) {
            lose = false;
            req.socket.destroy();
            return;
          }
          res.writeHead(answer.status, { 'content-type': 'application/json' }).end(body);
        });
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const pctx = adapterContext({ baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, apiKey: TEST_KEYS[0], upstreamModel: T2V });
    try {
      const job = video({});
      expect(await adapter.submit(pctx, job)).toMatchObject({ outcome: 'unknown' });
      const found = await adapter.reconcile!(pctx, job);
      if (found.outcome !== 'found') throw new Error(JSON.stringify(found));
      expect(keys).toEqual([job.taskId, job.taskId]);
      expect((await adapter.poll(pctx, found.upstreamId)).state).not.toBe('not_found');
    } finally {
      await pctx.close();
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });
});
