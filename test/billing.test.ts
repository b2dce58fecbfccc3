import { describe, expect, it } from 'vitest';
import {
  amountText,
  billedSeconds,
  formatAmount,
  maxTaskCost,
  parseAmount,
  parsePricing,
  priceOf,
  pricingView,
  PricingConfigError,
  taskCost,
  type Pricing,
} from '../src/billing/index.js';
import { createValidator, findModel, MODELS, type ModelRow } from '../src/catalog/index.js';

const T2V = 'vendora/famw-2.7-t2v'; // 480p, 720p, 1080p; default 720p
const OPEN_RES = 'vendorc-h3-max-reference-to-video'; // resolution values not listed
const IMAGE = 'vendora/famz-image-spicy';

function row(id: string): ModelRow {
  const found = findModel(id);
  if (!found) throw new Error(`no model ${id}`);
  return found;
}

function micro(value: number): number {
  const parsed = parseAmount(value);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.micro;
}

/** Every fault of a file, or [] when it is valid. */
function faults(doc: unknown): readonly string[] {
  try {
    parsePricing(JSON.stringify(doc));
    return [];
  } catch (error) {
    if (error instanceof PricingConfigError) return error.faults;
    throw error;
  }
}

describe('amounts: decimal numbers <-> integer micro-units, exactly', () => {
  it('parses what a person writes, without float drift', () => {
    expect(micro(0.1)).toBe(100_000);
    expect(micro(0.2)).toBe(200_000);
    expect(micro(0.3)).toBe(300_000);
    expect(micro(0.07)).toBe(70_000); // 0.07 * 1e6 is 70000.00000000001 in floats
    expect(micro(1.005)).toBe(1_005_000);
    expect(micro(0.000001)).toBe(1);
    expect(micro(0.000015)).toBe(15);
    expect(micro(12)).toBe(12_000_000);
    expect(micro(0)).toBe(0);
    expect(micro(123456789.123456)).toBe(123_456_789_123_456);
  });

  it('refuses more than 6 decimals, negatives, non-numbers', () => {
    expect(parseAmount(0.0000001)).toMatchObject({ ok: false, reason: expect.stringContaining('6 decimals') });
    expect(parseAmount(0.1234567)).toMatchObject({ ok: false });
    expect(parseAmount(-1)).toMatchObject({ ok: false, reason: expect.stringContaining('negative') });
    expect(parseAmount(Number.POSITIVE_INFINITY)).toMatchObject({ ok: false });
    expect(parseAmount(Number.NaN)).toMatchObject({ ok: false });
    expect(parseAmount('0.1')).toMatchObject({ ok: false });
    expect(parseAmount(1e30)).toMatchObject({ ok: false, reason: expect.stringContaining('large') });
  });

  it('formats micro-units as JSON numbers with at most 6 decimals', () => {
    expect(JSON.stringify(formatAmount(micro(0.1) + micro(0.2)))).toBe('0.3');
    expect(JSON.stringify(formatAmount(70_000 * 3))).toBe('0.21');
    expect(JSON.stringify(formatAmount(1))).toBe('0.000001');
    expect(JSON.stringify(formatAmount(1_500_000))).toBe('1.5');
    expect(JSON.stringify(formatAmount(0))).toBe('0');
    expect(JSON.stringify(formatAmount(999_999_999_999_999))).toBe('999999999.999999');
    expect(amountText(-2_500_001)).toBe('-2.500001');
  });

  it('round-trips every amount of a dense sample exactly', () => {
    for (let m = 0; m < 2_000_000; m += 997) {
      expect(micro(formatAmount(m))).toBe(m);
      expect(formatAmount(m).toString()).toBe(amountText(m));
    }
  });

  it('sums in micro-units stay exact where float sums drift', () => {
    let exact = 0;
    for (let i = 0; i < 1000; i += 1) exact += micro(0.1);
    expect(formatAmount(exact)).toBe(100);
  });
});

