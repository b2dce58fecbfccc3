/**
 * Shared helpers for the black-box conformance suite.
 *
 * Everything here talks HTTP to a real server started by `test/helpers/server.ts`; nothing
 * imports from `src/`. Assertions compare error `code` / `param` (and envelope shapes), never
 * message prose.
 */
import sharp from 'sharp';
import { expect } from 'vitest';
import type { TestServer } from '../helpers/server.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface HttpResult {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** Parsed body, or `undefined` when the body is not JSON. */
  readonly json: unknown;
}

export interface RequestOptions {
  /** A JSON value to serialise, or a raw string sent as is. */
  readonly body?: Body;
  /** API key for `Authorization: Bearer <key>`; `null` sends no Authorization header. */
  readonly key?: string | null;
  /** Full Authorization header value; overrides `key`. */
  readonly authorization?: string;
  readonly contentType?: string | null;
  readonly headers?: Readonly<Record<string, string>>;
}

export const VIDEO_CREATE = '/v1/video/generations';
export const IMAGE_CREATE = '/v1/images/generations/async';

/** A request body sent verbatim (not JSON-serialised). */
export class RawBody {
  constructor(readonly text: string) {}
}

export type Body = Json | RawBody;

export class Api {
  constructor(readonly server: TestServer) {}

  get keyA(): string {
    return this.server.keys[0];
  }

  get keyB(): string {
    return this.server.keys[1];
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<HttpResult> {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.authorization !== undefined) {
      headers['authorization'] = options.authorization;
    } else if (options.key !== null) {
      headers['authorization'] = `Bearer ${options.key ?? this.keyA}`;
    }
    let body: string | undefined;
    if (options.body !== undefined) {
      body = options.body instanceof RawBody ? options.body.text : JSON.stringify(options.body);
      if (options.contentType !== null) headers['content-type'] = options.contentType ?? 'application/json';
    }
    const res = await fetch(this.server.url + path, { method, headers, body });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  }

  createVideo(body: Body, options: Omit<RequestOptions, 'body'> = {}): Promise<HttpResult> {
    return this.request('POST', VIDEO_CREATE, { ...options, body });
  }

  getVideo(id: string, options: Omit<RequestOptions, 'body'> = {}): Promise<HttpResult> {
    return this.request('GET', `${VIDEO_CREATE}/${encodeURIComponent(id)}`, options);
  }

  createImage(body: Body, options: Omit<RequestOptions, 'body'> = {}): Promise<HttpResult> {
    return this.request('POST', IMAGE_CREATE, { ...options, body });
  }

  getImage(id: string, options: Omit<RequestOptions, 'body'> = {}): Promise<HttpResult> {
    return this.request('GET', `${IMAGE_CREATE}/${encodeURIComponent(id)}`, options);
  }
}

