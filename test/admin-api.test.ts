import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../src/auth/api-keys.js';
import { eventually } from './helpers/eventually.js';
import { envKeyId, postgresDatabase, sqliteDatabase, type RawDatabase } from './helpers/ledger.js';
import { createTestDatabase, postgresAvailability, selectedBackends, type TestDatabase } from './helpers/postgres.js';
import { startServer, TEST_KEYS, type TestServer } from './helpers/server.js';

/**
 * The admin API (docs/admin.md) on a real server, on SQLite and on PostgreSQL: admin keys and
 * what they may call, /v1/admin/keys (create, list, get, patch, revoke) with every refusal's
 * status, envelope and param, and a key's settings enforced on its next requests (models,
 * limits, budgets, disabled). API-only servers (no workers): tasks stay queued, so in-flight
 * counts and reservations are exact.
 */

const ADMIN = 'mg_test_admin_key_0123456789';
const T2V = 'vendora/famw-2.7-t2v';
const IMAGE = 'vendora/famz-image-spicy';
/** Each T2V task reserves 0.4 (its per-task price, nothing per second). */
const PRICING = { currency: 'USD', models: { [T2V]: { per_task: 0.4 }, '*': { per_image: 0.02, per_second: 0.1 } } };
const [CLIENT, OTHER_CLIENT] = TEST_KEYS;

const backends = [
  ...(selectedBackends().includes('sqlite') ? ['sqlite' as const] : []),
  ...((await postgresAvailability()).enabled ? ['postgres' as const] : []),
];

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

async function call(url: string, key: string | undefined, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Answer> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...(body === undefined ? {} : { 'content-type': contentType }) },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>), headers: response.headers };
}

const errorOf = (answer: Answer) => answer.body['error'] as { type: string; code: string; param: string; message: string } | undefined;

/** A server on one backend, whose data directory and database outlive it (restarts). */
interface Deployment {
  server: TestServer;
  raw: RawDatabase;
  restart(env?: Record<string, string>): Promise<void>;
  close(): Promise<void>;
}

