/**
 * Media on S3-compatible object storage (docs/operations/scaling-out.md#media-on-s3), against a
 * real S3 server: Ceph's RADOS Gateway, started by `.ci/s3-server` (helpers/s3.ts). The blob
 * store keeps S3's promise that an object is visible whole or not at all; the start-up checks
 * exit 78 naming the variable at fault; `mediagate storage check` leaves nothing behind; a
 * server on S3 keeps no media in its data directory, serves outputs through `/files` (ranges
 * included) or as the store's presigned URLs, and its retention leaves the bucket clean, as a
 * listing of the bucket shows.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { rotateSigningSecret } from '../src/storage/signing.js';
import { S3BlobStore } from '../src/storage/s3/blobs.js';
import type { S3Client } from '../src/storage/s3/client.js';
import { eventually } from './helpers/eventually.js';
import { emptyPrefix, freshPrefix, listKeys, s3Client, s3Env, s3Target, type S3Target } from './helpers/s3.js';
import { startServer, TEST_KEYS, type TestServer } from './helpers/server.js';
import { CLI } from './helpers/process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const VIDEO = '/v1/video/generations';
const { target, reason } = s3Target();
type Body = Record<string, unknown>;

/** `mediagate <args>` as built (dist/), with exactly `env` on top of PATH and HOME. */
async function mediagate(args: readonly string[], env: Record<string, string>): Promise<{ stdout: string; stderr: string; code: number }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: ROOT, env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ stdout, stderr, code: error ? (typeof error.code === 'number' ? error.code : 1) : 0 }),
    );
  });
}

async function call(server: TestServer, method: string, path: string, body?: unknown): Promise<{ status: number; body: Body }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TEST_KEYS[0]}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Body };
}

