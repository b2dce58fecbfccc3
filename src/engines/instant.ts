import { open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Engine, RenderJob, RenderResult } from './types.js';

export interface InstantEngineOptions {
  /**
   * How long each render takes (MEDIAGATE_INSTANT_DELAY_MS), idle, with progress reported
   * along the way: lets tests and benchmarks hold tasks in `processing` without using the CPU.
   * Default 0.
   */
  readonly delayMs?: number;
  /**
   * Bytes of each video output at least (MEDIAGATE_INSTANT_OUTPUT_BYTES): the header is followed
   * by a `free` box of zeros, written a MiB at a time, so storage benchmarks and specs move real
   * volumes without a render. Default 0: the header alone.
   */
  readonly outputBytes?: number;
}

/**
 * A zero-cost engine: settles every task at once with a tiny placeholder file. It exists so
 * benchmarks measure the gateway (validation, store, queue, HTTP) without rendering competing
 * for the CPU. Select it with MEDIAGATE_ENGINE=instant; never the default.
 */
export function createInstantEngine(options: InstantEngineOptions = {}): Engine {
  const delayMs = options.delayMs ?? 0;
  return {
    name: 'instant',
    async render(job: RenderJob): Promise<RenderResult> {
      if (delayMs > 0) {
        // A step every 200 ms or so (the worker pool writes progress at most five times a
        // second), so a poll sees progress move as in a real render; at least four.
        const steps = Math.max(4, Math.min(99, Math.round(delayMs / 200)));
        for (let step = 1; step <= steps; step += 1) {
          await sleep(delayMs / steps, undefined, { signal: job.signal });
          job.onProgress(Math.floor((step * 99) / steps));
        }
      }
      const video = job.model.kind === 'video';
      const path = join(job.workDir, video ? 'out.mp4' : 'out.png');
      if (video) await writeVideo(path, mp4Header(requestedSeconds(job.params)), options.outputBytes ?? 0);
      else await writeFile(path, 'instant engine placeholder');
      return { files: [{ path, type: video ? 'video' : 'image', contentType: video ? 'video/mp4' : 'image/png', ext: video ? 'mp4' : 'png' }] };
    },
    async close() {},
  };
}

/** The header, then a `free` box (ignored by readers) up to `bytes` in all; never held whole in memory. */
async function writeVideo(path: string, header: Buffer, bytes: number): Promise<void> {
  const file = await open(path, 'w');
  try {
    await file.write(header);
    let left = bytes - header.length;
    if (left < 8) return;
    const box = Buffer.alloc(8);
    box.writeUInt32BE(Math.min(left, 0xffffffff), 0);
    box.write('free', 4, 'latin1');
    await file.write(box);
    left -= 8;
    const zeros = Buffer.alloc(1024 * 1024);
    for (; left > 0; left -= zeros.length) await file.write(zeros, 0, Math.min(left, zeros.length));
  } finally {
    await file.close();
  }
}

/** The requested duration (resolved params carry the model's default); 5 s if none. */
function requestedSeconds(params: Readonly<Record<string, unknown>>): number {
  const duration = params['duration'];
  return typeof duration === 'number' && duration > 0 ? duration : 5;
}

/**
 * A video of `seconds` as far as its header tells: `ftyp` and a `moov` holding only an `mvhd`
 * (timescale 1000). No frames, but usage metering (which reads the header) bills it as a
 * real render of that length, so benchmarks and specs exercise the same settle path.
 */
function mp4Header(seconds: number): Buffer {
  const ftyp = Buffer.alloc(20);
  ftyp.writeUInt32BE(20, 0);
  ftyp.write('ftypisom', 4, 'latin1');
  ftyp.writeUInt32BE(0x200, 12);
  ftyp.write('isom', 16, 'latin1');
  const mvhd = Buffer.alloc(108);
  mvhd.writeUInt32BE(108, 0);
  mvhd.write('mvhd', 4, 'latin1');
  // version 0, flags 0, creation and modification times 0
  mvhd.writeUInt32BE(1000, 20); // timescale
  mvhd.writeUInt32BE(Math.round(seconds * 1000), 24); // duration
  mvhd.writeUInt32BE(0x00010000, 28); // rate 1.0
  mvhd.writeUInt16BE(0x0100, 32); // volume 1.0
  // unity matrix
  mvhd.writeUInt32BE(0x00010000, 44);
  mvhd.writeUInt32BE(0x00010000, 60);
  mvhd.writeUInt32BE(0x40000000, 76);
  mvhd.writeUInt32BE(2, 104); // next track id
  const moov = Buffer.alloc(8);
  moov.writeUInt32BE(8 + mvhd.length, 0);
  moov.write('moov', 4, 'latin1');
  return Buffer.concat([ftyp, moov, mvhd]);
}
