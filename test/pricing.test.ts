/**
 * Prices as operators and clients see them: MEDIAGATE_PRICING_FILE checked at start (exit 78,
 * every fault with its JSON path), `mediagate pricing check [file]`, and each model's price in
 * GET /v1/models, GET /v1/models/{id}, /docs and /openapi.json.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, TEST_KEYS, type TestServer } from './helpers/server.js';
import { CLI } from './helpers/process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const T2V = 'vendora/famw-2.7-t2v';
const IMAGE = 'vendora/famz-image-spicy';
const OTHER = 'vendorb/famsd-2.5-i2v-spicy';

const GOOD = {
  currency: 'USD',
  models: {
    [T2V]: { per_task: 0.05, per_second: { '480p': 0.04, '720p': 0.08, '1080p': 0.12 } },
    [IMAGE]: { per_image: 0.03 },
    '*': { per_second: 0.1, per_image: 0.02 },
  },
};
const BAD = {
  currency: 'dollars',
  models: { [T2V]: { per_second: { '4k': 0.1, '*': 0.2 }, per_task: 0.0000001 }, 'vendora/nope': { per_task: 1 }, [IMAGE]: { api_key: 'x' } },
};
const BAD_FAULTS = ['currency:', `models.${T2V}.per_second.4k:`, `models.${T2V}.per_task:`, 'models.vendora/nope:', `models.${IMAGE}.api_key:`];

interface Ran {
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number;
}

async function run(args: readonly string[], env: Record<string, string>): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: ROOT, env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env }, timeout: 30_000 },
      (error, stdout, stderr) => resolve({ stdout, stderr, code: error ? (typeof error.code === 'number' ? error.code : 1) : 0 }),
    );
  });
}

let dir: string;
let good: string;
let bad: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mediagate-pricing-'));
  good = join(dir, 'good.json');
  bad = join(dir, 'bad.json');
  await writeFile(good, JSON.stringify(GOOD));
  await writeFile(bad, JSON.stringify(BAD));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

async function getJson(server: TestServer, path: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${TEST_KEYS[0]}` } });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

describe('models show their price when a pricing file is set', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ MEDIAGATE_PRICING_FILE: good });
  });
  afterAll(async () => server?.close());

  it('GET /v1/models: every model has pricing, its own entry or "*"\'s', async () => {
    const list = await getJson(server, '/v1/models');
    const byId = new Map((list['data'] as { id: string; pricing?: unknown }[]).map((m) => [m.id, m.pricing]));
    expect(byId.get(T2V)).toEqual({ currency: 'USD', per_task: 0.05, per_second: { '480p': 0.04, '720p': 0.08, '1080p': 0.12 } });
    expect(byId.get(IMAGE)).toEqual({ currency: 'USD', per_image: 0.03 });
    expect(byId.get(OTHER)).toEqual({ currency: 'USD', per_second: 0.1 });
    for (const pricing of byId.values()) expect(pricing).toMatchObject({ currency: 'USD' });
  });

  it('GET /v1/models/{id}: the same pricing', async () => {
    expect((await getJson(server, `/v1/models/${T2V}`))['pricing']).toEqual({
      currency: 'USD',
      per_task: 0.05,
      per_second: { '480p': 0.04, '720p': 0.08, '1080p': 0.12 },
    });
    expect((await getJson(server, `/v1/models/${encodeURIComponent(OTHER)}`))['pricing']).toEqual({ currency: 'USD', per_second: 0.1 });
  });

  it("the reference (/openapi.json, rendered at /docs) gives each model's price under its request schema", async () => {
    const html = await (await fetch(`${server.url}/openapi.json`)).text();
    expect(html).toContain('Price: USD 0.05/task + 0.04/s (480p), 0.08/s (720p), 0.12/s (1080p).');
    expect(html).toContain('Price: USD 0.03/image.');
    const models = (await getJson(server, '/v1/models'))['data'] as unknown[];
    expect(html.match(/ Price: /g)?.length).toBe(models.length);
  });

  it('/openapi.json describes pricing on the model', async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    expect(doc.components.schemas['Model']?.properties?.['pricing']).toEqual({ $ref: '#/components/schemas/ModelPricing' });
    expect(Object.keys(doc.components.schemas['ModelPricing']?.properties ?? {})).toEqual(['currency', 'per_task', 'per_second', 'per_image']);
  });
});

describe('without a pricing file models carry no pricing', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => server?.close());

  it('no pricing field in the listing, the model, or the reference', async () => {
    const list = await getJson(server, '/v1/models');
    for (const model of list['data'] as Record<string, unknown>[]) expect(model).not.toHaveProperty('pricing');
    expect(await getJson(server, `/v1/models/${T2V}`)).not.toHaveProperty('pricing');
    expect(await (await fetch(`${server.url}/openapi.json`)).text()).not.toContain('Price:');
  });
});

describe('mediagate pricing check', () => {
  it('a good file (argument): OK, every model with its price, exit 0', async () => {
    const ran = await run(['pricing', 'check', good], {});
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain(`${good}: OK (currency USD)`);
    expect(ran.stdout).toMatch(new RegExp(`${T2V.replace(/[.]/g, '\\.')}\\s+video\\s+USD 0\\.05/task \\+ 0\\.04/s \\(480p\\)`));
    expect(ran.stdout).toMatch(/vendorb\/famsd-2\.5-i2v-spicy\s+video\s+USD 0\.1\/s\s+"\*"/);
    expect(ran.stdout).toContain('23 of 23 model(s) priced');
    // An image model priced by "*" shows what it is charged (per image), never "*"'s per-second price.
    expect(ran.stdout).toMatch(/vendora\/famz-image-spicy-pro\s+image\s+USD 0\.02\/image\s+"\*"/);
  });

  it('"*" priced by the second alone leaves the image models never charged: exit 78 at models.*', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mediagate-pricing-never-'));
    const file = join(dir, 'pricing.json');
    await writeFile(file, JSON.stringify({ currency: 'USD', models: { '*': { per_second: 0.1 } } }));
    const ran = await run(['pricing', 'check', file], {});
    await rm(dir, { recursive: true, force: true });
    expect(ran.code).toBe(78);
    expect(ran.stderr).toMatch(/models\.\*: prices \d+ image model\(s\) .* by per_second only/);
  });

  it('the file from MEDIAGATE_PRICING_FILE when no argument is given', async () => {
    const ran = await run(['pricing', 'check'], { MEDIAGATE_PRICING_FILE: good });
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain(`${good}: OK`);
  });

  it('neither: says nothing is priced, exit 0', async () => {
    const ran = await run(['pricing', 'check'], {});
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain('MEDIAGATE_PRICING_FILE is not set');
  });

  it('a bad file: exit 78, every fault with its JSON path', async () => {
    const ran = await run(['pricing', 'check', bad], {});
    expect(ran.code).toBe(78);
    expect(ran.stderr).toContain('MEDIAGATE_PRICING_FILE is invalid');
    for (const at of BAD_FAULTS) expect(ran.stderr).toContain(`  ${at}`);
    expect(ran.stderr.trim().split('\n')).toHaveLength(1 + BAD_FAULTS.length);
    expect(ran.stdout).toBe('');
  });

  it('a missing file and a file that is not JSON: exit 78', async () => {
    const missing = await run(['pricing', 'check', join(dir, 'missing.json')], {});
    expect(missing.code).toBe(78);
    expect(missing.stderr).toContain('(file): cannot read');
    const notJson = join(dir, 'not.json');
    await writeFile(notJson, '{"currency": "USD", ');
    const broken = await run(['pricing', 'check', notJson], {});
    expect(broken.code).toBe(78);
    expect(broken.stderr).toContain('(file): not valid JSON');
  });
});

describe('a bad pricing file stops the real process', () => {
  for (const command of ['serve', 'worker']) {
    it(`mediagate ${command}: exit 78, one line per fault with its JSON path`, async () => {
      const ran = await run([command], { MEDIAGATE_PRICING_FILE: bad, MEDIAGATE_DATA_DIR: join(dir, `data-${command}`), PORT: '0' });
      expect(ran.code).toBe(78);
      expect(ran.stderr).toContain('MEDIAGATE_PRICING_FILE is invalid');
      for (const at of BAD_FAULTS) expect(ran.stderr).toContain(`  ${at}`);
      expect(ran.stderr).not.toMatch(/\n\s+at /);
    });
  }
});