/** Creates a 2 s video task with a data-URL first frame and waits until it ends. */
async function renderOne(server: TestServer): Promise<{ id: string; url: string }> {
  const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#2040c0' } })
    .png()
    .toBuffer();
  const created = await call(server, 'POST', VIDEO, {
    model: 'vendora/famw-3.0-i2v-spicy',
    prompt: 'on s3',
    duration: 2,
    image: `data:image/png;base64,${png.toString('base64')}`,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const id = String(created.body['id']);
  const task = await eventually(
    async () => {
      const { body } = await call(server, 'GET', `${VIDEO}/${id}`);
      return ['completed', 'failed', 'cancelled'].includes(String(body['status'])) && body;
    },
    { deadline: 60_000, what: `task ${id} to end` },
  );
  expect(task['status'], JSON.stringify(task)).toBe('completed');
  const url = String((task['outputs'] as { url: string }[])[0]?.url);
  return { id, url };
}

async function entries(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}

describe.runIf(target === undefined)('S3 specs', () => {
  it.skip(reason, () => {});
});

describe.runIf(target !== undefined)('the S3 blob store on a real S3 server', () => {
  const s3 = target as S3Target;
  const prefix = freshPrefix();
  let client: S3Client;
  let blobs: S3BlobStore;
  let dir: string;
  beforeAll(async () => {
    client = s3Client(s3);
    blobs = new S3BlobStore(client, s3.bucket, `${prefix}/`);
    dir = await mkdtemp(join(tmpdir(), 'mediagate-s3-'));
  });
  afterAll(async () => {
    await emptyPrefix(s3, prefix);
    await client.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('moves a file in, opens it whole and by range, lists and deletes it, byte for byte', async () => {
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    const source = join(dir, 'render.mp4');
    await writeFile(source, bytes);
    await blobs.putFile('outputs/vid_a/one.mp4', source, 'video/mp4');
    expect(await entries(dir)).toEqual([]);
    const blob = await blobs.open('outputs/vid_a/one.mp4');
    expect(blob?.size).toBe(bytes.length);
    const whole = await Readable.from(blob?.stream() ?? []).toArray();
    expect(Buffer.concat(whole as Buffer[]).equals(bytes)).toBe(true);
    const part = await Readable.from(blob?.stream({ start: 1000, end: 1999 }) ?? []).toArray();
    expect(Buffer.concat(part as Buffer[]).equals(bytes.subarray(1000, 2000))).toBe(true);
    await blobs.putBytes('inputs/pub_x/input.png', Buffer.from('png'), 'image/png');
    expect((await blobs.read('inputs/pub_x/input.png'))?.toString()).toBe('png');
    expect(await listKeys(s3, prefix)).toEqual(['inputs/pub_x/input.png', 'outputs/vid_a/one.mp4']);
    await blobs.delete('outputs/vid_a/one.mp4');
    await blobs.delete('inputs/pub_x/input.png');
    await blobs.delete('inputs/never/there');
    expect(await listKeys(s3, prefix)).toEqual([]);
    expect(await blobs.open('outputs/vid_a/one.mp4')).toBeUndefined();
  });

  it('leaves no object behind an upload cut off midway (a worker killed during it)', async () => {
    const half = randomBytes(512 * 1024);
    // The body dies after half of the declared length, as it does when its process is killed.
    const body = new Readable({
      read() {
        this.push(half);
        this.destroy(new Error('process killed'));
      },
    });
    await expect(client.putObject(`${prefix}/outputs/vid_cut/partial.mp4`, body, half.length * 2, 'video/mp4')).rejects.toThrow();
    expect(await listKeys(s3, prefix)).toEqual([]);
    expect(await client.headObject(`${prefix}/outputs/vid_cut/partial.mp4`)).toBeUndefined();
  });
});

describe.runIf(target !== undefined)('the S3 configuration, checked at start', () => {
  const s3 = target as S3Target;
  const prefix = freshPrefix();
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mediagate-s3-config-'));
  });
  afterAll(async () => {
    await emptyPrefix(s3, prefix);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('names the variable at fault: a missing bucket name, credentials, presigned URLs without S3', () => {
    const env = s3Env(s3, prefix);
    const fault = (vars: Record<string, string>): string => {
      try {
        loadConfig(vars);
      } catch (error) {
        if (error instanceof ConfigError) return error.message;
        throw error;
      }
      return '';
    };
    const { MEDIAGATE_S3_BUCKET: _bucket, ...noBucket } = env;
    expect(fault(noBucket)).toMatch(/^MEDIAGATE_S3_BUCKET /);
    const { AWS_SECRET_ACCESS_KEY: _secret, ...noSecret } = env;
    expect(fault(noSecret)).toMatch(/^AWS_SECRET_ACCESS_KEY /);
    expect(fault({ MEDIAGATE_OUTPUT_URLS: 'presigned' })).toMatch(/^MEDIAGATE_OUTPUT_URLS=presigned /);
    expect(fault({ ...env, MEDIAGATE_S3_ENDPOINT: 'ftp://x' })).toMatch(/^MEDIAGATE_S3_ENDPOINT /);
    expect(fault({ ...env, MEDIAGATE_STORAGE: 'gcs' })).toMatch(/^MEDIAGATE_STORAGE /);
  });

  it('exits 78 naming MEDIAGATE_S3_BUCKET when the bucket does not exist, never creating it', async () => {
    const env = { ...s3Env(s3, prefix), MEDIAGATE_S3_BUCKET: `missing-${randomBytes(4).toString('hex')}`, PORT: '0', MEDIAGATE_DATA_DIR: dataDir };
    const ran = await mediagate(['serve'], env);
    expect(ran.code, ran.stderr).toBe(78);
    expect(ran.stderr).toContain('MEDIAGATE_S3_BUCKET');
    expect(ran.stderr).toContain(env.MEDIAGATE_S3_BUCKET);
    const worker = await mediagate(['worker'], env);
    expect(worker.code, worker.stderr).toBe(78);
    const wrongKey = await mediagate(['storage', 'check'], { ...s3Env(s3, prefix), AWS_SECRET_ACCESS_KEY: 'not-the-secret', MEDIAGATE_DATA_DIR: dataDir });
    expect(wrongKey.code, wrongKey.stderr).toBe(78);
    expect(wrongKey.stderr).toContain('AWS_ACCESS_KEY_ID');
    expect(wrongKey.stderr).not.toContain('not-the-secret');
  }, 120_000);

  it('`mediagate storage check` writes, reads, lists and deletes a probe object, and leaves nothing', async () => {
    const ran = await mediagate(['storage', 'check'], { ...s3Env(s3, prefix), MEDIAGATE_DATA_DIR: dataDir });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(`s3 media store at s3://${s3.bucket}/${prefix}/: ok`);
    for (const step of ['write', 'read', 'list', 'delete']) expect(ran.stdout).toMatch(new RegExp(`^  ${step} +\\d+ ms$`, 'm'));
    expect(await listKeys(s3, prefix)).toEqual([]);
  }, 60_000);
});

describe.runIf(target !== undefined)('a mediagate with its media on S3', () => {
  const s3 = target as S3Target;
  const prefix = freshPrefix();
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ ...s3Env(s3, prefix), MEDIAGATE_CONCURRENCY: '1', MEDIAGATE_SWEEP_INTERVAL_S: '1' });
  });
  afterAll(async () => {
    await server?.close();
    await emptyPrefix(s3, prefix);
  });

  it('renders into the bucket and serves the output at /files with ranges; no media touches the data directory', async () => {
    const { id, url } = await renderOne(server);
    expect(url.startsWith(`${server.url}/files/${id}/`)).toBe(true);
    const name = url.split('?')[0]?.split('/').pop() ?? '';
    // The task's stored input went with its end; its output is in the bucket.
    await eventually(async () => (await listKeys(s3, prefix)).every((key) => !key.startsWith('inputs/')), { what: 'the stored input deleted' });
    expect(await listKeys(s3, prefix)).toEqual([`outputs/${id}/${name}`]);
    const whole = await fetch(url);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('video/mp4');
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    const bytes = Buffer.from(await whole.arrayBuffer());
    expect(bytes.subarray(4, 8).toString()).toBe('ftyp');
    const part = await fetch(url, { headers: { range: 'bytes=10-99' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 10-99/${bytes.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(10, 100))).toBe(true);
    // Only this process's scratch and database live on its disk.
    expect((await entries(server.dataDir)).filter((entry) => entry === 'outputs' || entry === 'inputs')).toEqual([]);
  }, 90_000);
});

describe.runIf(target !== undefined)('retention and sweeps on S3', () => {
  const s3 = target as S3Target;
  const prefix = freshPrefix();
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ ...s3Env(s3, prefix), MEDIAGATE_TASK_RETENTION_S: '2', MEDIAGATE_OUTPUT_TTL_S: '3', MEDIAGATE_SWEEP_INTERVAL_S: '1' });
  });
  afterAll(async () => {
    await server?.close();
    await emptyPrefix(s3, prefix);
  });

  it('deletes a task past its retention with its objects, and what a crash left once expired: the bucket lists clean', async () => {
    const client = s3Client(s3);
    try {
      // An output of an attempt whose process died before it settled: no task points at it.
      await client.putObject(`${prefix}/outputs/vid_left_by_a_crash/x.mp4`, Buffer.from('left'), 4, 'video/mp4');
      const { id } = await renderOne(server);
      expect((await listKeys(s3, prefix)).some((key) => key.startsWith(`outputs/${id}/`))).toBe(true);
      await eventually(async () => (await listKeys(s3, prefix)).length === 0, { deadline: 20_000, what: 'the bucket prefix to list empty' });
      expect((await call(server, 'GET', `${VIDEO}/${id}`)).status).toBe(404);
    } finally {
      await client.close();
    }
  }, 60_000);
});