describe('the pricing file: a valid file', () => {
  const doc = {
    currency: 'EUR',
    models: {
      [T2V]: { per_task: 0.05, per_second: { '480p': 0.04, '720p': 0.08, '1080p': 0.12 } },
      [IMAGE]: { per_image: 0.02 },
      '*': { per_second: 0.1, per_image: 0.01 },
    },
  };
  const pricing = parsePricing(JSON.stringify(doc));

  it('an exact id wins over "*"; other models take "*"', () => {
    expect(pricing.currency).toBe('EUR');
    expect(priceOf(pricing, T2V)?.perTask).toBe(50_000);
    expect(priceOf(pricing, IMAGE)).toEqual({ perImage: 20_000 });
    expect(priceOf(pricing, OPEN_RES)).toEqual({ perSecond: 100_000, perImage: 10_000 });
    expect(priceOf(undefined, T2V)).toBeUndefined();
  });

  it('the listing view shows the PRICE fields as numbers', () => {
    expect(pricingView(pricing, T2V)).toEqual({ currency: 'EUR', per_task: 0.05, per_second: { '480p': 0.04, '720p': 0.08, '1080p': 0.12 } });
    // Only the fields the model's tasks are charged by: "*"'s per_image is not shown on a video model.
    expect(pricingView(pricing, OPEN_RES)).toEqual({ currency: 'EUR', per_second: 0.1 });
    expect(pricingView(pricing, 'vendora/famz-image-spicy-pro')).toEqual({ currency: 'EUR', per_image: 0.01 });
    expect(pricingView(undefined, T2V)).toBeUndefined();
    const noStar = parsePricing(JSON.stringify({ currency: 'USD', models: { [IMAGE]: { per_image: 1 } } }));
    expect(pricingView(noStar, T2V)).toEqual({ currency: 'USD' });
  });

  it('an open-resolution model may key per_second by any value', () => {
    expect(faults({ currency: 'USD', models: { [OPEN_RES]: { per_second: { '2k': 1, '*': 0.5 } } } })).toEqual([]);
  });
});

describe('the pricing file: a price that can never be charged is a fault', () => {
  it('"*" with per_second alone, over image models: refused at models.*', () => {
    const found = faults({ currency: 'USD', models: { '*': { per_second: 0.1 } } });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^models\.\*: prices \d+ image model\(s\) \(.+\) by per_second only; an image task has no seconds/);
  });

  it('"*" with per_image alone, over video models: refused at models.*', () => {
    const found = faults({ currency: 'USD', models: { '*': { per_image: 0.02 } } });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^models\.\*: prices \d+ video model\(s\) .* by per_image only; a video task delivers no images/);
  });

  it('an own entry of per_second on an image model, or per_image on a video model: refused', () => {
    expect(faults({ currency: 'USD', models: { [IMAGE]: { per_second: 0.1 } } })).toEqual([
      `models.${IMAGE}.per_second: ${IMAGE} is an image model; it has no seconds`,
    ]);
    expect(faults({ currency: 'USD', models: { [T2V]: { per_image: 0.1 } } })).toEqual([
      `models.${T2V}.per_image: ${T2V} is a video model; it delivers no images`,
    ]);
  });

  it('"*" that every model it prices can be charged by passes: per_task, or both per_second and per_image', () => {
    expect(faults({ currency: 'USD', models: { '*': { per_task: 0.1 } } })).toEqual([]);
    expect(faults({ currency: 'USD', models: { '*': { per_second: 0.1, per_image: 0.02 } } })).toEqual([]);
    expect(faults({ currency: 'USD', models: { '*': { per_second: 0.1, per_task: 0 } } })).toEqual([]);
  });
});

describe('the pricing file: every fault with its JSON path', () => {
  it('collects all faults of a bad file at once', () => {
    const found = faults({
      currency: 'usd',
      extra: 1,
      models: {
        'vendora/nope': { per_task: 1 },
        [T2V]: { per_task: -1, per_second: { '4k': 0.1, '720p': 0.1234567 }, per_image: 0.1, colour: 'red' },
        [IMAGE]: { per_second: 1, per_image: Number.MAX_VALUE },
        'vendorb/famsd-2.5-i2v-spicy': {},
        '*': { api_key: 'sk-123' },
      },
    });
    const expected = [
      /^extra: unknown field/,
      /^currency: /,
      /^models\.vendora\/nope: unknown model id/,
      /^models\.vendora\/famw-2\.7-t2v\.colour: unknown field/,
      /^models\.vendora\/famw-2\.7-t2v\.per_image: .*video model/,
      /^models\.vendora\/famw-2\.7-t2v\.per_task: must not be negative/,
      /^models\.vendora\/famw-2\.7-t2v\.per_second\.4k: .*no resolution "4k"/,
      /^models\.vendora\/famw-2\.7-t2v\.per_second\.720p: has more than 6 decimals/,
      /^models\.vendora\/famw-2\.7-t2v\.per_second: no price for resolution 480p, 1080p of vendora\/famw-2\.7-t2v; add it or "\*"/,
      /^models\.vendora\/famz-image-spicy\.per_second: .*image model/,
      /^models\.vendora\/famz-image-spicy\.per_image: is too large/,
      /^models\.vendorb\/famsd-2\.5-i2v-spicy: is empty/,
      /^models\.\*\.api_key: .*never a key/,
    ];
    for (const pattern of expected)
      expect(
        found.some((f) => pattern.test(f)),
        `${pattern} in\n${found.join('\n')}`,
      ).toBe(true);
    expect(found.length).toBe(expected.length);
  });

  it('a "*" per_second object may name any model\'s value, not an unknown one', () => {
    expect(faults({ currency: 'USD', models: { '*': { per_second: { '4k': 1, '360p': 1, '*': 0.5 }, per_image: 0.1 } } })).toEqual([]);
    expect(faults({ currency: 'USD', models: { '*': { per_second: { '8k': 1, '*': 0.5 }, per_image: 0.1 } } })).toEqual([
      expect.stringMatching(/^models\.\*\.per_second\.8k: no model has a resolution "8k"/),
    ]);
  });

  it('refuses a file that is not JSON, not an object, or without models', () => {
    expect(faults({ currency: 'USD' })).toEqual([expect.stringMatching(/^models: /)]);
    expect(() => parsePricing('{')).toThrow(PricingConfigError);
    expect(() => parsePricing('[]')).toThrow(PricingConfigError);
    expect(faults({ currency: 'USD', models: { [T2V]: 3 } })).toEqual([expect.stringMatching(/^models\.vendora\/famw-2\.7-t2v: must be an object/)]);
  });
});

