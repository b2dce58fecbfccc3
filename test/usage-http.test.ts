import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './helpers/eventually.js';
import { envKeyId, readBooks, setBudget, sqliteDatabase, type RawDatabase } from './helpers/ledger.js';
import { startServer, type TestServer } from './helpers/server.js';

/**
 * Usage and budgets over HTTP, on a real server with the sandbox engine (SQLite): usage on task
 * bodies from the rendered file, 402 budget_exceeded in both envelopes, and GET /v1/usage.
 */
const PRICING = {
  currency: 'EUR',
  models: {
    'vendora/famw-2.7-t2v': { per_task: 0.1, per_second: { '480p': 0.04, '720p': 0.08, '*': 0.12 } },
    '*': { per_image: 0.02, per_second: 0.1 },
  },
};
const T2V = 'vendora/famw-2.7-t2v';
const IMAGE = 'vendora/famz-image-spicy';

describe.skipIf(process.env['MEDIAGATE_TEST_BACKEND'] === 'postgres')('usage and budgets over HTTP', () => {
  let server: TestServer;
  let raw: RawDatabase;
  let pricingDir = '';
  let usageKey = '';
  let budgetKey = '';

  beforeAll(async () => {
    pricingDir = await mkdtemp(join(tmpdir(), 'mediagate-pricing-'));
    await writeFile(join(pricingDir, 'pricing.json'), JSON.stringify(PRICING));
    server = await startServer({ MEDIAGATE_PRICING_FILE: join(pricingDir, 'pricing.json'), MEDIAGATE_RATE_LIMIT_PER_MIN: '0' });
    raw = sqliteDatabase(join(server.dataDir, 'mediagate.db'));
    [usageKey, budgetKey] = server.keys;
    // Before the key's first create: whether a key has a budget is cached for a few seconds.
    await setBudget(raw, envKeyId(budgetKey), 3 * 500_000, 'month');
  }, 60_000);
  afterAll(async () => {
    await raw.close();
    await server.close();
    await rm(pricingDir, { recursive: true, force: true });
  });

  const call = async (key: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${server.url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const finished = (key: string, path: string) =>
    eventually(
      async () => {
        const { body } = await call(key, path);
        const status = (body['status'] ?? (body['data'] as Record<string, unknown> | undefined)?.['status']) as string;
        return ['completed', 'failed', 'cancelled', 'SUCCESS', 'FAILURE', 'CANCELLED'].includes(status) ? body : undefined;
      },
      { deadline: 60_000, what: `${path} to finish` },
    );

  describe('usage on task bodies', () => {
    it('bills a finished video by the seconds it delivered, at its resolution, and null before', async () => {
      const created = await call(usageKey, '/v1/video/generations', { model: T2V, prompt: 'usage', duration: 4, resolution: '480p' });
      expect(created.status).toBe(200);
      expect(created.body['usage']).toBeNull();
      const done = await finished(usageKey, `/v1/video/generations/${String(created.body['id'])}`);
      expect(done['status']).toBe('completed');
      // 0.1 a task + 4 s x 0.04 at 480p.
      expect(done['usage']).toEqual({ seconds: 4, images: 0, cost: 0.26, currency: 'EUR' });
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      expect(metrics).toContain(`mediagate_task_cost_micro_total{model="${T2V}"} 260000`);
      expect(metrics).toContain(`mediagate_task_billed_seconds_total{model="${T2V}"} 4`);
    }, 90_000);

    it('counts images in the image envelope, and a cancelled task costs 0', async () => {
      const created = await call(usageKey, '/v1/images/generations/async', { model: IMAGE, prompt: 'usage' });
      const id = String((created.body['data'] as Record<string, unknown>)['task_id']);
      const done = await finished(usageKey, `/v1/images/generations/async/${id}`);
      expect((done['data'] as Record<string, unknown>)['usage']).toEqual({ seconds: 0, images: 1, cost: 0.02, currency: 'EUR' });

      const queued = await call(usageKey, '/v1/video/generations', { model: T2V, prompt: 'cancel me', duration: 15, resolution: '1080p' });
      const cancelled = await call(usageKey, `/v1/video/generations/${String(queued.body['id'])}/cancel`, {});
      expect(cancelled.status).toBe(200);
      expect(cancelled.body['usage']).toEqual({ seconds: 0, images: 0, cost: 0, currency: 'EUR' });
    }, 90_000);
  });

  describe('budgets', () => {
    it('refuses with 402 budget_exceeded, in each family envelope, what does not fit; never more than the budget', async () => {
      // 0.5 each at most (5 s at 720p): three fit the budget of 1.5 exactly.
      const burst = await Promise.all(
        Array.from({ length: 10 }, (_, n) => call(budgetKey, '/v1/video/generations', { model: T2V, prompt: `b${n}`, duration: 5 })),
      );
      expect(burst.filter((answer) => answer.status === 200)).toHaveLength(3);
      const refused = burst.filter((answer) => answer.status !== 200);
      expect(refused).toHaveLength(7);
      for (const answer of refused) {
        expect(answer.status).toBe(402);
        expect(answer.body).toMatchObject({ error: { type: 'billing_error', code: 'budget_exceeded', param: '' } });
        expect(typeof (answer.body['error'] as Record<string, unknown>)['message']).toBe('string');
      }
      // The image envelope (0.02 does not fit either: 1.5 is reserved).
      const image = await call(budgetKey, '/v1/images/generations/async', { model: IMAGE, prompt: 'over' });
      expect(image).toMatchObject({ status: 402, body: { code: 'budget_exceeded', data: null } });
      expect(typeof image.body['message']).toBe('string');
      // A refused keyed create takes no key: the same key works once the budget allows.
      const keyed = await call(budgetKey, '/v1/video/generations', { model: T2V, prompt: 'keyed', duration: 5 }, { 'idempotency-key': 'budget-1' });
      expect(keyed.status).toBe(402);

      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      expect(metrics).toMatch(/mediagate_budget_refusals_total\{reason="month"\} 9/);

      const usage = await call(budgetKey, '/v1/usage');
      expect(usage.body['budget']).toMatchObject({ budget: 1.5, budget_period: 'month', spent: 0, reserved: 1.5 });
      const books = (await readBooks(raw)).keys.find((key) => key.id === envKeyId(budgetKey));
      expect(books).toMatchObject({ reserved: 1_500_000, activeReserved: 1_500_000 });

      await setBudget(raw, envKeyId(budgetKey), 4 * 500_000, 'month');
      const retried = await call(budgetKey, '/v1/video/generations', { model: T2V, prompt: 'keyed', duration: 5 }, { 'idempotency-key': 'budget-1' });
      expect(retried.status).toBe(200);
      const replayed = await call(budgetKey, '/v1/video/generations', { model: T2V, prompt: 'keyed', duration: 5 }, { 'idempotency-key': 'budget-1' });
      expect(replayed).toMatchObject({ status: 200, body: { id: retried.body['id'] } });
      expect((await call(budgetKey, '/v1/usage')).body['budget']).toMatchObject({ reserved: 2 });
    }, 90_000);
  });

  describe('GET /v1/usage', () => {
    it('reports the key’s final tasks by model and day, with totals and its budget', async () => {
      const today = new Date().toISOString().slice(0, 10);
      const report = await eventually(
        async () => {
          const { body } = await call(usageKey, '/v1/usage');
          return (body['totals'] as { tasks: number }).tasks >= 3 ? body : undefined;
        },
        { what: 'the first specs’ tasks to be final' },
      );
      expect(report).toMatchObject({ object: 'usage', currency: 'EUR', budget: { budget: null, budget_period: null, resets_at: null } });
      expect(report['totals']).toEqual({ tasks: 3, seconds: 4, images: 1, cost: 0.28 });
      expect(report['data']).toEqual([
        { model: T2V, day: today, tasks: 2, seconds: 4, images: 0, cost: 0.26 },
        { model: IMAGE, day: today, tasks: 1, seconds: 0, images: 1, cost: 0.02 },
      ]);
      // Whole UTC days: the default is the last 30, today included.
      const end = Number(report['end']);
      expect(end % 86_400).toBe(0);
      expect(end - Number(report['start'])).toBe(30 * 86_400);

      const byModel = await call(usageKey, `/v1/usage?group_by=model&start=${end - 86_400}&end=${end}`);
      expect(byModel.body['data']).toEqual([
        { model: T2V, day: null, tasks: 2, seconds: 4, images: 0, cost: 0.26 },
        { model: IMAGE, day: null, tasks: 1, seconds: 0, images: 1, cost: 0.02 },
      ]);
      const earlier = await call(usageKey, `/v1/usage?start=${end - 10 * 86_400}&end=${end - 86_400}`);
      expect(earlier.body).toMatchObject({ totals: { tasks: 0, cost: 0 }, data: [] });
    });

    it('shows a budget period and when it resets', async () => {
      const { body } = await call(budgetKey, '/v1/usage');
      const now = new Date();
      const monthStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) / 1000;
      const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) / 1000;
      expect(body).toMatchObject({ start: monthStart, end: nextMonth, budget: { budget_period: 'month', resets_at: nextMonth } });
    });

    it.each([
      ['start=yesterday', 'start'],
      ['end=-5', 'end'],
      ['start=2000&end=1000', 'end'],
      ['group_by=key', 'group_by'],
      ['group_by=model,model', 'group_by'],
      ['start=1&start=2', 'start'],
    ])('answers 400 invalid_parameter for %s', async (query, param) => {
      const { status, body } = await call(usageKey, `/v1/usage?${query}`);
      expect(status).toBe(400);
      expect(body).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_parameter', param } });
    });
  });
});
