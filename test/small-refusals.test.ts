/**
 * The smaller refusals: an admin key takes no client-only setting (admin API 400, CLI exit 1);
 * a name that does not resolve and one that resolves inward get one and the same refusal (a
 * webhook URL, an input URL checked without a fetch, a fetch); a path parameter over the
 * router's 256 characters is answered after the key is checked (401, then 404 in the family's
 * envelope), never as a body error; an answer repeats at most 200 characters of a client's text;
 * a key name with bidi or invisible characters is refused.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchHttps } from '../src/media/fetcher.js';
import { FetchError } from '../src/outbound/client.js';
import { assertPublicUrl } from '../src/outbound/url-refusal.js';
import { envKeyId } from './helpers/ledger.js';
import { startServer, type TestServer } from './helpers/server.js';
import { CLI } from './helpers/process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);
const ADMIN = 'mg_small_refusals_admin_0123456789';

type Body = Record<string, unknown>;

const notFound = (): Promise<never> => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }));
/** internal.example resolves to a private address; missing.example does not resolve. */
const resolve = (host: string): Promise<readonly { address: string }[]> =>
  host === 'internal.example' ? Promise.resolve([{ address: '10.0.0.5' }]) : notFound();

describe('smaller refusals over HTTP', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_ADMIN_KEYS: ADMIN, MEDIAGATE_WORKERS: 'false' }, { webhookResolve: resolve });
  });
  afterAll(() => server.close());

  async function call(method: string, path: string, key: string | undefined, body?: unknown): Promise<{ status: number; text: string; body: Body }> {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, text, body: JSON.parse(text) as Body };
  }

  it('PATCH of an admin key with a client-only setting is a 400 naming it; with only a name it stays a 404', async () => {
    const id = envKeyId(ADMIN);
    for (const [field, value] of [
      ['budget', 5],
      ['models', ['vendora/*']],
      ['rate_limit_per_min', 10],
      ['max_tasks_in_flight', 3],
    ] as const) {
      const answer = await call('PATCH', `/v1/admin/keys/${id}`, ADMIN, { [field]: value });
      expect(answer.status, field).toBe(400);
      expect(answer.body['error']).toMatchObject({ code: 'unsupported_parameter', param: field });
      expect(String((answer.body['error'] as Body)['message'])).toContain('client keys only');
    }
    expect((await call('PATCH', `/v1/admin/keys/${id}`, ADMIN, { name: 'ops' })).status).toBe(404);
    // Nothing was stored on it.
    const stored = await server.app.store.getKey(id, Date.now());
    expect(stored).toMatchObject({ role: 'admin', budget: null, models: null, rateLimitPerMin: null, maxTasksInFlight: null });
  });

  it('a webhook URL whose name does not resolve and one that resolves inward get the same refusal', async () => {
    const missing = await call('POST', '/v1/webhooks', server.keys[0], { url: 'https://missing.example/hook' });
    const internal = await call('POST', '/v1/webhooks', server.keys[0], { url: 'https://internal.example/hook' });
    expect(missing.status).toBe(400);
    expect(internal.status).toBe(400);
    const message = (answer: { body: Body }, host: string) => String((answer.body['error'] as Body)['message']).replace(host, '<host>');
    expect(message(missing, 'missing.example')).toBe(message(internal, 'internal.example'));
    expect(message(missing, 'missing.example')).toBe('url is refused: <host> is not a public address; only public addresses are fetched.');
  });

  it.each([
    ['GET', '/v1/video/generations/'],
    ['POST', '/v1/video/generations/'],
    ['GET', '/v1/images/generations/async/'],
    ['DELETE', '/v1/webhooks/'],
  ])('%s %s<300 characters>: 401 without a key, then a 404 in the family envelope, never a body error', async (method, prefix) => {
    const path = `${prefix}${'a'.repeat(300)}${method === 'POST' ? '/cancel' : ''}`;
    const anonymous = await call(method, path, undefined, method === 'POST' ? '{not json' : undefined);
    expect(anonymous.status).toBe(401);
    const known = await call(method, path, server.keys[0], method === 'POST' ? '{not json' : undefined);
    expect(known.status).toBe(404);
    expect(known.text).not.toContain('not valid JSON');
    if (prefix.startsWith('/v1/images')) expect(known.body).toMatchObject({ code: 'not_found', data: null });
    else expect(known.body['error']).toMatchObject({ code: 'not_found' });
  });

  it('a 1 MiB field name is repeated cut at 200 characters: the answer stays small', async () => {
    const name = 'x'.repeat(1024 * 1024);
    const answer = await call('POST', '/v1/video/generations', server.keys[0], { model: 'vendora/famw-2.7-t2v', prompt: 'a fox', [name]: 1 });
    expect(answer.status).toBe(400);
    expect(answer.text.length).toBeLessThan(4096);
    const error = answer.body['error'] as Body;
    expect(error['param']).toBe(`${'x'.repeat(200)}…`);
    expect(String(error['message'])).toContain(`'${'x'.repeat(200)}…'`);
  });

  it.each([
    ['a right-to-left override', 'ops\u202Etxt.exe'],
    ['a zero-width space', 'ops\u200Bteam'],
    ['a byte order mark', '\uFEFFops'],
    ['a Hangul filler', 'ops\u3164'],
  ])('a key name with %s is refused', async (_what, name) => {
    const answer = await call('POST', '/v1/admin/keys', ADMIN, { name });
    expect(answer.status).toBe(400);
    expect(answer.body['error']).toMatchObject({ code: 'invalid_parameter', param: 'name' });
    expect(String((answer.body['error'] as Body)['message'])).toMatch(/invisible or bidirectional control characters; found U\+[0-9A-F]{4}/);
  });

  it('a plain name with accents and emoji is still accepted', async () => {
    expect((await call('POST', '/v1/admin/keys', ADMIN, { name: 'équipe vidéo 🎬' })).status).toBe(201);
  });
});

