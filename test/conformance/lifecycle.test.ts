/**
 * Conformance: task lifecycles with real rendering (decisions §4, decisions §5, decisions §6).
 *
 * Video: queued -> processing -> completed, progress and timestamps, one `{type:"video", url}`
 * output fetchable without the API key, H.264/MP4 (+faststart) of the resolved geometry and
 * duration, AAC audio exactly when `audio_enable` is true; tampered URLs rejected; an
 * unfetchable input makes the task `failed` with a `generation_error`.
 * Image: QUEUED -> IN_PROGRESS -> SUCCESS, one PNG of exactly the resolved size.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ffprobe from '@ffprobe-installer/ffprobe';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { Api, expectImageCreated, expectQueuedVideoTask, field, imageDataUrl, isRecord, type JsonObject } from './support.js';

const execFileAsync = promisify(execFile);

const POLL_MS = 200;
const DEADLINE_MS = 60_000;
const TEST_TIMEOUT_MS = 120_000;

const SQUARE_1000 = await imageDataUrl(1000, 1000, 'png');
const PORTRAIT_600x800 = await imageDataUrl(600, 800, 'png');
const PORTRAIT_400x800 = await imageDataUrl(400, 800, 'jpeg');
const SQUARE_400 = await imageDataUrl(400, 400, 'png');

let server: TestServer;
let api: Api;
let workDir: string;

beforeAll(async () => {
  server = await startServer();
  api = new Api(server);
  workDir = await mkdtemp(join(tmpdir(), 'conf-lifecycle-'));
});

afterAll(async () => {
  await server?.close();
  if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// Video polling with invariants checked on every observation
// ---------------------------------------------------------------------------------------------

type Task = Record<string, unknown>;

const VIDEO_ORDER: Record<string, number> = { queued: 0, processing: 1, completed: 2, failed: 2, cancelled: 2 };

async function pollVideo(id: string): Promise<{ final: Task; history: Task[] }> {
  const history: Task[] = [];
  let last = '';
  const final = await eventually(
    async () => {
      const res = await api.getVideo(id);
      last = res.text;
      // A wrong answer fails at once rather than being retried until the deadline.
      if (res.status !== 200 || !isRecord(res.json)) return { kind: 'bad' as const, res };
      const task = res.json as Task;
      history.push(task);
      const status = String(task['status']);
      return (status === 'completed' || status === 'failed' || status === 'cancelled') && { kind: 'final' as const, task };
    },
    { deadline: DEADLINE_MS, interval: POLL_MS, what: `task ${id} to finish` },
  ).catch((error: unknown) => {
    throw new Error(`${error instanceof Error ? error.message : String(error)}; last: ${last}`);
  });
  if (final.kind === 'bad') {
    expect(final.res.status, final.res.text).toBe(200);
    expect(isRecord(final.res.json)).toBe(true);
  }
  return { final: final.kind === 'final' ? final.task : {}, history };
}

function checkVideoHistory(history: readonly Task[]): void {
  const first = history[0];
  expect(first).toBeDefined();
  let lastOrder = 0;
  let lastProgress = -1;
  for (const task of history) {
    const status = String(task['status']);
    expect(Object.keys(VIDEO_ORDER), `status ${status}`).toContain(status);
    const order = VIDEO_ORDER[status] ?? -1;
    expect(order, `status went backwards to ${status}`).toBeGreaterThanOrEqual(lastOrder);
    lastOrder = order;
    expect(task['id']).toBe(first?.['id']);
    expect(task['created_at']).toBe(first?.['created_at']);
    expect(task['object']).toBe('video.generation');
    if (status === 'queued') {
      expect(task['started_at'], 'queued: started_at').toBeNull();
      expect(task['completed_at'], 'queued: completed_at').toBeNull();
      expect(task['outputs'], 'queued: outputs').toEqual([]);
      expect(task['error'], 'queued: error').toBeNull();
    }
    if (status === 'processing') {
      const progress = task['progress'];
      expect(Number.isInteger(progress), `processing: progress ${String(progress)} is an integer`).toBe(true);
      expect(Number(progress)).toBeGreaterThanOrEqual(0);
      expect(Number(progress)).toBeLessThanOrEqual(100);
      expect(Number(progress), 'progress never decreases').toBeGreaterThanOrEqual(lastProgress);
      lastProgress = Number(progress);
      expect(Number.isInteger(task['started_at']), 'processing: started_at set').toBe(true);
      expect(Number(task['started_at'])).toBeGreaterThanOrEqual(Number(task['created_at']));
      expect(task['completed_at'], 'processing: completed_at').toBeNull();
      expect(task['outputs'], 'processing: outputs').toEqual([]);
      expect(task['error'], 'processing: error').toBeNull();
    }
  }
  if (lastProgress >= 0) {
    const final = history[history.length - 1];
    if (final?.['status'] === 'completed') expect(Number(final['progress'])).toBeGreaterThanOrEqual(lastProgress);
  }
}

function checkCompleted(task: Task, model: string): string {
  expect(task, JSON.stringify(task)).toMatchObject({ object: 'video.generation', model, status: 'completed', progress: 100, error: null });
  const createdAt = Number(task['created_at']);
  const startedAt = task['started_at'];
  const completedAt = task['completed_at'];
  expect(Number.isInteger(startedAt)).toBe(true);
  expect(Number.isInteger(completedAt)).toBe(true);
  expect(Number(startedAt)).toBeGreaterThanOrEqual(createdAt);
  expect(Number(completedAt)).toBeGreaterThanOrEqual(Number(startedAt));
  const outputs = task['outputs'];
  expect(Array.isArray(outputs)).toBe(true);
  expect(outputs).toHaveLength(1);
  const output = (outputs as unknown[])[0];
  expect(output).toMatchObject({ type: 'video', url: expect.any(String) });
  const url = String(field(output, 'url'));
  expect(url).toMatch(/^https?:\/\//);
  expect(() => new URL(url)).not.toThrow();
  return url;
}

// ---------------------------------------------------------------------------------------------
// Media inspection
// ---------------------------------------------------------------------------------------------

interface Probe {
  readonly width: number;
  readonly height: number;
  readonly videoCodec: string;
  readonly videoDuration: number;
  readonly formatDuration: number;
  readonly formatName: string;
  readonly audioCodecs: readonly string[];
}

async function probe(file: string): Promise<Probe> {
  const { stdout } = await execFileAsync(ffprobe.path, ['-v', 'error', '-show_streams', '-show_format', '-of', 'json', file]);
  const parsed: unknown = JSON.parse(stdout);
  const streams = field(parsed, 'streams');
  const list = Array.isArray(streams) ? (streams as unknown[]) : [];
  const video = list.find((s) => field(s, 'codec_type') === 'video');
  const audio = list.filter((s) => field(s, 'codec_type') === 'audio');
  expect(video, 'a video stream').toBeDefined();
  const format = field(parsed, 'format');
  return {
    width: Number(field(video, 'width')),
    height: Number(field(video, 'height')),
    videoCodec: String(field(video, 'codec_name')),
    videoDuration: Number(field(video, 'duration')),
    formatDuration: Number(field(format, 'duration')),
    formatName: String(field(format, 'format_name')),
    audioCodecs: audio.map((s) => String(field(s, 'codec_name'))),
  };
}

/** Top-level MP4 box types in file order. */
function topLevelBoxes(buffer: Buffer): string[] {
  const boxes: string[] = [];
  let offset = 0;
  while (offset + 8 <= buffer.length) {
    let size = buffer.readUInt32BE(offset);
    const type = buffer.toString('latin1', offset + 4, offset + 8);
    if (size === 1 && offset + 16 <= buffer.length) size = Number(buffer.readBigUInt64BE(offset + 8));
    if (size === 0) size = buffer.length - offset;
    if (size < 8) break;
    boxes.push(type);
    offset += size;
  }
  return boxes;
}