describe.runIf(target !== undefined)('presigned output URLs (MEDIAGATE_OUTPUT_URLS=presigned)', () => {
  const s3 = target as S3Target;
  const prefix = freshPrefix();
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ ...s3Env(s3, prefix), MEDIAGATE_OUTPUT_URLS: 'presigned', MEDIAGATE_SIGNING_REFRESH_S: '1' });
  });
  afterAll(async () => {
    await server?.close();
    await emptyPrefix(s3, prefix);
  });

  it("are the store's own URLs: no API key, ranges, the output's type and name, and refused once altered", async () => {
    const { id, url } = await renderOne(server);
    expect(url.startsWith(`${s3.endpoint}/${s3.bucket}/${prefix}/outputs/${id}/`)).toBe(true);
    expect(new URL(url).searchParams.get('X-Amz-Expires')).toBe('86400');
    const whole = await fetch(url);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('video/mp4');
    expect(whole.headers.get('content-disposition')).toMatch(/^inline; filename="[A-Za-z0-9_-]+\.mp4"$/);
    const bytes = Buffer.from(await whole.arrayBuffer());
    const part = await fetch(url, { headers: { range: 'bytes=0-7' } });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(0, 8))).toBe(true);
    const altered = new URL(url);
    altered.searchParams.set('response-content-type', 'text/html');
    expect((await fetch(altered)).status).toBe(403);
    // The same URL at every poll (signed as of the completion), like a /files URL.
    const again = await call(server, 'GET', `${VIDEO}/${id}`);
    expect((again.body['outputs'] as { url: string }[])[0]?.url).toBe(url);
  }, 90_000);

  it('are signed by the store, not by the rotated secret: a rotation leaves them working, as documented', async () => {
    const { id, url } = await renderOne(server);
    await rotateSigningSecret(server.app.store, 0);
    expect((await fetch(url)).status).toBe(200);
    // Polled again after the process read the new secret (every second here): the same URL, still served.
    const polled = await eventually(
      async () => {
        const { body } = await call(server, 'GET', `${VIDEO}/${id}`);
        return (body['outputs'] as { url: string }[])[0]?.url;
      },
      { what: 'the task polled' },
    );
    expect(polled).toBe(url);
    expect((await fetch(polled)).status).toBe(200);
  }, 90_000);
});