async function deploy(backend: 'sqlite' | 'postgres', env: Record<string, string>): Promise<Deployment> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mediagate-admin-'));
  await writeFile(join(dataDir, 'pricing.json'), JSON.stringify(PRICING));
  const database: TestDatabase | undefined = backend === 'postgres' ? await createTestDatabase() : undefined;
  const base = {
    MEDIAGATE_DATA_DIR: dataDir,
    MEDIAGATE_PRICING_FILE: join(dataDir, 'pricing.json'),
    MEDIAGATE_WORKERS: 'false',
    ...(database ? { DATABASE_URL: database.url } : {}),
  };
  let server = await startServer({ ...base, ...env });
  const raw = database ? postgresDatabase(database.url) : sqliteDatabase(join(dataDir, 'mediagate.db'));
  const deployment: Deployment = {
    server,
    raw,
    async restart(next = env) {
      await server.close();
      server = await startServer({ ...base, ...next });
      deployment.server = server;
    },
    async close() {
      await raw.close();
      await server.close();
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return deployment;
}

for (const backend of backends) {
  describe(`admin API on ${backend}`, () => {
    let deployment: Deployment;
    const url = (): string => deployment.server.url;
    const admin = (method: string, path: string, body?: unknown) => call(url(), ADMIN, method, path, body);
    const create = async (body: Record<string, unknown>): Promise<{ id: string; key: string; body: Record<string, unknown> }> => {
      const answer = await admin('POST', '/v1/admin/keys', body);
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      return { id: String(answer.body['id']), key: String(answer.body['key']), body: answer.body };
    };
    const video = (key: string, model = T2V) => call(url(), key, 'POST', '/v1/video/generations', { model, prompt: 'admin spec' });

    beforeAll(async () => {
      deployment = await deploy(backend, { MEDIAGATE_ADMIN_KEYS: ADMIN });
    }, 60_000);
    afterAll(async () => {
      await deployment.close();
    });

    describe('admin keys authorize /v1/admin/* and nothing else', () => {
      it('a client key on the admin API is 403 admin_key_required', async () => {
        for (const path of ['/v1/admin/keys', '/v1/admin/usage', '/v1/admin/keys/key_0123456789abcdef']) {
          const answer = await call(url(), CLIENT, 'GET', path);
          expect(answer.status, path).toBe(403);
          expect(answer.body).toEqual({ error: { type: 'permission_error', code: 'admin_key_required', message: expect.any(String), param: 'Authorization' } });
        }
        expect((await call(url(), CLIENT, 'POST', '/v1/admin/keys', { name: 'x' })).status).toBe(403);
      });

      it('an admin key on a client operation is 401 invalid_api_key, status polls included', async () => {
        // Cached first, so a poll meets the key in the lookup cache. (An admin key owns no task, so
        // the fast path's own role check is not what answers here: it hands the poll to the router,
        // whose auth hook refuses it.)
        expect((await admin('GET', '/v1/admin/keys')).status).toBe(200);
        for (const [method, path, body] of [
          ['GET', '/v1/models', undefined],
          ['GET', `/v1/models/${T2V}`, undefined],
          ['POST', '/v1/video/generations', { model: T2V, prompt: 'x' }],
          ['POST', '/v1/images/generations/async', { model: IMAGE, prompt: 'x' }],
          ['GET', '/v1/video/generations/vid_0123456789abcdef', undefined],
          ['GET', '/v1/video/generations', undefined],
          ['GET', '/v1/usage', undefined],
          ['GET', '/v1/webhooks', undefined],
        ] as const) {
          const answer = await call(url(), ADMIN, method, path, body);
          expect(answer.status, `${method} ${path}`).toBe(401);
          const code = path.startsWith('/v1/images') ? answer.body['code'] : errorOf(answer)?.code;
          expect(code, `${method} ${path}`).toBe('invalid_api_key');
        }
      });

      it('no key, or an unknown one, on the admin API is 401', async () => {
        for (const key of [undefined, 'not-a-key-at-all', generateKey()]) {
          const answer = await call(url(), key, 'GET', '/v1/admin/keys');
          expect(answer.status).toBe(401);
          expect(errorOf(answer)).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key', param: 'Authorization' });
        }
      });

      it('the admin key reads the usage report across keys', async () => {
        const answer = await admin('GET', '/v1/admin/usage?group_by=key');
        expect(answer.status).toBe(200);
        expect(answer.body).toMatchObject({ object: 'usage', currency: 'USD', data: expect.any(Array) });
        expect(errorOf(await admin('GET', '/v1/admin/usage?group_by=nope'))).toMatchObject({ code: 'invalid_parameter', param: 'group_by' });
      });
    });

    describe('POST /v1/admin/keys', () => {
      it('answers 201 with the key, shown only here, and its settings; the key works at once', async () => {
        const answer = await admin('POST', '/v1/admin/keys', {
          name: 'team video',
          budget: 12.5,
          budget_period: 'month',
          models: ['vendora/*', IMAGE],
          rate_limit_per_min: 600,
          max_tasks_in_flight: 50,
        });
        expect(answer.status).toBe(201);
        expect(answer.body).toEqual({
          id: expect.stringMatching(/^key_[0-9a-f]{16}$/),
          object: 'key',
          name: 'team video',
          key: expect.stringMatching(/^mg_[0-9A-Za-z]{36}$/),
          budget: 12.5,
          budget_period: 'month',
          models: ['vendora/*', IMAGE],
          rate_limit_per_min: 600,
          max_tasks_in_flight: 50,
          created_at: expect.any(Number),
          disabled: false,
          spent: 0,
          reserved: 0,
        });
        expect(Math.abs(Number(answer.body['created_at']) - Date.now() / 1000)).toBeLessThan(60);
        const key = String(answer.body['key']);
        expect((await call(url(), key, 'GET', '/v1/models')).status).toBe(200);
        const shown = await admin('GET', `/v1/admin/keys/${String(answer.body['id'])}`);
        expect(shown.body['key']).toBeUndefined();
        const { key: _key, ...rest } = answer.body;
        expect(shown.body).toEqual(rest);
      });

      it('defaults: no budget, lifetime period, every model, the process-wide limits', async () => {
        const { body } = await create({ name: 'plain' });
        expect(body).toMatchObject({ budget: null, budget_period: null, models: null, rate_limit_per_min: null, max_tasks_in_flight: null, disabled: false });
      });
    });

    describe('bad admin bodies are 400 with the field at fault, never 500', () => {
      const faults: [string, unknown, string, string][] = [
        ['an array', [], 'invalid_parameter', 'body'],
        ['a string', '"name"', 'invalid_parameter', 'body'],
        ['no name', {}, 'missing_parameter', 'name'],
        ['an unknown field', { name: 'x', role: 'admin' }, 'unsupported_parameter', 'role'],
        ['disabled on create', { name: 'x', disabled: true }, 'unsupported_parameter', 'disabled'],
        ['a name that is a number', { name: 7 }, 'invalid_parameter', 'name'],
        ['an empty name', { name: '' }, 'invalid_parameter', 'name'],
        ['a name with a control character', { name: 'a\nb' }, 'invalid_parameter', 'name'],
        ['a name over 200 characters', { name: 'n'.repeat(201) }, 'unsupported_value', 'name'],
        ['a negative budget', { name: 'x', budget: -1 }, 'unsupported_value', 'budget'],
        ['a budget as text', { name: 'x', budget: '5' }, 'invalid_parameter', 'budget'],
        ['a budget with 7 decimals', { name: 'x', budget: 0.0000001 }, 'invalid_parameter', 'budget'],
        ['a budget over a billion', { name: 'x', budget: 1e12 }, 'unsupported_value', 'budget'],
        ['an unknown period', { name: 'x', budget_period: 'week' }, 'unsupported_value', 'budget_period'],
        ['a period that is not text', { name: 'x', budget_period: 1 }, 'invalid_parameter', 'budget_period'],
        ['models not a list', { name: 'x', models: 'vendora/*' }, 'invalid_parameter', 'models'],
        ['a model pattern matching no model', { name: 'x', models: ['vendorz/*'] }, 'unsupported_value', 'models'],
        ['an unknown model id', { name: 'x', models: [T2V, 'vendora/nope'] }, 'unsupported_value', 'models'],
        ['a star inside a pattern', { name: 'x', models: ['vendor*/x'] }, 'invalid_parameter', 'models'],
        ['a model that is not text', { name: 'x', models: [1] }, 'invalid_parameter', 'models'],
        ['a fractional rate limit', { name: 'x', rate_limit_per_min: 1.5 }, 'invalid_parameter', 'rate_limit_per_min'],
        ['a rate limit as text', { name: 'x', rate_limit_per_min: '10' }, 'invalid_parameter', 'rate_limit_per_min'],
        ['a zero rate limit', { name: 'x', rate_limit_per_min: 0 }, 'unsupported_value', 'rate_limit_per_min'],
        ['a fractional in-flight limit', { name: 'x', max_tasks_in_flight: 2.5 }, 'invalid_parameter', 'max_tasks_in_flight'],
        ['a negative in-flight limit', { name: 'x', max_tasks_in_flight: -3 }, 'unsupported_value', 'max_tasks_in_flight'],
      ];
      it.each(faults)('create with %s', async (_what, body, code, param) => {
        const answer = await admin('POST', '/v1/admin/keys', body);
        expect(answer.status, JSON.stringify(answer.body)).toBe(400);
        expect(answer.body).toEqual({ error: { type: 'invalid_request_error', code, message: expect.any(String), param } });
      });

      it('a patch with a bad field, or disabled not a boolean, names the field; nothing changes', async () => {
        const { id } = await create({ name: 'patched badly', budget: 3 });
        for (const [body, code, param] of [
          [{ budget: -2 }, 'unsupported_value', 'budget'],
          [{ disabled: 'yes' }, 'invalid_parameter', 'disabled'],
          [{ name: 'ok', key: 'mg_x' }, 'unsupported_parameter', 'key'],
          [[1], 'invalid_parameter', 'body'],
        ] as const) {
          const answer = await admin('PATCH', `/v1/admin/keys/${id}`, body);
          expect(answer.status).toBe(400);
          expect(errorOf(answer)).toMatchObject({ code, param });
        }
        expect((await admin('GET', `/v1/admin/keys/${id}`)).body).toMatchObject({ name: 'patched badly', budget: 3, disabled: false });
      });

      it('a body that is not JSON is 415 or 400 in the video envelope', async () => {
        const typed = await call(url(), ADMIN, 'POST', '/v1/admin/keys', 'name=x', 'text/plain');
        expect(typed.status).toBe(415);
        expect(errorOf(typed)).toMatchObject({ code: 'invalid_parameter', param: 'Content-Type' });
        const broken = await call(url(), ADMIN, 'POST', '/v1/admin/keys', '{"name": ');
        expect(broken.status).toBe(400);
        expect(errorOf(broken)).toMatchObject({ code: 'invalid_parameter', param: 'body' });
      });

      it('random bodies: 201 or a 400 naming a field, never a 500', async () => {
        const field = fc.constantFrom('name', 'budget', 'budget_period', 'models', 'rate_limit_per_min', 'max_tasks_in_flight', 'disabled', 'other');
        const value = fc.oneof(
          fc.jsonValue({ maxDepth: 2 }),
          fc.double(),
          fc.integer({ min: -5, max: 1e9 }),
          fc.constantFrom('day', 'month', null, ['vendora/*'], [T2V], 'x'.repeat(250)),
        );
        await fc.assert(
          fc.asyncProperty(fc.dictionary(field, value, { maxKeys: 5 }), fc.boolean(), async (body, patch) => {
            const answer = patch ? await admin('PATCH', `/v1/admin/keys/${envKeyId(OTHER_CLIENT)}`, body) : await admin('POST', '/v1/admin/keys', body);
            expect([200, 201, 400], JSON.stringify({ body, answer: answer.body })).toContain(answer.status);
            if (answer.status === 400) {
              expect(errorOf(answer)?.type).toBe('invalid_request_error');
              expect(['missing_parameter', 'invalid_parameter', 'unsupported_parameter', 'unsupported_value']).toContain(errorOf(answer)?.code);
              expect(typeof errorOf(answer)?.param).toBe('string');
            }
          }),
          { numRuns: 60 },
        );
        // The fuzz may have disabled or limited the shared key: put it back.
        expect(
          (
            await admin('PATCH', `/v1/admin/keys/${envKeyId(OTHER_CLIENT)}`, {
              disabled: false,
              models: null,
              rate_limit_per_min: null,
              max_tasks_in_flight: null,
              budget: null,
            })
          ).status,
        ).toBe(200);
      }, 60_000);
    });

    describe('GET /v1/admin/keys pages like the task list', () => {
      it('newest first, limit and after; stable while keys are created; bad queries are 400', async () => {
        const made: string[] = [];
        for (let i = 0; i < 5; i += 1) made.push((await create({ name: `page ${i}` })).id);
        const seen: string[] = [];
        let after: string | null = null;
        for (let page = 0; page < 100; page += 1) {
          const answer: Answer = await admin('GET', `/v1/admin/keys?limit=2${after === null ? '' : `&after=${after}`}`);
          expect(answer.status).toBe(200);
          const data = answer.body['data'] as { id: string }[];
          expect(answer.body).toMatchObject({ object: 'list', has_more: expect.any(Boolean), last_id: data.at(-1)?.id ?? null });
          seen.push(...data.map((key) => key.id));
          // A key made while paging lands before the first page, never in a later one.
          if (page === 0) await create({ name: 'made while paging' });
          if (answer.body['has_more'] !== true) break;
          after = String(answer.body['last_id']);
        }
        expect(new Set(seen).size, 'no key twice').toBe(seen.length);
        // The five just made, newest first, lead the listing.
        expect(seen.slice(0, 5)).toEqual([...made].reverse());
        // Client keys only, the environment's included; never an admin key.
        expect(seen).toContain(envKeyId(CLIENT));
        expect(seen).not.toContain(envKeyId(ADMIN));
        for (const [query, param] of [
          ['limit=0', 'limit'],
          ['limit=101', 'limit'],
          ['limit=x', 'limit'],
          ['after=key_ffffffffffffffff', 'after'],
          [`after=${envKeyId(ADMIN)}`, 'after'],
          ['after=%00', 'after'],
        ] as const) {
          const answer = await admin('GET', `/v1/admin/keys?${query}`);
          expect(answer.status, query).toBe(400);
          expect(errorOf(answer), query).toMatchObject({ code: 'invalid_parameter', param });
        }
      });
    });

    describe('an unknown id is 404 key_not_found, param id', () => {
      it.each(['GET', 'PATCH', 'DELETE'])('%s', async (method) => {
        for (const id of ['key_ffffffffffffffff', envKeyId(ADMIN), 'x'.repeat(80), 'bad%20id']) {
          const answer = await admin(method, `/v1/admin/keys/${id}`, method === 'PATCH' ? { name: 'x' } : undefined);
          expect(answer.status, id).toBe(404);
          expect(answer.body).toEqual({ error: { type: 'invalid_request_error', code: 'key_not_found', message: expect.any(String), param: 'id' } });
        }
      });
    });

    describe('PATCH /v1/admin/keys/{id}', () => {
      it('changes only the fields it names and answers the key as GET shows it', async () => {
        const { id } = await create({ name: 'before', budget: 5, budget_period: 'day', models: [T2V] });
        const patched = await admin('PATCH', `/v1/admin/keys/${id}`, { name: 'after', rate_limit_per_min: 100 });
        expect(patched.status).toBe(200);
        expect(patched.body).toMatchObject({
          id,
          name: 'after',
          budget: 5,
          budget_period: 'day',
          models: [T2V],
          rate_limit_per_min: 100,
          max_tasks_in_flight: null,
        });
        expect((await admin('GET', `/v1/admin/keys/${id}`)).body).toEqual(patched.body);
        const cleared = await admin('PATCH', `/v1/admin/keys/${id}`, { budget: null, models: null, rate_limit_per_min: null });
        expect(cleared.body).toMatchObject({ name: 'after', budget: null, models: null, rate_limit_per_min: null });
        expect((await admin('PATCH', `/v1/admin/keys/${id}`, {})).body).toEqual(cleared.body);
      });
    });

    describe("a key's settings apply to its next requests", () => {
      it('models: others are absent from its GET /v1/models, 404 by id, and a create naming one is 400 unsupported_value model', async () => {
        const { id, key } = await create({ name: 'models', models: ['vendora/famw-*'] });
        const listed = (await call(url(), key, 'GET', '/v1/models')).body['data'] as { id: string }[];
        expect(listed.length).toBeGreaterThan(0);
        expect(listed.every((model) => model.id.startsWith('vendora/famw-'))).toBe(true);
        expect((await call(url(), key, 'GET', `/v1/models/${T2V}`)).status).toBe(200);
        const hidden = await call(url(), key, 'GET', `/v1/models/${IMAGE}`);
        expect(hidden.status).toBe(404);
        const refused = await call(url(), key, 'POST', '/v1/images/generations/async', { model: IMAGE, prompt: 'x' });
        expect(refused.status).toBe(400);
        expect(refused.body).toMatchObject({ code: 'unsupported_value' });
        const video = await call(url(), key, 'POST', '/v1/video/generations', { model: 'vendorc-h3-image-to-video', prompt: 'x' });
        expect(errorOf(video)).toMatchObject({ code: 'unsupported_value', param: 'model' });
        expect((await call(url(), key, 'POST', '/v1/video/generations', { model: T2V, prompt: 'x' })).status).toBe(200);
        // Widened: within the key cache's 5 s, every model again.
        await admin('PATCH', `/v1/admin/keys/${id}`, { models: null });
        await eventually(async () => (await call(url(), key, 'GET', `/v1/models/${IMAGE}`)).status === 200, { deadline: 5_000, what: 'the widened models' });
      });

      it('rate_limit_per_min replaces the process-wide quota for that key', async () => {
        const { key } = await create({ name: 'slow', rate_limit_per_min: 3 });
        const statuses: number[] = [];
        for (let i = 0; i < 4; i += 1) statuses.push((await call(url(), key, 'GET', '/v1/models')).status);
        expect(statuses).toEqual([200, 200, 200, 429]);
        const limited = await call(url(), key, 'GET', '/v1/models');
        expect(errorOf(limited)).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
        expect(limited.headers.get('ratelimit-policy')).toBe('"requests";q=3;w=60');
        // Another key keeps the default.
        expect((await call(url(), CLIENT, 'GET', '/v1/models')).status).toBe(200);
      });

      it('max_tasks_in_flight replaces the process-wide limit for that key', async () => {
        const { key } = await create({ name: 'one at a time', max_tasks_in_flight: 1 });
        expect((await video(key)).status).toBe(200);
        const second = await video(key);
        expect(second.status).toBe(429);
        expect(second.headers.get('ratelimit-policy')).toBe('"tasks";q=1');
      });

      it('disabled: 401 within 5 s, and back when enabled; the setting is kept', async () => {
        const { id, key } = await create({ name: 'to disable' });
        expect((await call(url(), key, 'GET', '/v1/models')).status).toBe(200);
        expect((await admin('PATCH', `/v1/admin/keys/${id}`, { disabled: true })).body).toMatchObject({ disabled: true });
        await eventually(async () => (await call(url(), key, 'GET', '/v1/models')).status === 401, { deadline: 5_000, what: 'the disabled key refused' });
        expect(errorOf(await call(url(), key, 'GET', '/v1/models'))).toMatchObject({ code: 'invalid_api_key' });
        expect((await admin('GET', `/v1/admin/keys/${id}`)).body).toMatchObject({ disabled: true });
        await admin('PATCH', `/v1/admin/keys/${id}`, { disabled: false });
        // A refused key is not cached: enabled is accepted at the next request.
        expect((await call(url(), key, 'GET', '/v1/models')).status).toBe(200);
      });

      it('DELETE revokes: 200, 401 within 5 s, and the key is gone from the admin API', async () => {
        const { id, key } = await create({ name: 'to revoke' });
        expect((await call(url(), key, 'GET', '/v1/models')).status).toBe(200);
        const deleted = await admin('DELETE', `/v1/admin/keys/${id}`);
        expect(deleted.status).toBe(200);
        expect(deleted.body).toEqual({ id, object: 'key', deleted: true });
        await eventually(async () => (await call(url(), key, 'GET', '/v1/models')).status === 401, { deadline: 5_000, what: 'the revoked key refused' });
        expect((await admin('GET', `/v1/admin/keys/${id}`)).status).toBe(404);
        expect((await admin('DELETE', `/v1/admin/keys/${id}`)).status).toBe(404);
      });
    });

    describe('budgets through the admin API', () => {
      it('a raised budget takes effect on the next create; GET shows what is reserved', async () => {
        const { id, key } = await create({ name: 'budgeted', budget: 1 });
        expect((await video(key)).status).toBe(200);
        expect((await video(key)).status).toBe(200);
        const refused = await video(key);
        expect(refused.status).toBe(402);
        expect(errorOf(refused)).toMatchObject({ type: 'billing_error', code: 'budget_exceeded', param: '' });
        expect((await admin('GET', `/v1/admin/keys/${id}`)).body).toMatchObject({ budget: 1, spent: 0, reserved: 0.8 });
        expect((await admin('PATCH', `/v1/admin/keys/${id}`, { budget: 1.2 })).body).toMatchObject({ budget: 1.2 });
        expect((await video(key)).status).toBe(200);
        expect((await admin('GET', `/v1/admin/keys/${id}`)).body).toMatchObject({ reserved: 1.2 });
        expect((await video(key)).status).toBe(402);
      });

      it('a budget given to a key that had none applies to its creates within 5 s', async () => {
        const { id, key } = await create({ name: 'budget later' });
        // Its creates so far reserve nothing: the key had no budget (cached for up to 5 s).
        expect((await video(key)).status).toBe(200);
        expect((await admin('PATCH', `/v1/admin/keys/${id}`, { budget: 0.4 })).body).toMatchObject({ budget: 0.4, reserved: 0 });
        // Once the process sees the budget, one create of 0.4 fits and the next does not.
        await eventually(async () => (await video(key)).status === 402, { deadline: 6_000, what: 'the new budget to refuse a create' });
        expect((await admin('GET', `/v1/admin/keys/${id}`)).body).toMatchObject({ reserved: 0.4 });
      });

      it('a changed budget_period recomputes spent for the new period', async () => {
        const { id } = await create({ name: 'periods', budget: 100 });
        const now = new Date();
        const today = now.toISOString().slice(0, 10);
        // Earlier this month, when that is not today; else a day of last year (outside the month).
        const earlier = now.getUTCDate() > 1 ? `${today.slice(0, 8)}01` : `${now.getUTCFullYear() - 1}-06-15`;
        const rollup = 'INSERT INTO usage_daily (key_id, model, day, tasks, seconds, images, cost) VALUES ($1, $2, $3, 1, 0, 0, $4)';
        await deployment.raw.query(rollup, [id, T2V, today, 1_500_000]);
        await deployment.raw.query(rollup, [id, T2V, earlier, 2_000_000]);
        await deployment.raw.query(rollup, [id, T2V, '2001-01-01', 4_000_000]);
        const period = async (budget_period: string | null) => (await admin('PATCH', `/v1/admin/keys/${id}`, { budget_period })).body;
        expect(await period(null)).toMatchObject({ budget_period: null, spent: 7.5 });
        expect(await period('day')).toMatchObject({ budget_period: 'day', spent: 1.5 });
        expect(await period('month')).toMatchObject({ budget_period: 'month', spent: now.getUTCDate() > 1 ? 3.5 : 1.5 });
        expect((await admin('GET', `/v1/admin/keys/${id}`)).body).toMatchObject({ spent: now.getUTCDate() > 1 ? 3.5 : 1.5 });
      });
    });

    describe('keys from MEDIAGATE_API_KEYS get settings by their id', () => {
      it('settings of an environment key survive restarts; removing it from the variable revokes it, restoring it keeps them', async () => {
        const id = envKeyId(OTHER_CLIENT);
        const patched = await admin('PATCH', `/v1/admin/keys/${id}`, { name: 'partner', models: [T2V], disabled: true, max_tasks_in_flight: 7 });
        expect(patched.status).toBe(200);
        await deployment.restart();
        const shown = await admin('GET', `/v1/admin/keys/${id}`);
        expect(shown.body).toMatchObject({ id, name: 'partner', models: [T2V], disabled: true, max_tasks_in_flight: 7 });
        expect((await call(url(), OTHER_CLIENT, 'GET', '/v1/models')).status, 'still disabled').toBe(401);

        await deployment.restart({ MEDIAGATE_ADMIN_KEYS: ADMIN, MEDIAGATE_API_KEYS: CLIENT });
        expect((await admin('GET', `/v1/admin/keys/${id}`)).status, 'revoked with the variable').toBe(404);
        await deployment.restart();
        expect((await admin('PATCH', `/v1/admin/keys/${id}`, { disabled: false })).body).toMatchObject({ name: 'partner', models: [T2V], disabled: false });
        const models = (await call(url(), OTHER_CLIENT, 'GET', '/v1/models')).body['data'] as { id: string }[];
        expect(models.map((model) => model.id)).toEqual([T2V]);
        await admin('PATCH', `/v1/admin/keys/${id}`, { models: null, max_tasks_in_flight: null });
      }, 60_000);
    });
  });

  describe(`without any admin key on ${backend}, the admin API is not there`, () => {
    let deployment: Deployment;
    beforeAll(async () => {
      deployment = await deploy(backend, {});
    }, 60_000);
    afterAll(async () => {
      await deployment.close();
    });

    it('answers 404 not_found on every admin path and method, then appears within 5 s of an admin key', async () => {
      const url = deployment.server.url;
      for (const [method, path] of [
        ['GET', '/v1/admin/keys'],
        ['POST', '/v1/admin/keys'],
        ['PUT', '/v1/admin/keys'],
        ['GET', '/v1/admin/keys/key_0123456789abcdef'],
        ['GET', '/v1/admin/usage'],
      ] as const) {
        for (const key of [CLIENT, undefined]) {
          const answer = await call(url, key, method, path, method === 'POST' ? { name: 'x' } : undefined);
          expect(answer.status, `${method} ${path}`).toBe(404);
          expect(errorOf(answer), `${method} ${path}`).toMatchObject({ type: 'invalid_request_error', code: 'not_found', param: '' });
        }
      }
      // `mediagate keys create --admin` beside the running server.
      const adminKey = generateKey();
      await deployment.server.app.keys.create(adminKey, 'ops', { role: 'admin' });
      await eventually(async () => (await call(url, adminKey, 'GET', '/v1/admin/keys')).status === 200, { deadline: 5_000, what: 'the admin API' });
      expect((await call(url, CLIENT, 'GET', '/v1/admin/keys')).status).toBe(403);
    });
  });
}
