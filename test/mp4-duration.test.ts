import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billedSeconds, meter } from '../src/billing/index.js';
import { createSandboxEngine } from '../src/engines/sandbox/engine.js';
import { defaultFfmpegPath } from '../src/engines/sandbox/ffmpeg-path.js';
import { moovDuration, readMp4Duration } from '../src/media/mp4-duration.js';
import { probe } from './helpers/probe.js';

const run = promisify(execFile);
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mg-mp4-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Made {
  readonly seconds: number;
  readonly audio: boolean;
  /** moov before mdat (+faststart, as the sandbox engine writes) or after it (ffmpeg's default). */
  readonly moovFirst: boolean;
  readonly fps?: number;
}

async function make(spec: Made): Promise<string> {
  const name = `${spec.seconds}s-${spec.audio ? 'av' : 'v'}-${spec.moovFirst ? 'fast' : 'end'}-${spec.fps ?? 24}.mp4`;
  const path = join(dir, name);
  const args = ['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc=size=160x90:rate=${spec.fps ?? 24}:duration=${spec.seconds}`];
  if (spec.audio) args.push('-f', 'lavfi', '-i', `sine=frequency=440:duration=${spec.seconds}`);
  args.push('-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p');
  if (spec.audio) args.push('-c:a', 'aac', '-shortest');
  if (spec.moovFirst) args.push('-movflags', '+faststart');
  args.push(path);
  await run(defaultFfmpegPath(), args);
  return path;
}

/** Byte offset of the first top-level box of this type. */
async function topLevelOffset(path: string, type: string): Promise<number> {
  const bytes = await readFile(path);
  let at = 0;
  while (at + 8 <= bytes.length) {
    const size = bytes.readUInt32BE(at);
    if (bytes.toString('latin1', at + 4, at + 8) === type) return at;
    at += size === 1 ? Number(bytes.readBigUInt64BE(at + 8)) : size;
  }
  return -1;
}

describe('the duration read from ffmpeg output matches ffprobe', () => {
  const cases: Made[] = [
    { seconds: 1, audio: false, moovFirst: true },
    { seconds: 4, audio: false, moovFirst: true },
    { seconds: 10, audio: false, moovFirst: true },
    { seconds: 1, audio: true, moovFirst: true },
    { seconds: 4, audio: true, moovFirst: false },
    { seconds: 10, audio: true, moovFirst: true },
    { seconds: 4, audio: false, moovFirst: false, fps: 30 },
    { seconds: 7, audio: true, moovFirst: false, fps: 25 },
  ];
  for (const spec of cases) {
    it(`${spec.seconds} s, ${spec.audio ? 'with' : 'without'} audio, moov ${spec.moovFirst ? 'first' : 'at the end'}, ${spec.fps ?? 24} fps`, async () => {
      const path = await make(spec);
      const moov = await topLevelOffset(path, 'moov');
      const mdat = await topLevelOffset(path, 'mdat');
      expect(moov < mdat).toBe(spec.moovFirst); // the file is laid out as the case says
      const read = await readMp4Duration(path);
      const probed = await probe(path);
      if (!read.ok) throw new Error(read.reason);
      expect(Math.abs(read.seconds - probed.duration)).toBeLessThan(0.05);
      expect(billedSeconds(read.seconds)).toBe(spec.seconds);
      expect(billedSeconds(read.seconds)).toBe(billedSeconds(probed.duration));
    });
  }
});

/** A box: 32-bit size, or size 1 and a 64-bit size when `large`. */
function box(type: string, body: Buffer, large = false): Buffer {
  const header = Buffer.alloc(large ? 16 : 8);
  header.write(type, 4, 'latin1');
  if (large) {
    header.writeUInt32BE(1, 0);
    header.writeBigUInt64BE(BigInt(16 + body.length), 8);
  } else {
    header.writeUInt32BE(8 + body.length, 0);
  }
  return Buffer.concat([header, body]);
}

function timeHeaderV0(timescale: number, duration: number): Buffer {
  const body = Buffer.alloc(100);
  body.writeUInt32BE(timescale, 12);
  body.writeUInt32BE(duration, 16);
  return body;
}

function timeHeaderV1(timescale: number, duration: bigint): Buffer {
  const body = Buffer.alloc(112);
  body[0] = 1;
  body.writeUInt32BE(timescale, 20);
  body.writeBigUInt64BE(duration, 24);
  return body;
}

const FTYP = box('ftyp', Buffer.from('isom\0\0\0\x01isomavc1', 'latin1'));

describe('box layouts: 64-bit sizes, version 1 headers, track fallback', () => {
  it('reads a version 1 mvhd inside a moov with a 64-bit size, after a 64-bit mdat', async () => {
    const moov = box('moov', box('mvhd', timeHeaderV1(90_000, 90_000n * 6n + 45_000n)), true);
    const path = join(dir, 'v1.mp4');
    await writeFile(path, Buffer.concat([FTYP, box('mdat', Buffer.alloc(1000), true), moov]));
    const read = await readMp4Duration(path);
    expect(read).toMatchObject({ ok: true, seconds: 6.5, timescale: 90_000, from: 'mvhd' });
    expect(billedSeconds(6.5)).toBe(7);
  });

  it('falls back to the longest track mdhd when mvhd states no duration', () => {
    const trak = (timescale: number, duration: number): Buffer => box('trak', box('mdia', box('mdhd', timeHeaderV0(timescale, duration))));
    const moov = Buffer.concat([box('mvhd', timeHeaderV0(1000, 0xffffffff)), trak(12_800, 12_800 * 3), trak(48_000, 48_000 * 4 + 1024)]);
    const read = moovDuration(moov);
    expect(read).toMatchObject({ ok: true, from: 'mdhd', timescale: 48_000 });
    if (read.ok) expect(read.seconds).toBeCloseTo(4.0213, 3);
  });

  it('a trailing box with size 0 (to the end of the file) is walked', async () => {
    const moov = box('moov', box('mvhd', timeHeaderV0(1000, 2400)));
    const mdat = Buffer.concat([Buffer.from([0, 0, 0, 0]), Buffer.from('mdat', 'latin1'), Buffer.alloc(64)]);
    const path = join(dir, 'size0.mp4');
    await writeFile(path, Buffer.concat([FTYP, moov, mdat]));
    expect(await readMp4Duration(path)).toMatchObject({ ok: true, seconds: 2.4 });
  });
});

describe('garbage is an error value, not a throw', () => {
  const cases: [string, Buffer][] = [
    ['empty file', Buffer.alloc(0)],
    ['a PNG', Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')],
    ['text', Buffer.from('hello, this is not a movie at all', 'latin1')],
    ['ftyp only', FTYP],
    ['a box larger than the file', Buffer.concat([FTYP, Buffer.from([0, 0, 0x10, 0]), Buffer.from('moov', 'latin1')])],
    ['a box of size 4', Buffer.concat([FTYP, Buffer.from([0, 0, 0, 4]), Buffer.from('free', 'latin1')])],
    ['moov without mvhd', Buffer.concat([FTYP, box('moov', box('trak', Buffer.alloc(0)))])],
    ['mvhd of version 7', Buffer.concat([FTYP, box('moov', box('mvhd', Buffer.from([7, 0, 0, 0])))])],
    ['truncated mvhd', Buffer.concat([FTYP, box('moov', box('mvhd', Buffer.alloc(10)))])],
    ['zero duration everywhere', Buffer.concat([FTYP, box('moov', box('mvhd', timeHeaderV0(1000, 0)))])],
  ];
  for (const [name, bytes] of cases) {
    it(name, async () => {
      const path = join(dir, `garbage-${name.replace(/\W+/g, '-')}.mp4`);
      await writeFile(path, bytes);
      const read = await readMp4Duration(path);
      expect(read.ok).toBe(false);
      if (!read.ok) expect(read.reason).not.toBe('');
    });
  }

  it('a missing file', async () => {
    expect(await readMp4Duration(join(dir, 'nope.mp4'))).toMatchObject({ ok: false });
  });
});

describe('meter: billed seconds and images of delivered files', () => {
  it('measures the video, not what was asked, and counts images', async () => {
    const video = await make({ seconds: 4, audio: false, moovFirst: true });
    expect(await meter([{ path: video, type: 'video' }])).toEqual({ ok: true, value: { seconds: 4, images: 0 } });
    expect(await meter([{ path: join(dir, 'a.png'), type: 'image' }])).toEqual({ ok: true, value: { seconds: 0, images: 1 } });
    expect(await meter([])).toEqual({ ok: true, value: { seconds: 0, images: 0 } });
  });

  it('an unreadable video is an error value naming the file', async () => {
    const path = join(dir, 'broken.mp4');
    await writeFile(path, 'not a movie');
    const result = await meter([{ path, type: 'video' }]);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toContain('broken.mp4');
  });
});

describe('meter on what the sandbox engine delivers', () => {
  it('a 3 s render with audio is billed 3 s, as ffprobe measures it', async () => {
    const engine = createSandboxEngine({ ffmpegPath: defaultFfmpegPath(), fps: 6 });
    try {
      const workDir = join(dir, 'sandbox-render');
      await mkdir(workDir);
      const result = await engine.render({
        taskId: 'task-meter',
        owner: 'key-1',
        model: { id: 'test/t2v', kind: 'video', aspectRatios: ['16:9'], checkImageRule3: false },
        params: { prompt: 'metered', duration: 3, resolution: '480p', audio_enable: true },
        workDir,
        signal: new AbortController().signal,
        onProgress: () => undefined,
      });
      const metered = await meter(result.files);
      expect(metered).toEqual({ ok: true, value: { seconds: 3, images: 0 } });
      const video = result.files[0];
      if (!video) throw new Error('no file');
      const probed = await probe(video.path);
      expect(probed.audio).toBeDefined();
      const read = await readMp4Duration(video.path);
      if (!read.ok) throw new Error(read.reason);
      expect(Math.abs(read.seconds - probed.duration)).toBeLessThan(0.05);
    } finally {
      await engine.close();
    }
  });
});