describe('one refusal below the HTTP layer', () => {
  const refusal = async (check: Promise<unknown>): Promise<FetchError> => {
    const error = await check.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(FetchError);
    return error as FetchError;
  };

  it('assertPublicUrl: an unresolvable name and a private one, the same reason and words', async () => {
    const missing = await refusal(assertPublicUrl('https://missing.example/a.png', {}, resolve));
    const internal = await refusal(assertPublicUrl('https://internal.example/a.png', {}, resolve));
    expect(missing.reason).toBe(internal.reason);
    expect(missing.message.replace('missing.example', 'H')).toBe(internal.message.replace('internal.example', 'H'));
  });

  it('a fetch of a name that does not resolve is refused as a private one is', async () => {
    const missing = await refusal(fetchHttps('https://mediagate-test-missing.invalid/a.png', { timeoutMs: 10_000 }));
    const internal = await refusal(fetchHttps('https://127.0.0.1/a.png', { timeoutMs: 10_000 }));
    expect(missing.reason).toBe('refused');
    expect(missing.message.replace('mediagate-test-missing.invalid', 'H')).toBe(internal.message.replace('127.0.0.1', 'H'));
  });
});

describe('mediagate keys set on an admin key', () => {
  it('refuses a client-only setting with exit code 1, and stores nothing', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'mediagate-admin-set-'));
    const cli = async (args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
      try {
        const { stdout, stderr } = await run(process.execPath, [CLI, 'keys', ...args], {
          cwd: ROOT,
          env: { ...process.env, DATABASE_URL: '', MEDIAGATE_API_KEYS: '', MEDIAGATE_DATA_DIR: dataDir },
        });
        return { code: 0, stdout, stderr };
      } catch (error) {
        const failed = error as { code: number; stdout: string; stderr: string };
        return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
      }
    };
    try {
      const created = await cli(['create', '--admin', '--name', 'ops', '--json']);
      expect(created.code, created.stderr).toBe(0);
      const { id } = JSON.parse(created.stdout) as { id: string };
      const refused = await cli(['set', id, '--rate-limit', '10']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`${id} is an admin key: 'rate_limit_per_min' applies to client keys only`);
      const shown = await cli(['show', id, '--json']);
      expect(JSON.parse(shown.stdout)).toMatchObject({ role: 'admin', rateLimitPerMin: null });
      // What an admin key does take still works.
      expect((await cli(['set', id, '--name', 'operations'])).code).toBe(0);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
