/**
 * Media inputs are passed by value: an `https://` URL or a Base64 data URL. These helpers turn
 * a local file or bytes into a data URL with the right MIME type: the type given, else the one
 * sniffed from the first bytes, else the one of the file name's extension, else
 * `application/octet-stream`.
 */

const EXTENSIONS: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  bmp: 'image/bmp',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  avif: 'image/avif',
  heic: 'image/heic',
  mp4: 'video/mp4',
  m4v: 'video/mp4',
  mov: 'video/quicktime',
  webm: 'video/webm',
  mkv: 'video/x-matroska',
  avi: 'video/x-msvideo',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  oga: 'audio/ogg',
  flac: 'audio/flac',
  m4a: 'audio/mp4',
  aac: 'audio/aac',
};

const DEFAULT_MIME = 'application/octet-stream';

function ascii(bytes: Uint8Array, start: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(start, start + length));
}

function startsWith(bytes: Uint8Array, signature: readonly number[], offset = 0): boolean {
  return signature.every((byte, index) => bytes[offset + index] === byte);
}

/** The MIME type of common image, video and audio formats from their first bytes; undefined when unknown. */
export function sniffMimeType(bytes: Uint8Array): string | undefined {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  const head4 = ascii(bytes, 0, 4);
  if (ascii(bytes, 0, 6) === 'GIF87a' || ascii(bytes, 0, 6) === 'GIF89a') return 'image/gif';
  if (head4 === 'RIFF') {
    const form = ascii(bytes, 8, 4);
    if (form === 'WEBP') return 'image/webp';
    if (form === 'WAVE') return 'audio/wav';
    if (form === 'AVI ') return 'video/x-msvideo';
  }
  if (ascii(bytes, 4, 4) === 'ftyp') {
    const brand = ascii(bytes, 8, 4);
    if (brand === 'qt  ') return 'video/quicktime';
    if (brand === 'M4A ' || brand === 'M4B ') return 'audio/mp4';
    if (brand === 'avif' || brand === 'avis') return 'image/avif';
    if (brand === 'heic' || brand === 'heix' || brand === 'mif1') return 'image/heic';
    return 'video/mp4';
  }
  if (startsWith(bytes, [0x1a, 0x45, 0xdf, 0xa3])) return ascii(bytes, 0, 64).includes('webm') ? 'video/webm' : 'video/x-matroska';
  if (head4 === 'OggS') return 'audio/ogg';
  if (head4 === 'fLaC') return 'audio/flac';
  if (ascii(bytes, 0, 3) === 'ID3') return 'audio/mpeg';
  if (bytes[0] === 0xff && bytes[1] !== undefined && (bytes[1] & 0xe0) === 0xe0) {
    // MPEG audio frame sync; 0xFFF1/0xFFF9 is ADTS AAC.
    return (bytes[1] & 0x06) === 0 ? 'audio/aac' : 'audio/mpeg';
  }
  if (startsWith(bytes, [0x49, 0x49, 0x2a, 0x00]) || startsWith(bytes, [0x4d, 0x4d, 0x00, 0x2a])) return 'image/tiff';
  if (ascii(bytes, 0, 2) === 'BM' && bytes.length >= 14) return 'image/bmp';
  return undefined;
}

/** The MIME type of a file name's extension (`clip.MOV` -> `video/quicktime`); undefined when unknown. */
export function mimeTypeFromName(name: string): string | undefined {
  const match = /\.([A-Za-z0-9]+)$/.exec(name);
  return match?.[1] ? EXTENSIONS[match[1].toLowerCase()] : undefined;
}

function base64(bytes: Uint8Array): string {
  if (typeof Buffer !== 'undefined') return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

export interface DataURLOptions {
  /** The MIME type to declare, e.g. `image/png`; sniffed from the bytes when omitted. */
  readonly mimeType?: string;
}

/** Bytes -> `data:<mime>;base64,...`. */
export function bufferToDataURL(data: Uint8Array | ArrayBuffer, options: DataURLOptions = {}): string {
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
  const mime = options.mimeType ?? sniffMimeType(bytes) ?? DEFAULT_MIME;
  return `data:${mime};base64,${base64(bytes)}`;
}

/** A local file -> `data:<mime>;base64,...` (Node.js). The type is sniffed from its bytes, else its extension. */
export async function fileToDataURL(path: string | URL, options: DataURLOptions = {}): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  const bytes = await readFile(path);
  const name = typeof path === 'string' ? path : path.pathname;
  const mimeType = options.mimeType ?? sniffMimeType(bytes) ?? mimeTypeFromName(name) ?? DEFAULT_MIME;
  return bufferToDataURL(bytes, { mimeType });
}

/**
 * Anything that holds media -> a data URL: a file path or `file:` URL (read from disk), bytes
 * (`Buffer`, `Uint8Array`, `ArrayBuffer`) or a `Blob` (its `type` is used when set).
 */
export async function toDataURL(input: string | URL | Uint8Array | ArrayBuffer | Blob, options: DataURLOptions = {}): Promise<string> {
  if (typeof input === 'string' || input instanceof URL) return fileToDataURL(input, options);
  if (input instanceof Uint8Array || input instanceof ArrayBuffer) return bufferToDataURL(input, options);
  const bytes = new Uint8Array(await input.arrayBuffer());
  return bufferToDataURL(bytes, { mimeType: options.mimeType ?? (sniffMimeType(bytes) || input.type || DEFAULT_MIME) });
}

/** Whether a string is already a media input the service accepts as is (`https://` URL or Base64 data URL). */
export function isMediaURL(value: string): boolean {
  return /^https:\/\//i.test(value) || /^data:[^,]*;base64,/i.test(value);
}
