/**
 * The SDK's usage calls against a real server with a pricing file (real HTTP, SQLite, workers,
 * the instant engine, whose videos state the requested duration so they are billed like a
 * render): usage on finished tasks, `client.usage.retrieve` with its ranges and groupings, and
 * 402 budget_exceeded as a BudgetExceededError in both families, never retried; the admin
 * client (MediagateAdmin) on the same server: keys made, listed, changed, disabled and revoked
 * as their holders see it, the usage report across keys, and the errors of each key on the
 * other's API. The types the calls return are checked too (expectTypeOf, checked by tsc).
 */
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  APIError,
  AuthenticationError,
  BudgetExceededError,
  KeyNotFoundError,
  Mediagate,
  MediagateAdmin,
  MediagateError,
  NotFoundError,
  Page,
  PermissionDeniedError,
  ValidationError,
  type AdminKey,
  type AdminKeyCreated,
  type AdminUsageReport,
  type Fetch,
  type TaskUsage,
  type UsageBudget,
  type UsageReport,
  type UsageRow,
} from '../src/client/index.js';
import { eventually } from './helpers/eventually.js';
import { envKeyId } from './helpers/ledger.js';
import { rejectsWith } from './helpers/rejections.js';
import { ADMIN_KEY, startPricedServer, type PricedServer } from './helpers/priced-server.js';
import type { TestServer } from './helpers/server.js';

const T2V = 'vendora/famw-2.7-t2v';
const IMAGE = 'vendora/famz-image-spicy';
const PRICING = {
  currency: 'EUR',
  models: { [T2V]: { per_task: 0.1, per_second: { '480p': 0.04, '*': 0.1 } }, '*': { per_image: 0.02, per_second: 0.1 } },
};
const FAST = { pollInterval: 50, maxPollInterval: 200 } as const;

