/**
 * Media inputs arrive by value: an `https://` URL or a Base64 data URL
 * (`data:<mime>;base64,<payload>`). This file classifies and decodes them without touching
 * the network; fetching lives in fetcher.ts.
 */

export type MediaStringKind = 'https' | 'data';

export type MediaStringCheck = { readonly ok: true; readonly kind: MediaStringKind } | { readonly ok: false; readonly reason: string };

// Standard alphabet; padding optional at the end. Whitespace is not allowed: a data URL is one token.
// Searched for a character outside it (unanchored: twice as fast as matching the whole payload
// on a 32 MiB data URL, which runs on the event loop), then the padding's place checked.
const NOT_BASE64 = /[^A-Za-z0-9+/=]/;
const DATA_PREFIX = /^data:([^;,]*)((?:;[^;,=]+=[^;,]*)*);base64,/i;

export interface ParsedDataUrl {
  readonly mime: string;
  /** Offset of the first Base64 character in the original string. */
  readonly payloadStart: number;
}

/** Returns the header of a Base64 data URL, or null when the string is not one. */
export function parseDataUrlHeader(value: string): ParsedDataUrl | null {
  const match = DATA_PREFIX.exec(value.slice(0, 512));
  if (!match) return null;
  return { mime: (match[1] ?? '').toLowerCase(), payloadStart: match[0].length };
}

function isDecodableBase64(payload: string): boolean {
  if (payload.length === 0) return false;
  // A single leftover character cannot encode a byte.
  if (payload.length % 4 === 1) return false;
  if (NOT_BASE64.test(payload)) return false;
  const pad = payload.indexOf('=');
  return pad === -1 || pad === payload.length - 1 || (pad === payload.length - 2 && payload.endsWith('='));
}

/** Classifies a media string: an absolute https URL with a host, or a decodable Base64 data URL. */
export function checkMediaString(value: string): MediaStringCheck {
  if (value.startsWith('data:') || value.startsWith('DATA:')) {
    const header = parseDataUrlHeader(value);
    if (!header) return { ok: false, reason: 'is a data URL without ";base64," (only Base64 data URLs are accepted)' };
    if (!isDecodableBase64(value.slice(header.payloadStart))) {
      return { ok: false, reason: 'is a data URL whose Base64 payload does not decode' };
    }
    return { ok: true, kind: 'data' };
  }
  if (/^https:\/\//i.test(value)) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return { ok: false, reason: 'is not a valid URL' };
    }
    if (url.protocol !== 'https:' || url.hostname === '') return { ok: false, reason: 'is not a valid https URL' };
    return { ok: true, kind: 'https' };
  }
  return { ok: false, reason: 'must be an https:// URL or a Base64 data URL' };
}

/** Decodes a Base64 data URL already accepted by checkMediaString. */
export function decodeDataUrl(value: string): { mime: string; bytes: Buffer } {
  const header = parseDataUrlHeader(value);
  if (!header) throw new TypeError('not a Base64 data URL');
  return { mime: header.mime, bytes: Buffer.from(value.slice(header.payloadStart), 'base64') };
}

/** Decoded size of a Base64 payload, computed without decoding it. */
export function decodedDataUrlSize(value: string): number {
  const header = parseDataUrlHeader(value);
  if (!header) return 0;
  const len = value.length - header.payloadStart;
  let pad = 0;
  if (value.endsWith('==')) pad = 2;
  else if (value.endsWith('=')) pad = 1;
  return Math.floor(((len - pad) * 3) / 4);
}