async function download(url: string): Promise<{ status: number; contentType: string; body: Buffer }> {
  const res = await fetch(url);
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', body: Buffer.from(await res.arrayBuffer()) };
}

// ---------------------------------------------------------------------------------------------
// Video renders
// ---------------------------------------------------------------------------------------------

interface RenderCase {
  readonly name: string;
  readonly body: JsonObject;
  readonly width: number;
  readonly height: number;
  readonly duration: number;
  readonly audio: boolean;
}

const RENDERS: readonly RenderCase[] = [
  {
    name: 'vendora/famw-2.7-t2v defaults: 5 s, 720p, no aspect_ratio -> 16:9 1280x720, no audio',
    body: { model: 'vendora/famw-2.7-t2v', prompt: 'a sailboat crossing a calm bay' },
    width: 1280,
    height: 720,
    duration: 5,
    audio: false,
  },
  {
    name: 'vendora/famw-2.7-t2v 480p 9:16 2 s -> 480x854',
    body: { model: 'vendora/famw-2.7-t2v', prompt: 'a waterfall', resolution: '480p', aspect_ratio: '9:16', duration: 2 },
    width: 480,
    height: 854,
    duration: 2,
    audio: false,
  },
  {
    name: 'vendora/famw-2.7-t2v adaptive without an input image -> 16:9, 480p 854x480',
    body: { model: 'vendora/famw-2.7-t2v', prompt: 'a desert road', resolution: '480p', aspect_ratio: 'adaptive', duration: 2 },
    width: 854,
    height: 480,
    duration: 2,
    audio: false,
  },
  {
    name: 'vendora/famw-2.7-i2v with a 1000x1000 image (model lists no ratios) -> 16:9 1280x720',
    body: { model: 'vendora/famw-2.7-i2v', prompt: 'the scene comes alive', image: SQUARE_1000, duration: 2 },
    width: 1280,
    height: 720,
    duration: 2,
    audio: false,
  },
  {
    name: 'vendora/famw-3.0-i2v-spicy with a square image, no aspect_ratio, audio_enable true -> 1:1 720x720 with audio',
    body: { model: 'vendora/famw-3.0-i2v-spicy', prompt: 'the scene comes alive', image: SQUARE_1000, duration: 2, audio_enable: true },
    width: 720,
    height: 720,
    duration: 2,
    audio: true,
  },
  {
    name: 'vendora/famw-3.0-i2v-spicy adaptive with a 600x800 image -> 3:4 720x960',
    body: { model: 'vendora/famw-3.0-i2v-spicy', prompt: 'the scene comes alive', image: PORTRAIT_600x800, aspect_ratio: 'adaptive', duration: 2 },
    width: 720,
    height: 960,
    duration: 2,
    audio: false,
  },
  {
    name: 'vendorb/famsd-2.5-i2v-spicy 480p 21:9 4 s -> 1120x480',
    body: { model: 'vendorb/famsd-2.5-i2v-spicy', prompt: 'a wide panorama', image: SQUARE_400, resolution: '480p', aspect_ratio: '21:9', duration: 4 },
    width: 1120,
    height: 480,
    duration: 4,
    audio: false,
  },
  {
    name: 'vendorc-h3-max-image-to-video defaults (480p, 5 s) with a square image -> 16:9 854x480',
    body: { model: 'vendorc-h3-max-image-to-video', prompt: 'a slow zoom', image: SQUARE_1000 },
    width: 854,
    height: 480,
    duration: 5,
    audio: false,
  },
  {
    name: 'vendorc-h3-image-to-video 2K (1440) with a square image -> 16:9 2560x1440',
    body: { model: 'vendorc-h3-image-to-video', prompt: 'a slow zoom', image: SQUARE_1000, resolution: '2K' },
    width: 2560,
    height: 1440,
    duration: 5,
    audio: false,
  },
  {
    name: 'vendorc-h3-enhanced-reference-to-video 768p 1:1 -> 768x768',
    body: { model: 'vendorc-h3-enhanced-reference-to-video', prompt: 'a spinning top', aspect_ratio: '1:1' },
    width: 768,
    height: 768,
    duration: 5,
    audio: false,
  },
  {
    name: 'vendord/v6/image-to-video without image, 360p 1 s -> 640x360, audio by default',
    body: { model: 'vendord/v6/image-to-video', prompt: 'fireworks over a harbour', resolution: '360p', duration: 1 },
    width: 640,
    height: 360,
    duration: 1,
    audio: true,
  },
  {
    name: 'vendord/v6/image-to-video with a 400x400 image, audio_enable false -> 640x360 without audio',
    body: { model: 'vendord/v6/image-to-video', prompt: 'fireworks over a harbour', image: SQUARE_400, resolution: '360p', duration: 1, audio_enable: false },
    width: 640,
    height: 360,
    duration: 1,
    audio: false,
  },
  {
    name: 'vendord/v6/reference-to-video with a 400x800 image and the default 16:9 -> 640x360, audio by default',
    body: { model: 'vendord/v6/reference-to-video', prompt: '@image1 waves hello', images: [PORTRAIT_400x800], resolution: '360p', duration: 1 },
    width: 640,
    height: 360,
    duration: 1,
    audio: true,
  },
];