describe('the SDK’s usage calls', () => {
  let server: TestServer;
  let priced: PricedServer | undefined;
  let client: Mediagate;
  let budgeted: Mediagate;
  let admin: MediagateAdmin;
  const budgetedRequests: string[] = [];

  beforeAll(async () => {
    // A budget of 1: two 4 s videos at 720p (0.5 each at most) fit exactly, a third does not.
    // Set before the key's first request: whether a key has a budget is cached for a few seconds.
    priced = await startPricedServer(PRICING, { amount: 1, period: 'day' });
    server = priced.server;
    client = new Mediagate({ baseURL: server.url, apiKey: server.keys[0] });
    const counting: Fetch = (url, init) => {
      budgetedRequests.push(`${init.method ?? 'GET'} ${new URL(url).pathname}`);
      return fetch(url, init);
    };
    budgeted = new Mediagate({ baseURL: server.url, apiKey: server.keys[1], fetch: counting, maxRetries: 3 });
    admin = new MediagateAdmin({ baseURL: server.url, apiKey: ADMIN_KEY });
  }, 60_000);

  afterAll(async () => {
    await priced?.close();
  });

  describe('usage on tasks', () => {
    it('is null while a task runs and the billed seconds, images and cost once it is final, in both families', async () => {
      const created = await client.videos.create({ model: T2V, prompt: 'usage', duration: 4, resolution: '480p' });
      expectTypeOf(created.usage).toEqualTypeOf<TaskUsage | null>();
      expect(created.usage).toBeNull();
      const video = await client.videos.wait(created.id, FAST);
      // 0.1 a task + 4 s x 0.04 at 480p.
      expect(video.usage).toEqual({ seconds: 4, images: 0, cost: 0.26, currency: 'EUR' });

      const image = await client.images.createAndWait({ model: IMAGE, prompt: 'usage' }, FAST);
      expectTypeOf(image.usage).toEqualTypeOf<TaskUsage | null>();
      expect(image.usage).toEqual({ seconds: 0, images: 1, cost: 0.02, currency: 'EUR' });
    });
  });

  describe('client.usage.retrieve', () => {
    it('answers the key’s totals, rows by model and day, and its budget line', async () => {
      const today = new Date().toISOString().slice(0, 10);
      const report = await eventually(async () => {
        const answer = await client.usage.retrieve();
        return answer.totals.tasks >= 2 ? answer : undefined;
      });
      expectTypeOf(report).toEqualTypeOf<UsageReport>();
      expectTypeOf(report.data[0]).toEqualTypeOf<UsageRow | undefined>();
      expectTypeOf(report.budget).toEqualTypeOf<UsageBudget>();
      expect(report).toMatchObject({ object: 'usage', currency: 'EUR', totals: { tasks: 2, seconds: 4, images: 1, cost: 0.28 } });
      expect(report.data).toEqual([
        { model: T2V, day: today, tasks: 1, seconds: 4, images: 0, cost: 0.26 },
        { model: IMAGE, day: today, tasks: 1, seconds: 0, images: 1, cost: 0.02 },
      ]);
      // No budget: spent is all the key ever spent.
      expect(report.budget).toEqual({ budget: null, budget_period: null, spent: 0.28, reserved: 0, resets_at: null });
      expect(report.end - report.start).toBe(30 * 86_400);
    });

    it('types each row by the grouping asked for, and sends start and end as unix seconds (Dates too)', async () => {
      const end = new Date();
      const byModel = await client.usage.retrieve({ groupBy: 'model', start: new Date(end.getTime() - 86_400_000), end });
      expectTypeOf(byModel.data[0]?.model).toEqualTypeOf<string | undefined>();
      expectTypeOf(byModel.data[0]?.day).toEqualTypeOf<null | undefined>();
      expect(byModel.data.map((row) => [row.model, row.day])).toEqual([
        [T2V, null],
        [IMAGE, null],
      ]);

      const byDay = await client.usage.retrieve({ groupBy: ['day'] });
      expectTypeOf(byDay.data[0]?.model).toEqualTypeOf<null | undefined>();
      expectTypeOf(byDay.data[0]?.day).toEqualTypeOf<string | undefined>();
      expect(byDay.data).toEqual([{ model: null, day: end.toISOString().slice(0, 10), tasks: 2, seconds: 4, images: 1, cost: 0.28 }]);

      const startOfToday = Math.floor(end.getTime() / 86_400_000) * 86_400;
      const earlier = await client.usage.retrieve({ start: startOfToday - 10 * 86_400, end: startOfToday - 1 });
      expect(earlier).toMatchObject({ start: startOfToday - 10 * 86_400, end: startOfToday, totals: { tasks: 0, cost: 0 }, data: [] });
    });

    it('refuses a range that ends before it starts with a ValidationError on end, and a bad time before sending', async () => {
      const error = await rejectsWith(client.usage.retrieve({ start: 2_000_000, end: 1_000_000 }), ValidationError);
      expect(error).toMatchObject({ status: 400, code: 'invalid_parameter', param: 'end' });
      expect(() => client.usage.retrieve({ start: 1.5 })).toThrow(/start must be a Date or whole unix seconds/);
      // @ts-expect-error `key` is a dimension of the admin report only
      const wrong = await rejectsWith(client.usage.retrieve({ groupBy: 'key' }), ValidationError);
      expect(wrong).toMatchObject({ code: 'invalid_parameter', param: 'group_by' });
    });
  });

  describe('budgets', () => {
    it('refuses a create its budget cannot hold with a BudgetExceededError (402), in both families, without retrying', async () => {
      const fits = await Promise.all([1, 2].map((n) => budgeted.videos.create({ model: T2V, prompt: `fits ${n}`, duration: 4 })));
      expect(fits.map((task) => task.status)).toEqual(['queued', 'queued']);

      const before = budgetedRequests.length;
      const video = await rejectsWith(budgeted.videos.create({ model: T2V, prompt: 'over', duration: 4 }), BudgetExceededError);
      expect(video).toBeInstanceOf(APIError);
      expect(video).toMatchObject({ status: 402, code: 'budget_exceeded', type: 'billing_error', param: '', name: 'BudgetExceededError' });
      expect(video.message).not.toBe('');
      const image = await rejectsWith(budgeted.images.create({ model: IMAGE, prompt: 'over' }, { idempotencyKey: 'over-1' }), BudgetExceededError);
      expect(image).toMatchObject({ status: 402, code: 'budget_exceeded' });
      // One request each: a 402 is final, even for a keyed create.
      expect(budgetedRequests.slice(before)).toEqual(['POST /v1/video/generations', 'POST /v1/images/generations/async']);

      for (const task of fits) await budgeted.videos.wait(task.id, FAST);
      const usage = await budgeted.usage.retrieve();
      const tomorrow = (Math.floor(Date.now() / 86_400_000) + 1) * 86_400;
      // Two 4 s videos at 720p: 0.1 + 4 x 0.1 each, all of the budget.
      expect(usage.budget).toEqual({ budget: 1, budget_period: 'day', spent: 1, reserved: 0, resets_at: tomorrow });
      expect(usage).toMatchObject({ start: tomorrow - 86_400, end: tomorrow, totals: { tasks: 2, seconds: 8, cost: 1 } });
    });
  });

  describe('MediagateAdmin', () => {
    it('makes a key shown once, that works at once, and lists, shows and changes it', async () => {
      const created = await admin.keys.create({ name: 'team-a', budget: 2.5, budget_period: 'month', models: ['vendora/famw-*'], rate_limit_per_min: 30 });
      expectTypeOf(created).toEqualTypeOf<AdminKeyCreated>();
      expect(created).toMatchObject({
        object: 'key',
        name: 'team-a',
        budget: 2.5,
        budget_period: 'month',
        models: ['vendora/famw-*'],
        rate_limit_per_min: 30,
        max_tasks_in_flight: null,
        disabled: false,
        spent: 0,
        reserved: 0,
      });
      expect(created.key).toMatch(/^mg_/);
      const holder = new Mediagate({ baseURL: server.url, apiKey: created.key });
      expect((await holder.models.list()).map((model) => model.id).every((id) => id.startsWith('vendora/famw-'))).toBe(true);

      const shown = await admin.keys.retrieve(created.id);
      expectTypeOf(shown).toEqualTypeOf<AdminKey>();
      expect(shown).not.toHaveProperty('key');
      expect(shown).toMatchObject({ id: created.id, name: 'team-a', budget: 2.5 });

      const page = await admin.keys.list({ limit: 1 });
      expect(page).toBeInstanceOf(Page);
      expect(page.data).toHaveLength(1);
      const ids: string[] = [];
      for await (const key of page) ids.push(key.id);
      // Newest first: the key just made, then the environment's client keys.
      expect(ids[0]).toBe(created.id);
      expect(ids).toEqual(expect.arrayContaining([envKeyId(server.keys[0]), envKeyId(server.keys[1])]));
      expect(ids).not.toContain(envKeyId(ADMIN_KEY));

      const changed = await admin.keys.update(created.id, { name: 'team-a2', budget: null, models: null, max_tasks_in_flight: 2 });
      expect(changed).toMatchObject({
        id: created.id,
        name: 'team-a2',
        budget: null,
        budget_period: 'month',
        models: null,
        rate_limit_per_min: 30,
        max_tasks_in_flight: 2,
      });
    });

    it('disables, enables and revokes a key: its holder is refused (401) within 5 s, and a revoked key is a KeyNotFoundError', async () => {
      const created = await admin.keys.create({ name: 'short-lived' });
      const holder = new Mediagate({ baseURL: server.url, apiKey: created.key, maxRetries: 0 });
      await holder.models.list();

      expect(await admin.keys.update(created.id, { disabled: true })).toMatchObject({ disabled: true });
      await eventually(
        async () =>
          (await holder.models.list().then(
            () => undefined,
            (error: unknown) => error,
          )) instanceof AuthenticationError,
        {
          what: 'the disabled key to be refused',
        },
      );
      await admin.keys.update(created.id, { disabled: false });
      await eventually(async () => (await holder.models.list()).length > 0, { what: 'the enabled key to be accepted' });

      await admin.keys.delete(created.id);
      const gone = await rejectsWith(admin.keys.retrieve(created.id), KeyNotFoundError);
      expect(gone).toBeInstanceOf(NotFoundError);
      expect(gone).toMatchObject({ status: 404, code: 'key_not_found', param: 'id', name: 'KeyNotFoundError' });
      await rejectsWith(admin.keys.update(created.id, { name: 'x' }), KeyNotFoundError);
      await rejectsWith(admin.keys.delete(created.id), KeyNotFoundError);
      await eventually(
        async () =>
          (await holder.models.list().then(
            () => undefined,
            (error: unknown) => error,
          )) instanceof AuthenticationError,
        {
          what: 'the revoked key to be refused',
        },
      );
    });

    it('holds a key to the budget set for it: BudgetExceededError for its holder, spent and reserved for the admin', async () => {
      const created = await admin.keys.create({ name: 'budgeted', budget: 0.6, budget_period: 'day' });
      const holder = new Mediagate({ baseURL: server.url, apiKey: created.key });
      const task = await holder.videos.create({ model: T2V, prompt: 'fits', duration: 4 });
      await rejectsWith(holder.videos.create({ model: T2V, prompt: 'does not fit', duration: 4 }), BudgetExceededError);
      await holder.videos.wait(task.id, FAST);
      const key = await eventually(async () => {
        const shown = await admin.keys.retrieve(created.id);
        return shown.reserved === 0 ? shown : undefined;
      });
      expect(key).toMatchObject({ budget: 0.6, budget_period: 'day', spent: 0.5, reserved: 0 });

      const report = await admin.usage.retrieve({ groupBy: 'key', keyId: created.id });
      expectTypeOf(report).toEqualTypeOf<AdminUsageReport<'key'>>();
      expectTypeOf(report.data[0]?.key_id).toEqualTypeOf<string | undefined>();
      expectTypeOf(report.data[0]?.model).toEqualTypeOf<null | undefined>();
      expect(report.data).toEqual([{ key_id: created.id, model: null, day: null, tasks: 1, seconds: 4, images: 0, cost: 0.5 }]);
      expect(report).not.toHaveProperty('budget');

      const all = await admin.usage.retrieve();
      expect(all.data.map((row) => row.key_id)).toEqual(expect.arrayContaining([envKeyId(server.keys[0]), created.id]));
      expect(all.totals.tasks).toBe(all.data.reduce((sum, row) => sum + row.tasks, 0));
    });

    it('answers a client key on the admin API with PermissionDeniedError (403), and an admin key on a client call with 401', async () => {
      const asClient = new MediagateAdmin({ baseURL: server.url, apiKey: server.keys[0] });
      const refused = await rejectsWith(asClient.keys.list(), PermissionDeniedError);
      expect(refused).toMatchObject({ status: 403, code: 'admin_key_required', param: 'Authorization', type: 'permission_error' });
      await rejectsWith(asClient.usage.retrieve(), PermissionDeniedError);

      const asAdmin = new Mediagate({ baseURL: server.url, apiKey: ADMIN_KEY });
      const error = await rejectsWith(asAdmin.usage.retrieve(), AuthenticationError);
      expect(error).toMatchObject({ status: 401, code: 'invalid_api_key' });
    });

    it('reads its key from MEDIAGATE_ADMIN_KEY, not MEDIAGATE_API_KEY', () => {
      const saved = { admin: process.env['MEDIAGATE_ADMIN_KEY'], client: process.env['MEDIAGATE_API_KEY'] };
      try {
        delete process.env['MEDIAGATE_ADMIN_KEY'];
        process.env['MEDIAGATE_API_KEY'] = server.keys[0];
        expect(() => new MediagateAdmin({ baseURL: server.url })).toThrow(MediagateError);
        expect(() => new MediagateAdmin({ baseURL: server.url })).toThrow(/MEDIAGATE_ADMIN_KEY/);
        process.env['MEDIAGATE_ADMIN_KEY'] = ADMIN_KEY;
        expect(new MediagateAdmin({ baseURL: server.url }).baseURL).toBe(server.url);
      } finally {
        for (const [name, value] of [
          ['MEDIAGATE_ADMIN_KEY', saved.admin],
          ['MEDIAGATE_API_KEY', saved.client],
        ] as const) {
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
        }
      }
    });
  });
});