/** Wraps a raw (non-JSON-serialised) request body. */
export function raw(text: string): RawBody {
  return new RawBody(text);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function field(value: unknown, key: string): unknown {
  return isRecord(value) ? value[key] : undefined;
}

/** A summary that shows everything relevant in one diff when an assertion fails. */
function describeVideoError(res: HttpResult): Record<string, unknown> {
  const error = field(res.json, 'error');
  return {
    status: res.status,
    code: field(error, 'code'),
    param: field(error, 'param'),
  };
}

/**
 * Asserts a video-family error: `{error:{type, code, message, param}}` with the given HTTP status,
 * code and param. For 400 the type is `invalid_request_error` (decisions §1).
 */
export function expectVideoError(res: HttpResult, status: number, code: string, param: string, type?: string): void {
  expect(describeVideoError(res), res.text.slice(0, 2000)).toEqual({ status, code, param });
  expectVideoErrorShape(res);
  const expectedType = type ?? (status === 400 ? 'invalid_request_error' : undefined);
  if (expectedType !== undefined) expect(field(field(res.json, 'error'), 'type')).toBe(expectedType);
}

/** Shape of every video-family error body (decisions §1): four string fields, no stack trace. */
export function expectVideoErrorShape(res: HttpResult): void {
  expect(isRecord(res.json), res.text.slice(0, 2000)).toBe(true);
  const error = field(res.json, 'error');
  expect(isRecord(error), res.text.slice(0, 2000)).toBe(true);
  expect(typeof field(error, 'type')).toBe('string');
  expect(typeof field(error, 'code')).toBe('string');
  expect(typeof field(error, 'message')).toBe('string');
  expect(typeof field(error, 'param')).toBe('string');
  expectNoStackTrace(res);
}

/** Asserts an image-family error: `{code, message, data:null}` with the given HTTP status and code. */
export function expectImageError(res: HttpResult, status: number, code: string): void {
  expect({ status: res.status, code: field(res.json, 'code') }, res.text.slice(0, 2000)).toEqual({ status, code });
  expectImageErrorShape(res);
}

export function expectImageErrorShape(res: HttpResult): void {
  expect(isRecord(res.json), res.text.slice(0, 2000)).toBe(true);
  expect(typeof field(res.json, 'code')).toBe('string');
  expect(field(res.json, 'code')).not.toBe('success');
  expect(typeof field(res.json, 'message')).toBe('string');
  expect(field(res.json, 'data')).toBeNull();
  expectNoStackTrace(res);
}

export function expectNoStackTrace(res: HttpResult): void {
  expect(res.text).not.toMatch(/\n\s+at\s|\bat\s+[\w.<>]+\s+\(.*:\d+:\d+\)|"stack"\s*:/);
}

const URL_SAFE_ID = /^[A-Za-z0-9._~-]{16,}$/;

/** Asserts the creation response of a video task (seed "Video create response"). */
export function expectQueuedVideoTask(res: HttpResult, model: string): string {
  expect(res.status, res.text.slice(0, 2000)).toBe(200);
  expect(res.headers.get('content-type') ?? '').toMatch(/^application\/json/);
  const body = res.json;
  expect(isRecord(body), res.text.slice(0, 2000)).toBe(true);
  expect(body).toMatchObject({
    object: 'video.generation',
    status: 'queued',
    model,
    outputs: [],
    progress: null,
    started_at: null,
    completed_at: null,
    error: null,
  });
  const id = field(body, 'id');
  expect(typeof id).toBe('string');
  expect(id).toMatch(URL_SAFE_ID);
  expectSecondsNearNow(field(body, 'created_at'));
  return String(id);
}

/** Asserts the creation envelope of an image task and returns the task id. */
export function expectImageCreated(res: HttpResult): string {
  expect(res.status, res.text.slice(0, 2000)).toBe(200);
  expect(res.headers.get('content-type') ?? '').toMatch(/^application\/json/);
  expect(res.json).toEqual({ code: 'success', message: '', data: { task_id: expect.any(String) } });
  const id = field(field(res.json, 'data'), 'task_id');
  expect(id).toMatch(URL_SAFE_ID);
  return String(id);
}

/** Unix time in whole seconds, within a minute of now (decisions §5). */
export function expectSecondsNearNow(value: unknown): void {
  expect(Number.isInteger(value), `timestamp ${String(value)} must be an integer`).toBe(true);
  const now = Date.now() / 1000;
  expect(Math.abs(Number(value) - now), `timestamp ${String(value)} must be Unix seconds near ${now}`).toBeLessThan(120);
}

// ---------------------------------------------------------------------------------------------
// Media fixtures
// ---------------------------------------------------------------------------------------------

export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';

const MIME: Record<ImageFormat, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

export async function imageBuffer(width: number, height: number, format: ImageFormat = 'png'): Promise<Buffer> {
  const base = sharp({ create: { width, height, channels: 3, background: { r: 180, g: 90, b: 40 } } });
  switch (format) {
    case 'png':
      return base.png().toBuffer();
    case 'jpeg':
      return base.jpeg().toBuffer();
    case 'gif':
      return base.gif().toBuffer();
    case 'webp':
      return base.webp().toBuffer();
  }
}

export function dataUrl(buffer: Buffer, mime: string): string {
  return `data:${mime};base64,${buffer.toString('base64')}`;
}

export async function imageDataUrl(width: number, height: number, format: ImageFormat = 'png'): Promise<string> {
  return dataUrl(await imageBuffer(width, height, format), MIME[format]);
}

/**
 * An uncompressed (zlib level 0) PNG of random pixels, so that its byte size is about
 * width * height * 3. Used for the byte-size limits.
 */
export async function largePngBuffer(width: number, height: number): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3);
  for (let i = 0; i < pixels.length; i += 1) pixels[i] = (i * 2654435761) >>> 24;
  return sharp(pixels, { raw: { width, height, channels: 3 } })
    .png({ compressionLevel: 0 })
    .toBuffer();
}
