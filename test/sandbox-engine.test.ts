import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxEngine, type SandboxEngineOptions } from '../src/engines/sandbox/engine.js';
import { defaultFfmpegPath } from '../src/engines/sandbox/ffmpeg-path.js';
import { ProgressReporter, parseProgressLine } from '../src/engines/sandbox/progress.js';
import { EngineError, type Engine, type RenderModelInfo, type RenderResult } from '../src/engines/types.js';
import { startHttpsServer, type TestHttpsServer } from './helpers/https-server.js';

const run = promisify(execFile);
const FFMPEG = defaultFfmpegPath();
const FFPROBE = (createRequire(import.meta.url)('@ffprobe-installer/ffprobe') as { path: string }).path;

const VIDEO_MODEL: RenderModelInfo = {
  id: 'test/i2v',
  kind: 'video',
  aspectRatios: ['16:9', '9:16', '1:1', '4:3', '3:4'],
  checkImageRule3: false,
};
const RULE3_MODEL: RenderModelInfo = { ...VIDEO_MODEL, id: 'test/rule3', aspectRatios: [], checkImageRule3: true };
const IMAGE_MODEL: RenderModelInfo = { id: 'test/image', kind: 'image', aspectRatios: [], checkImageRule3: false };

interface Probe {
  streams: Array<{ codec_type: string; codec_name: string; width?: number; height?: number; duration?: string; nb_frames?: string }>;
  format: { duration: string };
}

async function probe(path: string): Promise<Probe> {
  const { stdout } = await run(FFPROBE, ['-v', 'error', '-show_streams', '-show_format', '-of', 'json', path]);
  return JSON.parse(stdout) as Probe;
}

function videoStream(p: Probe): Probe['streams'][number] {
  const stream = p.streams.find((s) => s.codec_type === 'video');
  if (!stream) throw new Error('no video stream');
  return stream;
}

/** Mean RGB of the central quarter of frame `index` of one of our own outputs. */
async function frameColour(path: string, index: number): Promise<[number, number, number]> {
  const { stdout } = await run(
    FFMPEG,
    ['-v', 'error', '-i', path, '-vf', `select=eq(n\\,${index}),crop=iw/2:ih/2`, '-vsync', '0', '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'],
    { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  const sum = [0, 0, 0];
  for (let i = 0; i < stdout.length; i += 1) sum[i % 3] = (sum[i % 3] ?? 0) + (stdout[i] ?? 0);
  const pixels = stdout.length / 3;
  expect(pixels).toBeGreaterThan(0);
  return [Math.round((sum[0] ?? 0) / pixels), Math.round((sum[1] ?? 0) / pixels), Math.round((sum[2] ?? 0) / pixels)];
}

async function solidPng(colour: string, width = 640, height = 480): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: colour } })
    .png()
    .toBuffer();
}

function dataUrl(bytes: Buffer, mime = 'image/png'): string {
  return `data:${mime};base64,${bytes.toString('base64')}`;
}

const workDirs: string[] = [];
async function freshWorkDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mediagate-sandbox-'));
  workDirs.push(dir);
  return dir;
}

interface Rendered {
  readonly result: RenderResult;
  readonly path: string;
  readonly workDir: string;
  readonly progress: number[];
}

async function render(engine: Engine, params: Record<string, unknown>, options: { model?: RenderModelInfo; signal?: AbortSignal } = {}): Promise<Rendered> {
  const workDir = await freshWorkDir();
  const progress: number[] = [];
  const result = await engine.render({
    taskId: 'task-1',
    owner: 'key-1',
    model: options.model ?? VIDEO_MODEL,
    params,
    workDir,
    signal: options.signal ?? new AbortController().signal,
    onProgress: (percent) => progress.push(percent),
  });
  const file = result.files[0];
  if (!file) throw new Error('no file rendered');
  return { result, path: file.path, workDir, progress };
}

async function renderError(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected the render to fail');
    },
    (error: unknown) => error,
  );
}

function expectEngineError(error: unknown, code: string, param: string): void {
  expect(error).toBeInstanceOf(EngineError);
  expect({ code: (error as EngineError).code, param: (error as EngineError).param }).toEqual({ code, param });
}

function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

let server: TestHttpsServer;
let engine: Engine;
let red: Buffer;
let blue: Buffer;
const engineOptions = (extra: Partial<SandboxEngineOptions> = {}): SandboxEngineOptions => ({
  ffmpegPath: FFMPEG,
  fetch: { dispatcher: server.dispatcher, timeoutMs: 5_000 },
  ...extra,
});

