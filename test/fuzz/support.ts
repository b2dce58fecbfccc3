/**
 * Shared pieces of the fuzz suite: a valid body per model, raw HTTP (so bytes, content types
 * and lengths are sent exactly as generated), and the envelope checks every answer must pass.
 *
 * Run counts: FUZZ_RUNS (default small, for CI); `npm run fuzz` sets it high.
 */
import { request as httpRequest } from 'node:http';
import { expect } from 'vitest';
import { MODELS, imageRequestSchema, videoRequestSchema, type ModelRow } from '../../src/catalog/index.js';

export const FUZZ_RUNS = Number(process.env['FUZZ_RUNS'] ?? '100');

export const VIDEO_PATH = '/v1/video/generations';
export const IMAGE_PATH = '/v1/images/generations/async';

/** Every code a client may see in an error envelope (docs/interface.md). */
export const DOCUMENTED_CODES = new Set([
  'missing_parameter',
  'invalid_parameter',
  'unsupported_parameter',
  'unsupported_value',
  'invalid_api_key',
  'task_not_found',
  'rate_limit_exceeded',
  'not_found',
  'method_not_allowed',
]);

export type JsonObject = Record<string, unknown>;

/** A minimal valid body for a model: its required fields with plausible values. */
export function validBody(row: ModelRow): JsonObject {
  const body: JsonObject = { model: row.id, prompt: 'a red fox running through snow' };
  const schema = row.kind === 'video' ? videoRequestSchema(row) : imageRequestSchema(row);
  for (const name of (schema['required'] as string[]).filter((n) => n !== 'model' && n !== 'prompt')) {
    if (name === 'images') body[name] = ['https://example.com/ref.png'];
    else if (name === 'aspect_ratio') body[name] = '16:9';
    else body[name] = 'https://example.com/first-frame.png';
  }
  // Seed rule 1: one reference is needed where the row says so.
  if (row.kind === 'video' && row.atLeastOneOf && body['images'] === undefined) body['images'] = ['https://example.com/ref.png'];
  return body;
}

/** Every parameter name any model knows: mutations set these as well as random names. */
export const KNOWN_FIELDS: readonly string[] = [
  ...new Set(
    MODELS.flatMap((row) => Object.keys(((row.kind === 'video' ? videoRequestSchema(row) : imageRequestSchema(row))['properties'] ?? {}) as JsonObject)),
  ),
];

export const pathOf = (row: ModelRow): string => (row.kind === 'video' ? VIDEO_PATH : IMAGE_PATH);

export interface RawReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
}

export interface RawRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Buffer;
}

/** One request over a fresh connection, bytes exactly as given. */
export function send(base: string, req: RawRequest): Promise<RawReply> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: req.path,
        method: req.method,
        headers: { ...req.headers, ...(req.body ? { 'content-length': String(req.body.length) } : {}) },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(req.body);
  });
}

/**
 * What every answer must be: never a 5xx; JSON in the family's envelope; an error carries one of
 * the documented codes (and, in the video family, a string `param` and a known `type`).
 */
export function expectEnvelope(path: string, reply: RawReply, context: string): void {
  const where = `${context}\n-> ${reply.status} ${reply.text.slice(0, 400)}`;
  expect(reply.status, where).toBeLessThan(500);
  expect(String(reply.headers['content-type'] ?? ''), where).toMatch(/^application\/json/);
  const body = JSON.parse(reply.text) as JsonObject;
  const image = path.startsWith('/v1/images');
  if (image) {
    expect(typeof body['code'], where).toBe('string');
    expect(typeof body['message'], where).toBe('string');
    expect('data' in body, where).toBe(true);
    if (reply.status === 200) expect(body['code'], where).toBe('success');
    else {
      expect(DOCUMENTED_CODES.has(String(body['code'])), where).toBe(true);
      expect(body['data'], where).toBeNull();
    }
    return;
  }
  if (reply.status === 200) {
    expect(body['object'], where).toBe('video.generation');
    expect(typeof body['id'], where).toBe('string');
    return;
  }
  const error = body['error'] as JsonObject | undefined;
  expect(error, where).toBeDefined();
  expect(DOCUMENTED_CODES.has(String(error?.['code'])), where).toBe(true);
  expect(typeof error?.['param'], where).toBe('string');
  expect(typeof error?.['message'], where).toBe('string');
  expect(['invalid_request_error', 'authentication_error', 'rate_limit_error'], where).toContain(error?.['type']);
  expect(reply.text, where).not.toMatch(/\n\s+at /);
}