describe('video task lifecycle and output media', () => {
  it.each(RENDERS)(
    '$name',
    async (c) => {
      const model = typeof c.body['model'] === 'string' ? c.body['model'] : '';
      const id = expectQueuedVideoTask(await api.createVideo(c.body), model);
      const { final, history } = await pollVideo(id);
      checkVideoHistory(history);
      const url = checkCompleted(final, model);

      const file = await download(url);
      expect(file.status, 'output fetchable without the API key').toBe(200);
      expect(file.contentType).toMatch(/^video\/mp4/);
      const boxes = topLevelBoxes(file.body);
      expect(boxes, 'MP4 with +faststart: moov before mdat').toContain('moov');
      expect(boxes.indexOf('moov')).toBeLessThan(boxes.indexOf('mdat'));

      const path = join(workDir, `${id}.mp4`);
      await writeFile(path, file.body);
      const p = await probe(path);
      expect({ width: p.width, height: p.height }).toEqual({ width: c.width, height: c.height });
      expect(p.videoCodec).toBe('h264');
      expect(p.formatName).toMatch(/mp4/);
      expect(Math.abs(p.videoDuration - c.duration), `video stream lasts ${p.videoDuration} s`).toBeLessThanOrEqual(0.1);
      expect(Math.abs(p.formatDuration - c.duration), `container lasts ${p.formatDuration} s`).toBeLessThanOrEqual(0.1);
      expect(p.audioCodecs, 'AAC audio exactly when audio_enable is true').toEqual(c.audio ? ['aac'] : []);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'the first poll after creation shows the creation state or a later one; processing is observable for a 5 s 1080p render',
    async () => {
      const model = 'vendora/famw-2.7-t2v';
      const id = expectQueuedVideoTask(await api.createVideo({ model, prompt: 'a long train', resolution: '1080p' }), model);
      const { final, history } = await pollVideo(id);
      checkVideoHistory(history);
      checkCompleted(final, model);
      const processing = history.filter((t) => t['status'] === 'processing');
      // Informative rather than strict: a fast engine may finish between two polls.
      if (processing.length > 0) expect(processing.every((t) => Number.isInteger(t['started_at']))).toBe(true);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'progress rises while processing: a 30 s 1080p render shows a progress value strictly between 0 and 100',
    async () => {
      const model = 'vendora/famw-3.0-ref2v-spicy';
      const id = expectQueuedVideoTask(await api.createVideo({ model, prompt: 'a long drive at night', resolution: '1080p', duration: 30 }), model);
      const { final, history } = await pollVideo(id);
      checkVideoHistory(history);
      checkCompleted(final, model);
      const progressWhileProcessing = history.filter((t) => t['status'] === 'processing').map((t) => Number(t['progress']));
      expect(progressWhileProcessing.length, 'the render is long enough to be observed while processing').toBeGreaterThan(2);
      expect(
        progressWhileProcessing.some((p) => p > 0 && p < 100),
        `progress observed while processing: ${JSON.stringify(progressWhileProcessing)}`,
      ).toBe(true);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a tampered output URL (one character of any signed component changed, or the query removed) is not served',
    async () => {
      const model = 'vendora/famw-2.7-t2v';
      const id = expectQueuedVideoTask(await api.createVideo({ model, prompt: 'a kite', resolution: '480p', duration: 2 }), model);
      const { final } = await pollVideo(id);
      const url = checkCompleted(final, model);
      expect((await download(url)).status).toBe(200);

      const stripped = new URL(url);
      stripped.search = '';
      const tampered = [...tamperings(url), ...(new URL(url).search === '' ? [] : [stripped.toString()])];
      expect(tampered.length).toBeGreaterThan(0);
      for (const bad of tampered) {
        const res = await download(bad);
        expect(res.status, `tampered URL ${bad} must not be served`).not.toBe(200);
        expect(res.contentType).not.toMatch(/^video\//);
      }
    },
    TEST_TIMEOUT_MS,
  );
});

function flipChar(c: string): string {
  if (/[0-8]/.test(c)) return String(Number(c) + 1);
  if (c === '9') return '0';
  if (/[a-y]/.test(c) || /[A-Y]/.test(c)) return String.fromCharCode(c.charCodeAt(0) + 1);
  if (c === 'z') return 'a';
  if (c === 'Z') return 'A';
  return c === '-' ? '_' : '-';
}

function flipAt(text: string, index: number): string {
  return text.slice(0, index) + flipChar(text.charAt(index)) + text.slice(index + 1);
}

/**
 * Variants of a URL with one character changed in each query value (signature, expiry, ...)
 * at its first and middle position (the last Base64 character may carry unused bits), or, when
 * the URL has no query, in each of its last two path segments.
 */
function tamperings(url: string): string[] {
  const original = new URL(url);
  const out: string[] = [];
  for (const [key, value] of original.searchParams) {
    if (value.length === 0) continue;
    for (const index of new Set([0, Math.floor(value.length / 2)])) {
      const t = new URL(url);
      t.searchParams.set(key, flipAt(value, index));
      out.push(t.toString());
    }
  }
  if (out.length === 0) {
    const segments = original.pathname.split('/');
    for (const segIndex of [segments.length - 1, segments.length - 2]) {
      const seg = segments[segIndex];
      if (seg === undefined || seg.length === 0) continue;
      for (const index of new Set([0, Math.floor(seg.length / 2)])) {
        const copy = [...segments];
        copy[segIndex] = flipAt(seg, index);
        const t = new URL(url);
        t.pathname = copy.join('/');
        out.push(t.toString());
      }
    }
  }
  return out;
}

describe('output URLs expire (decisions §5: signed and expiring)', () => {
  it(
    'with a 2 s output lifetime, the URL is served at first and no longer once it has expired',
    async () => {
      const shortLived = await startServer({ MEDIAGATE_OUTPUT_TTL_S: '2' });
      try {
        const client = new Api(shortLived);
        const model = 'vendord/v6/image-to-video';
        const id = expectQueuedVideoTask(await client.createVideo({ model, prompt: 'a candle', resolution: '360p', duration: 1, audio_enable: false }), model);
        const task = await eventually(
          async () => {
            const current = (await client.getVideo(id)).json as Task;
            return (current['status'] === 'completed' || current['status'] === 'failed') && current;
          },
          { deadline: DEADLINE_MS, interval: 100, what: `task ${id} to finish` },
        );
        expect(task['status'], JSON.stringify(task)).toBe('completed');
        const url = String(field((task['outputs'] as unknown[] | undefined)?.[0], 'url'));
        expect((await download(url)).status).toBe(200);
        let late: Awaited<ReturnType<typeof download>>;
        if (url.startsWith(shortLived.url)) {
          // The clock, not a sleep: the server runs in this process and reads the time at each
          // download, so the download is made 3.5 s later by the clock alone.
          vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 3_500 });
          try {
            late = await download(url);
          } finally {
            vi.useRealTimers();
          }
        } else {
          // A presigned URL of the object store (MEDIAGATE_OUTPUT_URLS=presigned): the store reads
          // its own clock, so the wait is for it to refuse the URL.
          late = await eventually(
            async () => {
              const attempt = await download(url);
              return attempt.status !== 200 && attempt;
            },
            { deadline: 15_000, interval: 250, what: 'the store to refuse the expired URL' },
          );
        }
        expect(late.status, 'an expired URL is not served').not.toBe(200);
        expect(late.contentType).not.toMatch(/^video\//);
      } finally {
        await shortLived.close();
      }
    },
    TEST_TIMEOUT_MS,
  );
});

describe('video task failure', () => {
  it.each<{ model: string; body: JsonObject }>([
    { model: 'vendora/famw-2.7-i2v', body: { model: 'vendora/famw-2.7-i2v', prompt: 'x', image: 'https://127.0.0.1:1/x.png', duration: 2 } },
    {
      model: 'vendord/v6/image-to-video',
      body: { model: 'vendord/v6/image-to-video', prompt: 'x', image: 'https://127.0.0.1:1/x.png', duration: 1, resolution: '360p' },
    },
  ])(
    '$model: an https image that cannot be fetched -> failed with error {type:"generation_error", code, message, param:"image"}',
    async ({ model, body }) => {
      const id = expectQueuedVideoTask(await api.createVideo(body), model);
      const { final, history } = await pollVideo(id);
      checkVideoHistory(history);
      expect(final['status'], JSON.stringify(final)).toBe('failed');
      expect(final['error']).toMatchObject({ type: 'generation_error', code: expect.any(String), message: expect.any(String), param: 'image' });
      expect(final['outputs']).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );
});

// ---------------------------------------------------------------------------------------------
// Image renders
// ---------------------------------------------------------------------------------------------

const IMAGE_ORDER: Record<string, number> = { QUEUED: 0, IN_PROGRESS: 1, SUCCESS: 2, FAILURE: 2, CANCELLED: 2 };

async function pollImage(id: string): Promise<{ final: Task; history: Task[] }> {
  const history: Task[] = [];
  let last = '';
  const final = await eventually(
    async () => {
      const res = await api.getImage(id);
      last = res.text;
      const data: unknown = isRecord(res.json) ? res.json['data'] : undefined;
      // A wrong answer fails at once rather than being retried until the deadline.
      if (res.status !== 200 || !isRecord(res.json) || res.json['code'] !== 'success' || res.json['message'] !== '' || !isRecord(data))
        return { kind: 'bad' as const, res };
      const task = data as Task;
      history.push(task);
      const status = String(task['status']);
      return (status === 'SUCCESS' || status === 'FAILURE' || status === 'CANCELLED') && { kind: 'final' as const, task };
    },
    { deadline: DEADLINE_MS, interval: POLL_MS, what: `image task ${id} to finish` },
  ).catch((error: unknown) => {
    throw new Error(`${error instanceof Error ? error.message : String(error)}; last: ${last}`);
  });
  if (final.kind === 'bad') {
    expect(final.res.status, final.res.text).toBe(200);
    expect(final.res.json).toMatchObject({ code: 'success', message: '' });
    expect(isRecord(field(final.res.json, 'data')), final.res.text).toBe(true);
  }
  return { final: final.kind === 'final' ? final.task : {}, history };
}

function checkImageHistory(history: readonly Task[]): void {
  let lastOrder = 0;
  let lastProgress = -1;
  for (const task of history) {
    const status = String(task['status']);
    expect(Object.keys(IMAGE_ORDER), `status ${status}`).toContain(status);
    const order = IMAGE_ORDER[status] ?? -1;
    expect(order, `status went backwards to ${status}`).toBeGreaterThanOrEqual(lastOrder);
    lastOrder = order;
    const progress = String(task['progress']);
    expect(progress).toMatch(/^(100|[1-9]?[0-9])%$/);
    const pct = Number.parseInt(progress, 10);
    expect(pct, 'progress never decreases').toBeGreaterThanOrEqual(lastProgress);
    lastProgress = pct;
    expect(Number.isInteger(task['submit_time'])).toBe(true);
    expect(Number.isInteger(task['start_time'])).toBe(true);
    expect(Number.isInteger(task['finish_time'])).toBe(true);
    if (status === 'QUEUED') {
      expect(task['start_time'], 'QUEUED: start_time').toBe(0);
      expect(task['finish_time'], 'QUEUED: finish_time').toBe(0);
    }
    if (status === 'IN_PROGRESS') {
      expect(Number(task['start_time']), 'IN_PROGRESS: start_time set').toBeGreaterThanOrEqual(Number(task['submit_time']));
      expect(Number(task['start_time'])).toBeGreaterThan(0);
      expect(task['finish_time'], 'IN_PROGRESS: finish_time').toBe(0);
    }
    if (status !== 'FAILURE') expect(task['fail_reason']).toBe('');
  }
}

const IMAGE_RENDERS: ReadonlyArray<{ name: string; body: JsonObject; width: number; height: number }> = [
  { name: 'vendora/famz-image-spicy defaults -> 1024x1536', body: { model: 'vendora/famz-image-spicy', prompt: 'a red kite' }, width: 1024, height: 1536 },
  {
    name: 'vendora/famz-image-spicy-pro defaults -> 1024x1024',
    body: { model: 'vendora/famz-image-spicy-pro', prompt: 'a red kite' },
    width: 1024,
    height: 1024,
  },
  {
    name: 'vendora/famz-image-spicy width 512 alone -> 512x1536 (height from the default)',
    body: { model: 'vendora/famz-image-spicy', prompt: 'a red kite', width: 512 },
    width: 512,
    height: 1536,
  },
  {
    name: 'vendora/famz-image-spicy height 512 alone -> 1024x512 (width from the default)',
    body: { model: 'vendora/famz-image-spicy', prompt: 'a red kite', height: 512 },
    width: 1024,
    height: 512,
  },
  {
    name: 'vendora/famz-image-spicy-pro width 2000 alone -> 2000x1024',
    body: { model: 'vendora/famz-image-spicy-pro', prompt: 'a red kite', width: 2000 },
    width: 2000,
    height: 1024,
  },
  {
    name: 'vendora/famz-image-spicy size 300x400 -> 300x400',
    body: { model: 'vendora/famz-image-spicy', prompt: 'a red kite', size: '300x400' },
    width: 300,
    height: 400,
  },
  {
    name: 'vendora/famz-image-spicy-pro size 2560x256 -> 2560x256',
    body: { model: 'vendora/famz-image-spicy-pro', prompt: 'a red kite', size: '2560x256' },
    width: 2560,
    height: 256,
  },
  {
    name: 'vendora/famz-image-spicy-pro width 257 height 2559 -> 257x2559',
    body: { model: 'vendora/famz-image-spicy-pro', prompt: 'a red kite', width: 257, height: 2559 },
    width: 257,
    height: 2559,
  },
];

describe('image task lifecycle and output', () => {
  it.each(IMAGE_RENDERS)(
    '$name',
    async (c) => {
      const id = expectImageCreated(await api.createImage(c.body));
      const { final, history } = await pollImage(id);
      checkImageHistory(history);
      expect(final, JSON.stringify(final)).toMatchObject({ task_id: id, status: 'SUCCESS', progress: '100%', fail_reason: '' });
      const submit = Number(final['submit_time']);
      const start = Number(final['start_time']);
      const finish = Number(final['finish_time']);
      expect(Math.abs(submit - Date.now() / 1000)).toBeLessThan(120);
      expect(start).toBeGreaterThanOrEqual(submit);
      expect(finish).toBeGreaterThanOrEqual(start);
      const outputs = final['outputs'];
      expect(Array.isArray(outputs)).toBe(true);
      expect(outputs).toHaveLength(1);
      const url = (outputs as unknown[])[0];
      expect(typeof url).toBe('string');
      expect(String(url)).toMatch(/^https?:\/\//);

      const file = await download(String(url));
      expect(file.status, 'output fetchable without the API key').toBe(200);
      expect(file.contentType).toMatch(/^image\/png/);
      const meta = await sharp(file.body).metadata();
      expect({ format: meta.format, width: meta.width, height: meta.height }).toEqual({ format: 'png', width: c.width, height: c.height });
    },
    TEST_TIMEOUT_MS,
  );
});
