/**
 * The playing time of an MP4/MOV file, read from the file itself: the movie header
 * (`moov/mvhd`: timescale and duration), or, when that says nothing, the longest track's media
 * header (`moov/trak/mdia/mdhd`). Only box headers are read until `moov` is found (it may
 * follow the media data, at the end of the file), then `moov` alone. 64-bit box sizes and
 * version 1 headers are understood; anything else is an error value, never a throw.
 */
import { open, type FileHandle } from 'node:fs/promises';

export type Mp4Duration =
  | { readonly ok: true; readonly seconds: number; readonly timescale: number; readonly duration: number; readonly from: 'mvhd' | 'mdhd' }
  | { readonly ok: false; readonly reason: string };

/** A `moov` larger than this is not a file we made or copied: refused rather than read into memory. */
export const MAX_MOOV_BYTES = 64 * 1024 * 1024;

interface BoxHeader {
  readonly type: string;
  /** Offset of the box's first byte. */
  readonly start: number;
  /** Bytes of the header (8, or 16 with a 64-bit size). */
  readonly headerSize: number;
  /** Whole box, header included. */
  readonly size: number;
}

const fail = (reason: string): Mp4Duration => ({ ok: false, reason });

/** A box header at `start` of `bytes`; `limit` is where the enclosing box (or file) ends. */
function boxHeader(bytes: Buffer, start: number, limit: number, fileOffset = 0): BoxHeader | string {
  if (start + 8 > bytes.length) return `truncated box header at byte ${fileOffset + start}`;
  const size32 = bytes.readUInt32BE(start);
  const type = bytes.toString('latin1', start + 4, start + 8);
  if (!/^[\x20-\x7e]{4}$/.test(type)) return `not an MP4 box at byte ${fileOffset + start}`;
  let size: number;
  let headerSize = 8;
  if (size32 === 1) {
    if (start + 16 > bytes.length) return `truncated 64-bit box size at byte ${fileOffset + start}`;
    const large = bytes.readBigUInt64BE(start + 8);
    if (large > BigInt(Number.MAX_SAFE_INTEGER)) return `box "${type}" is too large`;
    size = Number(large);
    headerSize = 16;
  } else if (size32 === 0) {
    size = limit - (fileOffset + start); // extends to the end of its container (or file)
  } else {
    size = size32;
  }
  if (size < headerSize) return `box "${type}" at byte ${fileOffset + start} has an impossible size ${size}`;
  if (fileOffset + start + size > limit) return `box "${type}" at byte ${fileOffset + start} runs past its container`;
  return { type, start: fileOffset + start, headerSize, size };
}

/** The children of the box whose body is `body` (an in-memory slice of `moov`). */
function children(body: Buffer): BoxHeader[] | string {
  const found: BoxHeader[] = [];
  let at = 0;
  while (at < body.length) {
    const header = boxHeader(body, at, body.length);
    if (typeof header === 'string') return header;
    found.push(header);
    at += header.size;
  }
  return found;
}

function bodyOf(parent: Buffer, box: BoxHeader): Buffer {
  return parent.subarray(box.start + box.headerSize, box.start + box.size);
}

/** timescale and duration of an `mvhd` or `mdhd` body (same layout up to the duration). */
function timeHeader(body: Buffer, type: string): { timescale: number; duration: number | null } | string {
  const version = body[0];
  if (version === 0) {
    if (body.length < 20) return `truncated ${type}`;
    const duration = body.readUInt32BE(16);
    return { timescale: body.readUInt32BE(12), duration: duration === 0xffffffff ? null : duration };
  }
  if (version === 1) {
    if (body.length < 32) return `truncated ${type}`;
    const duration = body.readBigUInt64BE(24);
    if (duration === 0xffffffffffffffffn) return { timescale: body.readUInt32BE(20), duration: null };
    if (duration > BigInt(Number.MAX_SAFE_INTEGER)) return `${type} duration out of range`;
    return { timescale: body.readUInt32BE(20), duration: Number(duration) };
  }
  return `${type} has unknown version ${String(version)}`;
}

/** The duration held in a `moov` box's body. Pure: exported for the specs. */
export function moovDuration(moov: Buffer): Mp4Duration {
  const boxes = children(moov);
  if (typeof boxes === 'string') return fail(boxes);
  const mvhdBox = boxes.find((b) => b.type === 'mvhd');
  if (!mvhdBox) return fail('moov has no mvhd');
  const mvhd = timeHeader(bodyOf(moov, mvhdBox), 'mvhd');
  if (typeof mvhd === 'string') return fail(mvhd);
  if (mvhd.timescale > 0 && mvhd.duration !== null && mvhd.duration > 0) {
    return { ok: true, seconds: mvhd.duration / mvhd.timescale, timescale: mvhd.timescale, duration: mvhd.duration, from: 'mvhd' };
  }
  // No movie duration (unknown or 0): the longest track's media duration.
  let best: Mp4Duration = fail('no track states a duration');
  for (const trak of boxes.filter((b) => b.type === 'trak')) {
    const trakBody = bodyOf(moov, trak);
    const inTrak = children(trakBody);
    if (typeof inTrak === 'string') return fail(inTrak);
    const mdia = inTrak.find((b) => b.type === 'mdia');
    if (!mdia) continue;
    const mdiaBody = bodyOf(trakBody, mdia);
    const inMdia = children(mdiaBody);
    if (typeof inMdia === 'string') return fail(inMdia);
    const mdhdBox = inMdia.find((b) => b.type === 'mdhd');
    if (!mdhdBox) continue;
    const mdhd = timeHeader(bodyOf(mdiaBody, mdhdBox), 'mdhd');
    if (typeof mdhd === 'string') return fail(mdhd);
    if (mdhd.timescale === 0 || mdhd.duration === null || mdhd.duration === 0) continue;
    const seconds = mdhd.duration / mdhd.timescale;
    if (!best.ok || seconds > best.seconds) best = { ok: true, seconds, timescale: mdhd.timescale, duration: mdhd.duration, from: 'mdhd' };
  }
  return best;
}

async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await file.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}

/** Walks the file's top-level boxes to `moov` and reads its duration. */
export async function readMp4Duration(path: string): Promise<Mp4Duration> {
  let file: FileHandle;
  try {
    file = await open(path, 'r');
  } catch (err) {
    return fail(`cannot open: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  try {
    const fileSize = (await file.stat()).size;
    let position = 0;
    let first = true;
    while (position < fileSize) {
      const head = await readAt(file, position, 16);
      const header = boxHeader(head, 0, fileSize, position);
      if (typeof header === 'string') return fail(header);
      // An MP4/MOV starts with ftyp (or, in old QuickTime files, one of these).
      if (first && !['ftyp', 'moov', 'mdat', 'free', 'skip', 'wide', 'pnot'].includes(header.type)) return fail('not an MP4/MOV file');
      first = false;
      if (header.type === 'moov') {
        const bodySize = header.size - header.headerSize;
        if (bodySize > MAX_MOOV_BYTES) return fail(`moov of ${bodySize} bytes is larger than ${MAX_MOOV_BYTES}`);
        const body = await readAt(file, position + header.headerSize, bodySize);
        if (body.length < bodySize) return fail('truncated moov');
        return moovDuration(body);
      }
      position += header.size;
    }
    return fail('no moov box');
  } catch (err) {
    return fail(`cannot read: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    await file.close();
  }
}
