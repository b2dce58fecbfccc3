/**
 * The SDK's data-URL helpers: the MIME type is the one given, else sniffed from the bytes, else
 * the extension's, else application/octet-stream; the payload round-trips.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bufferToDataURL, fileToDataURL, isMediaURL, mimeTypeFromName, sniffMimeType, toDataURL } from '../src/client/index.js';

let dir: string;
let png: Buffer;
let jpeg: Buffer;
let webp: Buffer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mediagate-data-url-'));
  const image = sharp({ create: { width: 8, height: 6, channels: 3, background: '#336699' } });
  png = await image.clone().png().toBuffer();
  jpeg = await image.clone().jpeg().toBuffer();
  webp = await image.clone().webp().toBuffer();
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const bytes = (...parts: (string | number[])[]): Buffer =>
  Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'latin1') : Buffer.from(part))));

function decode(dataUrl: string): { mime: string; payload: Buffer } {
  const match = /^data:([^;,]+);base64,([A-Za-z0-9+/]*={0,2})$/.exec(dataUrl);
  if (!match) throw new Error(`not a Base64 data URL: ${dataUrl.slice(0, 40)}`);
  return { mime: match[1] ?? '', payload: Buffer.from(match[2] ?? '', 'base64') };
}

describe('sniffMimeType', () => {
  it('recognises images encoded by a real encoder', () => {
    expect(sniffMimeType(png)).toBe('image/png');
    expect(sniffMimeType(jpeg)).toBe('image/jpeg');
    expect(sniffMimeType(webp)).toBe('image/webp');
  });

  it('recognises common video and audio containers by their signatures', () => {
    const zeros = Array<number>(16).fill(0);
    expect(sniffMimeType(bytes([0, 0, 0, 0x20], 'ftypisom', zeros))).toBe('video/mp4');
    expect(sniffMimeType(bytes([0, 0, 0, 0x14], 'ftypqt  ', zeros))).toBe('video/quicktime');
    expect(sniffMimeType(bytes([0, 0, 0, 0x20], 'ftypM4A ', zeros))).toBe('audio/mp4');
    expect(sniffMimeType(bytes('RIFF', [0, 0, 0, 0], 'WAVEfmt ', zeros))).toBe('audio/wav');
    expect(sniffMimeType(bytes([0x1a, 0x45, 0xdf, 0xa3], zeros, 'webm', zeros))).toBe('video/webm');
    expect(sniffMimeType(bytes('OggS', zeros))).toBe('audio/ogg');
    expect(sniffMimeType(bytes('fLaC', zeros))).toBe('audio/flac');
    expect(sniffMimeType(bytes('ID3', zeros))).toBe('audio/mpeg');
    expect(sniffMimeType(bytes('GIF89a', zeros))).toBe('image/gif');
    expect(sniffMimeType(bytes('hello world, not media'))).toBeUndefined();
    expect(sniffMimeType(new Uint8Array())).toBeUndefined();
  });
});

describe('data URLs', () => {
  it('from bytes: sniffed type, exact payload', () => {
    const { mime, payload } = decode(bufferToDataURL(png));
    expect(mime).toBe('image/png');
    expect(payload.equals(png)).toBe(true);
    expect(decode(bufferToDataURL(new Uint8Array(jpeg).buffer)).mime).toBe('image/jpeg');
  });

  it('from a file: sniffed type wins over a misleading extension; extension when bytes say nothing', async () => {
    const misnamed = join(dir, 'photo.jpg');
    await writeFile(misnamed, png);
    expect(decode(await fileToDataURL(misnamed)).mime).toBe('image/png');
    const clip = join(dir, 'clip.MOV');
    await writeFile(clip, 'not really a movie');
    expect(decode(await fileToDataURL(clip)).mime).toBe('video/quicktime');
    const unknown = join(dir, 'blob.xyz');
    await writeFile(unknown, 'opaque');
    expect(decode(await fileToDataURL(unknown)).mime).toBe('application/octet-stream');
  });

  it('an explicit type always wins', async () => {
    const path = join(dir, 'a.png');
    await writeFile(path, png);
    expect(decode(await fileToDataURL(path, { mimeType: 'image/x-custom' })).mime).toBe('image/x-custom');
    expect(decode(bufferToDataURL(png, { mimeType: 'application/x-test' })).mime).toBe('application/x-test');
  });

  it('toDataURL takes a path, a file: URL, a Buffer, an ArrayBuffer or a Blob', async () => {
    const path = join(dir, 'b.webp');
    await writeFile(path, webp);
    expect(decode(await toDataURL(path)).mime).toBe('image/webp');
    expect(decode(await toDataURL(pathToFileURL(path))).payload.equals(webp)).toBe(true);
    expect(decode(await toDataURL(jpeg)).mime).toBe('image/jpeg');
    expect(decode(await toDataURL(new Blob([new Uint8Array(png)])))).toMatchObject({ mime: 'image/png' });
    expect(decode(await toDataURL(new Blob(['abc'], { type: 'text/plain' }))).mime).toBe('text/plain');
  });

  it('names and ready-made inputs', () => {
    expect(mimeTypeFromName('/x/y/Clip.WebM')).toBe('video/webm');
    expect(mimeTypeFromName('song.mp3')).toBe('audio/mpeg');
    expect(mimeTypeFromName('README')).toBeUndefined();
    expect(isMediaURL('https://cdn.example.com/a.png')).toBe(true);
    expect(isMediaURL('data:image/png;base64,AAAA')).toBe(true);
    expect(isMediaURL('http://cdn.example.com/a.png')).toBe(false);
    expect(isMediaURL('./a.png')).toBe(false);
  });
});