beforeAll(async () => {
  red = await solidPng('#ff0000');
  blue = await solidPng('#0000ff');
  const small = await solidPng('#00ff00', 200, 200);
  const fine = await solidPng('#00ff00', 400, 400);
  server = await startHttpsServer({
    '/small.png': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(small),
    '/fine.png': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(fine),
  });
  engine = createSandboxEngine(engineOptions());
});

afterAll(async () => {
  await engine.close();
  await server.close();
  await Promise.all(workDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('sandbox video: geometry, duration, codec, progress (720p, 5 s)', () => {
  it('renders an H.264 MP4 of the exact size and duration, without audio by default', async () => {
    const { path, result, workDir, progress } = await render(engine, { prompt: 'A fox in the snow', resolution: '720p', duration: 5 });
    expect(result.files).toEqual([{ path, type: 'video', contentType: 'video/mp4', ext: 'mp4' }]);
    const p = await probe(path);
    const video = videoStream(p);
    expect(video).toMatchObject({ codec_name: 'h264', width: 1280, height: 720 });
    expect(Math.abs(Number(video.duration) - 5)).toBeLessThanOrEqual(0.1);
    expect(Math.abs(Number(p.format.duration) - 5)).toBeLessThanOrEqual(0.1);
    expect(p.streams.filter((s) => s.codec_type === 'audio')).toEqual([]);
    // Progress: integers, rising, within 0..99.
    expect(progress.length).toBeGreaterThan(0);
    for (const [i, value] of progress.entries()) {
      expect(Number.isInteger(value)).toBe(true);
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThanOrEqual(99);
      if (i > 0) expect(value).toBeGreaterThan(progress[i - 1] ?? -1);
    }
    // Scratch frames are gone: only the output stays in the workDir.
    expect(await readdir(workDir)).toEqual(['video.mp4']);
  });

  it.each([
    [{ resolution: '360p', aspect_ratio: '9:16' }, 360, 640],
    [{ resolution: '360p', aspect_ratio: '1:1' }, 360, 360],
    [{ resolution: '480p' }, 854, 480],
  ])('sizes %j as %ix%i', async (params, width, height) => {
    const { path } = await render(engine, { prompt: 'size', duration: 1, ...params });
    expect(videoStream(await probe(path))).toMatchObject({ width, height });
  });
});

describe('sandbox video: audio track exactly when audio_enable is true', () => {
  it.each([
    [true, 1],
    [false, 0],
  ])('audio_enable %s -> %i AAC stream(s)', async (audioEnable, count) => {
    const { path } = await render(engine, { prompt: 'tone', resolution: '360p', duration: 2, audio_enable: audioEnable });
    const p = await probe(path);
    const audio = p.streams.filter((s) => s.codec_type === 'audio');
    expect(audio).toHaveLength(count);
    for (const stream of audio) {
      expect(stream.codec_name).toBe('aac');
      expect(Math.abs(Number(stream.duration) - 2)).toBeLessThanOrEqual(0.1);
    }
    expect(Math.abs(Number(p.format.duration) - 2)).toBeLessThanOrEqual(0.1);
  });
});

describe('sandbox video: the input image is the first frame', () => {
  it('starts on the (solid red) image, at its snapped aspect ratio', async () => {
    const { path } = await render(engine, { prompt: 'red start', resolution: '360p', duration: 1, image: dataUrl(red) });
    // 640x480 snaps to 4:3 when no aspect_ratio is given.
    expect(videoStream(await probe(path))).toMatchObject({ width: 480, height: 360 });
    const [r, g, b] = await frameColour(path, 0);
    expect(r).toBeGreaterThan(200);
    expect(g).toBeLessThan(50);
    expect(b).toBeLessThan(50);
  });

  it('fetches an https image', async () => {
    const { path } = await render(engine, { prompt: 'fetched', resolution: '360p', duration: 1, image: `${server.origin}/fine.png` });
    const [r, g, b] = await frameColour(path, 0);
    expect({ r: r < 50, g: g > 200, b: b < 50 }).toEqual({ r: true, g: true, b: true });
  });
});

describe('sandbox video: end_image is the last frame, and something moves in between', () => {
  it('goes from red to blue', async () => {
    const { path } = await render(engine, {
      prompt: 'red to blue',
      resolution: '360p',
      aspect_ratio: '16:9',
      duration: 2,
      image: dataUrl(red),
      end_image: dataUrl(blue),
    });
    const video = videoStream(await probe(path));
    const frames = Number(video.nb_frames);
    expect(frames).toBeGreaterThan(10);
    const first = await frameColour(path, 0);
    const middle = await frameColour(path, Math.floor(frames / 2));
    const last = await frameColour(path, frames - 1);
    expect(first[0]).toBeGreaterThan(200);
    expect(first[2]).toBeLessThan(50);
    expect(last[0]).toBeLessThan(50);
    expect(last[2]).toBeGreaterThan(200);
    // Mid-crossfade: neither pure red nor pure blue.
    expect(middle).not.toEqual(first);
    expect(middle).not.toEqual(last);
  });
});

describe('sandbox image models', () => {
  it.each([
    [1024, 1536],
    [257, 333],
  ])('renders a PNG of exactly %ix%i', async (width, height) => {
    const { path, result } = await render(engine, { prompt: 'an image', width, height }, { model: IMAGE_MODEL });
    expect(result.files).toEqual([{ path, type: 'image', contentType: 'image/png', ext: 'png' }]);
    const meta = await sharp(path).metadata();
    expect({ format: meta.format, width: meta.width, height: meta.height }).toEqual({ format: 'png', width, height });
  });
});

describe('sandbox image models with a configured font file', () => {
  const font = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';
  it.skipIf(!existsSync(font))('renders the caption with that font', async () => {
    const logs: string[] = [];
    const withFont = createSandboxEngine(engineOptions({ fontFile: font, log: (msg) => logs.push(msg) }));
    try {
      const { path } = await render(withFont, { prompt: 'a caption in a given font', width: 512, height: 320 }, { model: IMAGE_MODEL });
      const meta = await sharp(path).metadata();
      expect({ width: meta.width, height: meta.height }).toEqual({ width: 512, height: 320 });
      // The caption did not fall back to an empty strip.
      expect(logs.filter((msg) => msg.includes('caption'))).toEqual([]);
    } finally {
      await withFont.close();
    }
  });
});

describe('sandbox inputs: failures name the field', () => {
  it.each([
    ['image', 'data:image/png;base64,!!!not-base64!!!'],
    ['image', `data:image/png;base64,${Buffer.from('not an image at all').toString('base64')}`],
    // A PNG cut off inside its header.
    ['image', dataUrl(Buffer.from('89504e470d0a1a0a0000000d4948445200000280', 'hex'))],
    ['end_image', 'data:image/png;base64,AAAA'],
  ])('%s with garbage -> invalid_input', async (field, value) => {
    const params = { prompt: 'bad', resolution: '360p', duration: 1, image: dataUrl(red), [field]: value };
    expectEngineError(await renderError(render(engine, params)), 'invalid_input', field);
  });

  it('refuses an image over maxInputPixels before decoding it', async () => {
    const strict = createSandboxEngine(engineOptions({ maxInputPixels: 100_000 }));
    try {
      const error = await renderError(render(strict, { prompt: 'big', duration: 1, image: dataUrl(red) }));
      expectEngineError(error, 'invalid_input', 'image');
    } finally {
      await strict.close();
    }
  });

  it('refuses SVG before any decoder sees it', async () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>');
    const error = await renderError(render(engine, { prompt: 'svg', duration: 1, image: dataUrl(svg, 'image/svg+xml') }));
    expectEngineError(error, 'invalid_input', 'image');
  });

  it('an https image that cannot be fetched -> input_fetch_failed', async () => {
    const error = await renderError(render(engine, { prompt: 'x', duration: 1, image: `${server.origin}/missing.png` }));
    expectEngineError(error, 'input_fetch_failed', 'image');
  });

  it('seed rule 3 on a fetched image -> unsupported_value image', async () => {
    const error = await renderError(render(engine, { prompt: 'x', duration: 1, image: `${server.origin}/small.png` }, { model: RULE3_MODEL }));
    expectEngineError(error, 'unsupported_value', 'image');
  });

  it('seed rule 3 passes a fetched image within the limits', async () => {
    const { path } = await render(engine, { prompt: 'x', resolution: '360p', duration: 1, image: `${server.origin}/fine.png` }, { model: RULE3_MODEL });
    // A square image on a model that lists no aspect ratios snaps to 16:9 (decisions §6).
    expect(videoStream(await probe(path))).toMatchObject({ width: 640, height: 360 });
  });
});

describe('sandbox abort and deadline', () => {
  it('kills ffmpeg at once when the job is aborted', async () => {
    const controller = new AbortController();
    const reason = new Error('cancelled by test');
    let pid: number | undefined;
    let abortedAt = 0;
    const aborting = createSandboxEngine(
      engineOptions({
        log: (msg, extra) => {
          if (msg !== 'sandbox: ffmpeg started') return;
          pid = (extra as { ffmpegPid?: number }).ffmpegPid;
          abortedAt = Date.now();
          controller.abort(reason);
        },
      }),
    );
    try {
      const error = await renderError(render(aborting, { prompt: 'long', resolution: '1080p', duration: 30 }, { signal: controller.signal }));
      expect(error).toBe(reason);
      expect(Date.now() - abortedAt).toBeLessThan(2_000);
      expect(pid).toBeTypeOf('number');
      expect(processGone(pid ?? 0)).toBe(true);
    } finally {
      await aborting.close();
    }
  });

  it('rejects before any work when already aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('too late'));
    const error = await renderError(render(engine, { prompt: 'x', duration: 1 }, { signal: controller.signal }));
    expect(error).toBe(controller.signal.reason);
  });

  it('fails with timeout past renderTimeoutMs', async () => {
    const slow = createSandboxEngine(engineOptions({ renderTimeoutMs: 300 }));
    try {
      const error = await renderError(render(slow, { prompt: 'long', resolution: '1080p', duration: 30 }));
      expectEngineError(error, 'timeout', '');
    } finally {
      await slow.close();
    }
  });
});

describe('sandbox progress parsing', () => {
  it.each([
    ['out_time_us=1500000', 1_500_000],
    ['out_time_ms=2500000', 2_500_000],
    ['out_time=00:01:02.500000', 62_500_000],
    ['out_time=N/A', null],
    ['out_time_us=N/A', null],
    ['out_time=-577014:32:22.77', null],
    ['frame=12', null],
    ['progress=end', null],
    ['garbage', null],
  ])('%s -> %s', (line, expected) => {
    expect(parseProgressLine(line)).toBe(expected);
  });

  it('reports integers that only rise, capped at 99, throttled', () => {
    let now = 0;
    const seen: number[] = [];
    const reporter = new ProgressReporter((p) => seen.push(p), { minIntervalMs: 100, now: () => now });
    reporter.report(0);
    now = 50;
    reporter.report(10); // throttled
    now = 150;
    reporter.report(12.7);
    now = 300;
    reporter.report(5); // backwards
    now = 450;
    reporter.report(150);
    expect(seen).toEqual([0, 12, 99]);
  });
});

describe('render cache', () => {
  it('encodes equivalent requests once and gives each task its own identical file', async () => {
    const root = await mkdtemp(join(tmpdir(), 'mediagate-cache-'));
    const engine = createSandboxEngine({ ffmpegPath: defaultFfmpegPath(), cacheDir: join(root, 'cache') });
    const render = async (name: string, params: Record<string, unknown>, owner = 'key-a') => {
      const workDir = join(root, name);
      await mkdir(workDir);
      const result = await engine.render({
        taskId: name,
        owner,
        model: { id: 'm', kind: 'video', aspectRatios: [], checkImageRule3: false },
        params: { prompt: 'cache me', duration: 1, resolution: '360p', ...params },
        workDir,
        signal: new AbortController().signal,
        onProgress: () => {},
      });
      return result.files[0]?.path ?? '';
    };
    try {
      const first = await render('a', { seed: 7 });
      // Parameters that do not change pixels (here prompt_extend, and the model) share the render.
      const second = await render('b', { seed: 7, prompt_extend: true });
      const other = await render('c', { seed: 8 });
      expect((await stat(first)).ino).toBe((await stat(second)).ino);
      expect((await stat(first)).ino).not.toBe((await stat(other)).ino);
      expect((await readFile(first)).equals(await readFile(second))).toBe(true);
      expect(await readdir(join(root, 'cache'))).toHaveLength(2);
      // Another key's identical request is rendered anew: a hit would tell it what key-a made.
      const otherKey = await render('d', { seed: 7 }, 'key-b');
      expect((await stat(otherKey)).ino).not.toBe((await stat(first)).ino);
      expect(await readdir(join(root, 'cache'))).toHaveLength(3);
    } finally {
      await engine.close();
      await rm(root, { recursive: true, force: true });
    }
  });
});
