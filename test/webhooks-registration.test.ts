/**
 * Webhook endpoints over HTTP (decisions 8.5): registration answers the secret once, the list
 * hides it, delete removes, another key's endpoint is 404, bad bodies are refused with exact
 * codes and params, and a URL that is not https or does not pass the media inputs' address
 * policy (loopback, private, a name resolving to loopback) is refused at registration.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, postgresAvailability, selectedBackends, type TestDatabase } from './helpers/postgres.js';
import { startServer, TEST_KEYS, type TestServer } from './helpers/server.js';

const BACKENDS = [
  ...(selectedBackends().includes('sqlite') ? ['sqlite' as const] : []),
  ...((await postgresAvailability()).enabled ? ['postgres' as const] : []),
];

type Body = Record<string, unknown>;

async function call(server: TestServer, method: string, path: string, body?: unknown, key: string = TEST_KEYS[0]): Promise<{ status: number; body: Body }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Body };
}

function errorOf(body: Body): { type: unknown; code: unknown; param: unknown } {
  const error = body['error'] as Body;
  return { type: error['type'], code: error['code'], param: error['param'] };
}

describe.each(BACKENDS)('webhook endpoints over HTTP on %s', (backend) => {
  let server: TestServer;
  let database: TestDatabase | undefined;

  beforeAll(async () => {
    database = backend === 'postgres' ? await createTestDatabase() : undefined;
    server = await startServer(
      { MEDIAGATE_WORKERS: 'false', MEDIAGATE_WEBHOOK_MAX_ENDPOINTS: '3', ...(database ? { DATABASE_URL: database.url } : {}) },
      // public.example resolves to a public address, internal.example to a private one (no DNS in specs).
      {
        webhookResolve: (host) =>
          Promise.resolve(host === 'public.example' ? [{ address: '93.184.215.14' }] : host === 'internal.example' ? [{ address: '10.1.2.3' }] : []),
      },
    );
  });
  afterAll(async () => {
    await server.close();
    await database?.drop();
  });

  describe('register, list, delete', () => {
    it('answers the endpoint with its secret once; the list never shows it; delete removes it', async () => {
      const created = await call(server, 'POST', '/v1/webhooks', { url: 'https://public.example/hooks/a', events: ['image.failed', 'video.completed'] });
      expect(created.status).toBe(200);
      expect(created.body).toEqual({
        id: expect.stringMatching(/^wh_[A-Za-z0-9_-]{30}$/),
        object: 'webhook',
        url: 'https://public.example/hooks/a',
        events: ['video.completed', 'image.failed'],
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
        created_at: expect.any(Number),
      });
      expect(Buffer.from(String(created.body['secret']).slice(6), 'base64')).toHaveLength(32);

      const all = await call(server, 'POST', '/v1/webhooks', { url: 'https://public.example/hooks/b' });
      expect(all.body['events']).toEqual(['video.completed', 'video.failed', 'video.cancelled', 'image.completed', 'image.failed', 'image.cancelled']);
      expect(all.body['secret']).not.toBe(created.body['secret']);

      const list = await call(server, 'GET', '/v1/webhooks');
      expect(list.status).toBe(200);
      expect(list.body['object']).toBe('list');
      const data = list.body['data'] as Body[];
      expect(data.map((item) => item['id'])).toEqual([created.body['id'], all.body['id']]);
      for (const item of data) expect(Object.keys(item).sort()).toEqual(['created_at', 'events', 'id', 'object', 'url']);
      expect(JSON.stringify(list.body)).not.toContain('whsec_');

      const removed = await call(server, 'DELETE', `/v1/webhooks/${String(all.body['id'])}`);
      expect(removed).toEqual({ status: 200, body: { id: all.body['id'], object: 'webhook', deleted: true } });
      const again = await call(server, 'DELETE', `/v1/webhooks/${String(all.body['id'])}`);
      expect(again.status).toBe(404);
      expect(errorOf(again.body)).toEqual({ type: 'invalid_request_error', code: 'webhook_not_found', param: 'webhook_id' });
      expect(((await call(server, 'GET', '/v1/webhooks')).body['data'] as Body[]).map((item) => item['id'])).toEqual([created.body['id']]);
      await call(server, 'DELETE', `/v1/webhooks/${String(created.body['id'])}`);
    });

    it("keeps each key's endpoints to that key: another key's id is 404 everywhere", async () => {
      const mine = await call(server, 'POST', '/v1/webhooks', { url: 'https://public.example/mine' });
      const id = String(mine.body['id']);
      const other = TEST_KEYS[1];
      expect(((await call(server, 'GET', '/v1/webhooks', undefined, other)).body['data'] as Body[]).length).toBe(0);
      for (const [method, path] of [
        ['DELETE', `/v1/webhooks/${id}`],
        ['GET', `/v1/webhooks/${id}/deliveries`],
        ['POST', `/v1/webhooks/${id}/deliveries/msg_0000000000000000000000000000AA/redeliver`],
      ] as const) {
        const answer = await call(server, method, path, undefined, other);
        expect(answer.status, `${method} ${path}`).toBe(404);
        expect(errorOf(answer.body).code).toBe('webhook_not_found');
      }
      expect((await call(server, 'GET', `/v1/webhooks/${id}/deliveries`)).body).toEqual({ object: 'list', data: [], has_more: false, last_id: null });
      const unknownDelivery = await call(server, 'POST', `/v1/webhooks/${id}/deliveries/msg_0000000000000000000000000000AA/redeliver`);
      expect(unknownDelivery.status).toBe(404);
      expect(errorOf(unknownDelivery.body)).toEqual({ type: 'invalid_request_error', code: 'webhook_delivery_not_found', param: 'delivery_id' });
      await call(server, 'DELETE', `/v1/webhooks/${id}`);
    });

    it('refuses an endpoint over the per-key limit with 409 webhook_limit_reached', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 3; i += 1) ids.push(String((await call(server, 'POST', '/v1/webhooks', { url: `https://public.example/${i}` })).body['id']));
      const over = await call(server, 'POST', '/v1/webhooks', { url: 'https://public.example/over' });
      expect(over.status).toBe(409);
      expect(errorOf(over.body)).toEqual({ type: 'invalid_request_error', code: 'webhook_limit_reached', param: 'url' });
      // The other key has its own allowance.
      const theirs = await call(server, 'POST', '/v1/webhooks', { url: 'https://public.example/theirs' }, TEST_KEYS[1]);
      expect(theirs.status).toBe(200);
      for (const id of ids) await call(server, 'DELETE', `/v1/webhooks/${id}`);
      await call(server, 'DELETE', `/v1/webhooks/${String(theirs.body['id'])}`, undefined, TEST_KEYS[1]);
    });
  });

  describe('validation', () => {
    const cases: [string, unknown, number, string, string][] = [
      ['no url', { events: ['video.failed'] }, 400, 'missing_parameter', 'url'],
      ['url not a string', { url: 42 }, 400, 'invalid_parameter', 'url'],
      ['url not a URL', { url: 'not a url' }, 400, 'invalid_parameter', 'url'],
      ['http://', { url: 'http://public.example/hook' }, 400, 'invalid_parameter', 'url'],
      ['credentials in the URL', { url: 'https://user:pw@public.example/hook' }, 400, 'invalid_parameter', 'url'],
      ['events not an array', { url: 'https://public.example/x', events: 'video.failed' }, 400, 'invalid_parameter', 'events'],
      ['events empty', { url: 'https://public.example/x', events: [] }, 400, 'invalid_parameter', 'events'],
      ['an event not a string', { url: 'https://public.example/x', events: [1] }, 400, 'invalid_parameter', 'events'],
      ['an unknown event', { url: 'https://public.example/x', events: ['video.completed', 'video.started'] }, 400, 'unsupported_value', 'events'],
      ['an unknown field', { url: 'https://public.example/x', secret: 'whsec_AAAA' }, 400, 'unsupported_parameter', 'secret'],
      ['a body that is not an object', [1, 2], 400, 'invalid_parameter', 'body'],
      ['malformed JSON', '{"url":', 400, 'invalid_parameter', 'body'],
    ];
    it.each(cases)('%s: %i %s, param %s', async (_name, body, status, code, param) => {
      const answer = await call(server, 'POST', '/v1/webhooks', body);
      expect(answer.status).toBe(status);
      expect(errorOf(answer.body)).toEqual({ type: 'invalid_request_error', code, param });
    });

    it('checks the deliveries query: limit and after', async () => {
      const id = String((await call(server, 'POST', '/v1/webhooks', { url: 'https://public.example/q' })).body['id']);
      for (const [query, param] of [
        ['limit=0', 'limit'],
        ['limit=101', 'limit'],
        ['limit=x', 'limit'],
        ['after=vid_123', 'after'],
      ] as const) {
        const answer = await call(server, 'GET', `/v1/webhooks/${id}/deliveries?${query}`);
        expect(answer.status, query).toBe(400);
        expect(errorOf(answer.body), query).toEqual({ type: 'invalid_request_error', code: 'invalid_parameter', param });
      }
      await call(server, 'DELETE', `/v1/webhooks/${id}`);
    });
  });

  describe('address policy at registration', () => {
    it.each([
      ['loopback', 'https://127.0.0.1/hook'],
      ['loopback in another spelling', 'https://2130706433/hook'],
      ['private 10/8', 'https://10.0.0.7/hook'],
      ['IPv6 loopback', 'https://[::1]/hook'],
      ['cloud metadata', 'https://169.254.169.254/latest'],
      ['a name resolving to a private address', 'https://internal.example/hook'],
      ['a name that does not resolve', 'https://nowhere.example/hook'],
    ])('refuses %s with 400 invalid_parameter, param url', async (_name, url) => {
      const answer = await call(server, 'POST', '/v1/webhooks', { url });
      expect(answer.status).toBe(400);
      expect(errorOf(answer.body)).toEqual({ type: 'invalid_request_error', code: 'invalid_parameter', param: 'url' });
      // The media inputs' generic refusal: no range name tells how our resolver sees the host.
      expect(String((answer.body['error'] as Body)['message'])).not.toMatch(/loopback|private|linkLocal|unspecified|\(/);
    });

    it("gives the media inputs' words for a refused address", async () => {
      const answer = await call(server, 'POST', '/v1/webhooks', { url: 'https://127.0.0.1/hook' });
      expect((answer.body['error'] as Body)['message']).toBe('url is refused: 127.0.0.1 is not a public address; only public addresses are fetched.');
    });
  });
});

describe('a host with a trailing dot', () => {
  let server: TestServer;
  beforeAll(async () => {
    // The allow-list names localhost without its dot, as an operator writes it.
    server = await startServer({ MEDIAGATE_WORKERS: 'false', MEDIAGATE_FETCH_ALLOW_HOSTS: 'localhost' });
  });
  afterAll(async () => server.close());

  it('is kept without the dot: the endpoint is the host the allow-list and the resolver see', async () => {
    const answer = await call(server, 'POST', '/v1/webhooks', { url: 'https://localhost.:8443/hook' });
    expect(answer.status).toBe(200);
    expect(answer.body['url']).toBe('https://localhost:8443/hook');
    const listed = await call(server, 'GET', '/v1/webhooks');
    expect((listed.body['data'] as Body[]).map((item) => item['url'])).toEqual(['https://localhost:8443/hook']);
  });
});

describe('address policy at registration, system resolver', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_WORKERS: 'false' });
  });
  afterAll(async () => server.close());

  it('refuses localhost (it resolves to loopback)', async () => {
    const answer = await call(server, 'POST', '/v1/webhooks', { url: 'https://localhost:8443/hook' });
    expect(answer.status).toBe(400);
    expect(errorOf(answer.body)).toEqual({ type: 'invalid_request_error', code: 'invalid_parameter', param: 'url' });
  });
});

describe.skipIf(process.env['MEDIAGATE_TEST_BACKEND'] === 'postgres')('a deleted endpoint on SQLite', () => {
  it('leaves no copy of its secret in the database files (secure_delete)', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'mediagate-secure-delete-'));
    const server = await startServer(
      { MEDIAGATE_WORKERS: 'false', MEDIAGATE_DATA_DIR: dataDir },
      { webhookResolve: () => Promise.resolve([{ address: '93.184.215.14' }]) },
    );
    let secret: string;
    try {
      const created = await call(server, 'POST', '/v1/webhooks', { url: 'https://public.example/hook' });
      secret = String(created.body['secret']);
      // A row that stays beside it on the same page: the deleted one's bytes are not freed with the page.
      await call(server, 'POST', '/v1/webhooks', { url: 'https://public.example/other' });
      expect((await call(server, 'DELETE', `/v1/webhooks/${String(created.body['id'])}`)).status).toBe(200);
    } finally {
      // Closing the last connection checkpoints the WAL into the database file.
      await server.close().catch(() => {});
    }
    const files = (await readdir(dataDir)).filter((file) => file.startsWith('mediagate.db'));
    expect(files.length).toBeGreaterThan(0);
    const bytes = Buffer.concat(await Promise.all(files.map((file) => readFile(join(dataDir, file)))));
    await rm(dataDir, { recursive: true, force: true });
    expect(secret).toMatch(/^whsec_/);
    expect(bytes.includes(Buffer.from(secret.slice(6, 30)))).toBe(false);
  });
});