describe('the cost of a task', () => {
  const pricing: Pricing = parsePricing(
    JSON.stringify({
      currency: 'USD',
      models: {
        [T2V]: { per_task: 0.05, per_second: { '480p': 0.04, '720p': 0.07, '*': 0.2 } },
        [IMAGE]: { per_task: 0.001, per_image: 0.03 },
      },
    }),
  );

  it('per_task + per_second(resolution) x seconds + per_image x images, exactly', () => {
    const price = priceOf(pricing, T2V);
    expect(taskCost(price, { seconds: 3, images: 0, resolution: '720p' })).toBe(50_000 + 3 * 70_000);
    expect(formatAmount(taskCost(price, { seconds: 3, images: 0, resolution: '720p' }))).toBe(0.26);
    expect(taskCost(price, { seconds: 10, images: 0, resolution: '480p' })).toBe(450_000);
    expect(taskCost(price, { seconds: 1, images: 0, resolution: '1080p' })).toBe(250_000); // "*" entry
    expect(taskCost(priceOf(pricing, IMAGE), { seconds: 0, images: 1 })).toBe(31_000);
    expect(taskCost(priceOf(pricing, OPEN_RES), { seconds: 5, images: 0 })).toBe(0); // no price: 0
    expect(taskCost(undefined, { seconds: 5, images: 2 })).toBe(0);
  });

  it('the maximum cost uses the requested duration or the default, and the default resolution', () => {
    const validator = createValidator(MODELS);
    const resolved = (body: Record<string, unknown>) => {
      const result = validator.validate(row(String(body['model'])).kind, { body: { ...body, prompt: 'a fox' }, bodyBytes: 100 });
      if (!result.ok) throw new Error(result.error.message);
      return result.params;
    };
    expect(maxTaskCost(pricing, row(T2V), resolved({ model: T2V, duration: 10, resolution: '480p' }))).toBe(50_000 + 10 * 40_000);
    expect(maxTaskCost(pricing, row(T2V), resolved({ model: T2V }))).toBe(50_000 + 5 * 70_000); // 5 s at 720p
    expect(maxTaskCost(pricing, row(T2V), {})).toBe(50_000 + 5 * 70_000);
    expect(maxTaskCost(pricing, row(IMAGE), resolved({ model: IMAGE }))).toBe(31_000);
    expect(maxTaskCost(undefined, row(T2V), {})).toBe(0);
  });

  it('billed seconds: the nearest whole second, at least 1', () => {
    expect(billedSeconds(4.024)).toBe(4);
    expect(billedSeconds(4.5)).toBe(5);
    expect(billedSeconds(4.49)).toBe(4);
    expect(billedSeconds(0.2)).toBe(1);
    expect(billedSeconds(0)).toBe(1);
    expect(billedSeconds(Number.NaN)).toBe(1);
    expect(billedSeconds(10.04)).toBe(10);
  });
});

describe('the worked example of docs/pricing.md', () => {
  const pricing = parsePricing(
    JSON.stringify({
      currency: 'USD',
      models: {
        [T2V]: { per_task: 0.05, per_second: { '480p': 0.04, '720p': 0.08, '1080p': 0.12 } },
        [IMAGE]: { per_image: 0.03 },
        '*': { per_second: 0.1, per_image: 0.02 },
      },
    }),
  );
  const cost = (model: string, measured: number, images: number, resolution?: string): number =>
    formatAmount(taskCost(priceOf(pricing, model), { seconds: measured === 0 ? 0 : billedSeconds(measured), images, resolution }));

  it('gives the costs and reservations the table shows', () => {
    expect(cost(T2V, 5.04, 0, '720p')).toBe(0.45);
    expect(cost(T2V, 10.5, 0, '480p')).toBe(0.49);
    expect(cost('vendorb/famsd-2.5-i2v-spicy', 4.02, 0, '720p')).toBe(0.4);
    expect(cost(IMAGE, 0, 1)).toBe(0.03);
    expect(formatAmount(maxTaskCost(pricing, row(T2V), { duration: 5 }))).toBe(0.45);
    expect(formatAmount(maxTaskCost(pricing, row(T2V), { duration: 10, resolution: '480p' }))).toBe(0.45);
  });
});
