/**
 * Numbers a client sends never reach arithmetic unbounded, and a refusal over money says in
 * which currency: on a priced server with a budgeted key, a `duration` of 9e14 on the models
 * whose range the catalog does not list is a 400 `unsupported_value` on `duration` (it used to
 * be a 500: the maximum cost overflowed), a seed of 1e300 is a 400 on `seed`, and the 402
 * `budget_exceeded` names the currency of every amount it gives.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODELS, type VideoModelRow } from '../src/catalog/index.js';
import { parsePricing } from '../src/billing/index.js';
import { findModel } from '../src/catalog/index.js';
import { BudgetExceeded, TaskService } from '../src/tasks/service.js';
import { startPricedServer, type PricedServer } from './helpers/priced-server.js';
import { STORE_BACKENDS } from './helpers/stores.js';

const PRICING = { currency: 'EUR', models: { '*': { per_task: 0.1, per_second: 0.2, per_image: 0.02 } } };
const IMAGE_URL = 'https://example.com/a.png';

describe('numeric bounds and the currency of a refusal', () => {
  let priced: PricedServer;

  beforeAll(async () => {
    priced = await startPricedServer(PRICING, { amount: 1, period: null });
  });
  afterAll(() => priced.close());

  const create = async (path: string, body: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown> }> => {
    const response = await fetch(`${priced.server.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${priced.server.keys[1]}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  const unbounded = MODELS.filter((row): row is VideoModelRow => row.kind === 'video' && row.duration === null);

  it('the catalog has models without a duration range (the case this guards)', () => {
    expect(unbounded.length).toBeGreaterThanOrEqual(2);
  });

  it.each(unbounded.map((row) => row.id))('%s: duration 9e14 from a budgeted key is a 400 on duration, not a 500', async (model) => {
    const row = unbounded.find((candidate) => candidate.id === model);
    const inputs = row?.required.includes('image') ? { image: IMAGE_URL } : {};
    const answer = await create('/v1/video/generations', { model, prompt: 'a fox', duration: 9e14, ...inputs });
    expect(answer.status).toBe(400);
    expect(answer.body['error']).toMatchObject({ code: 'unsupported_value', param: 'duration' });
  });

  it('every integer parameter of every model schema has both bounds', async () => {
    const response = await fetch(`${priced.server.url}/v1/models`, { headers: { authorization: `Bearer ${priced.server.keys[0]}` } });
    const models = ((await response.json()) as { data: { id: string; schema?: { properties?: Record<string, Record<string, unknown>> } }[] }).data;
    const unboundedParams: string[] = [];
    for (const model of models) {
      for (const [name, schema] of Object.entries(model.schema?.properties ?? {})) {
        const types = ([] as unknown[]).concat(schema['type']);
        if (!types.includes('integer') && !types.includes('number')) continue;
        if (schema['enum'] !== undefined) continue;
        if (typeof schema['minimum'] !== 'number' || typeof schema['maximum'] !== 'number') unboundedParams.push(`${model.id}.${name}`);
      }
    }
    expect(models.length).toBeGreaterThan(0);
    expect(unboundedParams).toEqual([]);
  });

  it('a seed of 1e300 is a 400 on seed (video and image)', async () => {
    const video = await create('/v1/video/generations', { model: 'vendora/famw-2.7-t2v', prompt: 'a fox', seed: 1e300 });
    expect(video.status).toBe(400);
    expect(video.body['error']).toMatchObject({ code: 'unsupported_value', param: 'seed' });
    const image = await create('/v1/images/generations/async', { model: 'vendora/famz-image-spicy', prompt: 'a fox', seed: 1e300 });
    expect(image.status).toBe(400);
    expect(image.body).toMatchObject({ code: 'unsupported_value' });
  });

  it('the 402 names the currency of the amounts it gives', async () => {
    // 0.1 + 10 s x 0.2 = 2.1, over the budget of 1.
    const answer = await create('/v1/video/generations', { model: 'vendora/famw-2.7-t2v', prompt: 'a fox', duration: 10, resolution: '1080p' });
    expect(answer.status).toBe(402);
    const message = String((answer.body['error'] as Record<string, unknown>)['message']);
    expect(message).toContain('may cost up to EUR 2.1,');
    expect(message).toContain('budget is EUR 1;');
  });
});

describe.each(STORE_BACKENDS)('a maximum cost past exact micro-units on $name', (backend) => {
  it('is no throw: a key without a budget creates, a budgeted key gets BudgetExceeded', async () => {
    const opened = await backend.open();
    try {
      // 1e9 a second x 15 s is 1.5e16 micro-units: past 2^53, so the exact sum cannot be made.
      const pricing = parsePricing(JSON.stringify({ currency: 'USD', models: { 'vendora/famw-2.7-t2v': { per_second: 1e9 } } }));
      const service = new TaskService({ store: opened.store, pricing });
      const row = findModel('vendora/famw-2.7-t2v');
      if (!row) throw new Error('no model');
      await opened.store.insertKey({ id: 'free', hash: 'hash-free', name: 'free', createdAt: 0 });
      await opened.store.insertKey({ id: 'budgeted', hash: 'hash-budgeted', name: 'budgeted', createdAt: 0 });
      await opened.store.updateKey('budgeted', { budget: 1_000_000_000 * 1_000_000 }, Date.now());
      await expect(service.create('free', row, { prompt: 'x', duration: 15 }, { inFlight: 0 })).resolves.toMatchObject({ owner: 'free' });
      await expect(service.create('budgeted', row, { prompt: 'x', duration: 15 }, { inFlight: 0 })).rejects.toBeInstanceOf(BudgetExceeded);
    } finally {
      await opened.cleanup();
    }
  });
});
