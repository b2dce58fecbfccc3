/**
 * Reads the format and pixel size of a PNG or JPEG from its first bytes, without decoding the
 * image. Used to check seed rule 3 at creation time, where a full decode would cost too much
 * on the request path; the engine still decodes with sharp before using an image.
 */

export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp' | 'other';

export interface ImageHeader {
  readonly format: ImageFormat;
  /** Null when the format is known but its size could not be read (truncated or corrupt). */
  readonly width: number | null;
  readonly height: number | null;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function pngHeader(bytes: Buffer): ImageHeader {
  // The IHDR chunk is always first: length(4) type(4) width(4) height(4).
  if (bytes.length < 24 || bytes.toString('latin1', 12, 16) !== 'IHDR') {
    return { format: 'png', width: null, height: null };
  }
  return { format: 'png', width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

function isStartOfFrame(marker: number): boolean {
  // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC).
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

function jpegHeader(bytes: Buffer): ImageHeader {
  let offset = 2;
  while (offset + 4 <= bytes.length) {
    if (bytes[offset] !== 0xff) return { format: 'jpeg', width: null, height: null };
    const marker = bytes[offset + 1] ?? 0;
    if (marker === 0xff) {
      offset += 1; // fill byte
      continue;
    }
    if (marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      offset += 2;
      continue;
    }
    const length = bytes.readUInt16BE(offset + 2);
    if (isStartOfFrame(marker)) {
      if (offset + 9 > bytes.length) break;
      return { format: 'jpeg', height: bytes.readUInt16BE(offset + 5), width: bytes.readUInt16BE(offset + 7) };
    }
    if (length < 2) break;
    offset += 2 + length;
  }
  return { format: 'jpeg', width: null, height: null };
}

export function readImageHeader(bytes: Buffer): ImageHeader {
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return pngHeader(bytes);
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return jpegHeader(bytes);
  if (bytes.length >= 6 && bytes.toString('latin1', 0, 4) === 'GIF8') return { format: 'gif', width: null, height: null };
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') {
    return { format: 'webp', width: null, height: null };
  }
  return { format: 'other', width: null, height: null };
}

/** Seed rule 3 for `vendord/v6/image-to-video`. Returns null when the image passes, else why not. */
export const RULE3 = { maxBytes: 10 * 1024 * 1024, minSide: 300, minRatio: 0.4, maxRatio: 2.5 } as const;

export function checkRule3Image(bytes: Buffer): string | null {
  if (bytes.length > RULE3.maxBytes) {
    return `is ${bytes.length} bytes; at most ${RULE3.maxBytes} bytes (10 MB) are allowed`;
  }
  const header = readImageHeader(bytes);
  if (header.format !== 'png' && header.format !== 'jpeg') return 'must be a JPG, JPEG or PNG image';
  if (header.width === null || header.height === null || header.width === 0 || header.height === 0) {
    return `is a ${header.format.toUpperCase()} whose size cannot be read`;
  }
  if (header.width < RULE3.minSide || header.height < RULE3.minSide) {
    return `is ${header.width}x${header.height} pixels; at least ${RULE3.minSide}x${RULE3.minSide} is required`;
  }
  const ratio = header.width / header.height;
  if (ratio < RULE3.minRatio || ratio > RULE3.maxRatio) {
    return `has aspect ratio ${ratio.toFixed(3)} (width/height); it must be from ${RULE3.minRatio} to ${RULE3.maxRatio}`;
  }
  return null;
}
