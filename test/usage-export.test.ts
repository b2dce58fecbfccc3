import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseAmount } from '../src/billing/money.js';
import { Mediagate, MediagateAdmin } from '../src/client/index.js';
import { createInstantEngine } from '../src/engines/instant.js';
import { FOCUS_COLUMNS, focusCsv, type ExportStats } from '../src/http/routes/focus-export.js';
import type { Store } from '../src/store/store.js';
import { openWithRaw, type RawDatabase } from './helpers/ledger.js';
import { createTestDatabase, postgresAvailability, selectedBackends, type TestDatabase } from './helpers/postgres.js';
import { startServer, type TestServer } from './helpers/server.js';
import { STORE_BACKENDS } from './helpers/stores.js';
import { CLI } from './helpers/process.js';

/**
 * The spend export (GET /v1/admin/usage/export, FinOps FOCUS CSV): from the store a page at a
 * time (a year of rows held one page at a time), over HTTP on a real server on SQLite and on
 * PostgreSQL (its totals against /v1/admin/usage to the micro-unit, its refusals), and through
 * `mediagate usage export`.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ADMIN = 'mg_test_admin_key_0123456789';
const T2V = 'vendora/famw-2.7-t2v';
const IMAGE = 'vendora/famz-image-spicy';
/** Amounts with six decimals, so a sum through floats would drift. */
const PRICING = { currency: 'EUR', models: { [T2V]: { per_task: 0.100001, per_second: 0.033333 }, '*': { per_image: 0.020007, per_second: 0.01 } } };

/** RFC 4180, read independently of the writer: quoted fields, doubled quotes, CRLF records. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      record.push(field);
      field = '';
    } else if (char === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i++;
    } else field += char;
  }
  if (field !== '' || record.length > 0) throw new Error('the CSV does not end with CRLF');
  return records;
}

/** The CSV's rows as objects by header name; every record as wide as the header. */
function csvRows(text: string): Record<string, string>[] {
  const [header, ...records] = parseCsv(text);
  if (!header) throw new Error('no header');
  return records.map((record) => {
    expect(record).toHaveLength(header.length);
    return Object.fromEntries(header.map((name, index) => [name, record[index] ?? '']));
  });
}

const micro = (text: string): number => {
  const parsed = parseAmount(Number(text));
  if (!parsed.ok) throw new Error(`not an amount: ${text}`);
  return parsed.micro;
};

async function streamText(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
  return text;
}

describe.each(STORE_BACKENDS)('the FOCUS export from the store on $name', (backend) => {
  let store: Store;
  let raw: RawDatabase;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    ({ store, raw, cleanup } = await openWithRaw(backend));
  });
  afterEach(() => cleanup());

  it('streams a year of key x model x day rows holding one page at a time, with the totals of the report', async () => {
    const keys = ['key_alpha', 'key_bravo', 'key_gone'];
    await store.insertKey({ id: 'key_alpha', hash: 'h1', name: 'Team "A", north\nfloor', createdAt: 0 });
    await store.insertKey({ id: 'key_bravo', hash: 'h2', name: 'plain', createdAt: 0 });
    // key_gone has usage but no row in api_keys any more.
    const models = [T2V, IMAGE];
    const start = Date.UTC(2025, 0, 1);
    const days = Array.from({ length: 365 }, (_, index) => new Date(start + index * 86_400_000).toISOString().slice(0, 10));
    let expected = 0;
    let rowsInserted = 0;
    for (const day of days) {
      const values: string[] = [];
      const params: unknown[] = [];
      for (const key of keys) {
        for (const model of models) {
          const cost = 1 + ((rowsInserted * 7919) % 1_000_003);
          expected += cost;
          rowsInserted += 1;
          const at = params.length;
          values.push(`($${at + 1}, $${at + 2}, $${at + 3}, 1, 2, 0, $${at + 4})`);
          params.push(key, model, day, cost);
        }
      }
      await raw.query(`INSERT INTO usage_daily (key_id, model, day, tasks, seconds, images, cost) VALUES ${values.join(', ')}`, params);
    }
    const query = { startDay: '2025-01-01', endDay: '2026-01-01' };
    const stats: ExportStats = { pages: 0, rows: 0, peakRowsHeld: 0 };
    const text = await streamText(focusCsv((range, after, limit) => store.usageExportPage(range, after, limit), query, 'EUR', 100, stats));
    const rows = csvRows(text);

    expect(rowsInserted).toBe(2190);
    expect(rows).toHaveLength(2190);
    // One page held at a time: 22 pages of at most 100 rows for 2,190 rows.
    expect(stats).toEqual({ pages: 22, rows: 2190, peakRowsHeld: 100 });
    expect(new Set(rows.map((row) => `${row['SubAccountId']}|${row['SkuId']}|${row['ChargePeriodStart']}`)).size).toBe(2190);
    expect(rows.reduce((sum, row) => sum + micro(row['BilledCost'] ?? ''), 0)).toBe(expected);
    const report = await store.usageReport({ startDay: query.startDay, endDay: query.endDay, byKey: false, byModel: false, byDay: false });
    expect(report[0]?.cost).toBe(expected);
    // RFC 4180 quoting kept the name's quote, comma and line break.
    expect(rows.find((row) => row['x_ApiKeyId'] === 'key_alpha')?.['x_ApiKeyName']).toBe('Team "A", north\nfloor');
    expect(rows.find((row) => row['x_ApiKeyId'] === 'key_gone')?.['SubAccountName']).toBe('');
    expect(rows[0]).toMatchObject({
      ChargePeriodStart: '2025-01-01T00:00:00Z',
      ChargePeriodEnd: '2025-01-02T00:00:00Z',
      BillingPeriodStart: '2025-01-01T00:00:00Z',
    });
    expect(rows.at(-1)).toMatchObject({ ChargePeriodStart: '2025-12-31T00:00:00Z', BillingPeriodEnd: '2026-01-01T00:00:00Z' });
  }, 120_000);

  it('reads nothing outside the range, and an empty range is the header alone', async () => {
    await raw.query(
      `INSERT INTO usage_daily (key_id, model, day, tasks, seconds, images, cost) VALUES ('k', 'm', '2025-03-01', 1, 0, 0, 5), ('k', 'm', '2025-03-03', 1, 0, 0, 7)`,
    );
    const one = csvRows(await streamText(focusCsv((r, a, l) => store.usageExportPage(r, a, l), { startDay: '2025-03-03', endDay: '2025-03-04' }, 'USD')));
    expect(one.map((row) => row['BilledCost'])).toEqual(['0.000007']);
    const none = await streamText(focusCsv((r, a, l) => store.usageExportPage(r, a, l), { startDay: '2025-03-02', endDay: '2025-03-03' }, 'USD'));
    expect(parseCsv(none)).toEqual([[...FOCUS_COLUMNS]]);
  });
});

const serverBackends = [
  ...(selectedBackends().includes('sqlite') ? ['sqlite' as const] : []),
  ...((await postgresAvailability()).enabled ? ['postgres' as const] : []),
];

describe.each(serverBackends)('GET /v1/admin/usage/export on %s', (backend) => {
  let server: TestServer;
  let dir = '';
  let database: TestDatabase | undefined;
  const today = new Date().toISOString().slice(0, 10);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mediagate-export-'));
    await writeFile(join(dir, 'pricing.json'), JSON.stringify(PRICING));
    database = backend === 'postgres' ? await createTestDatabase() : undefined;
    server = await startServer(
      {
        MEDIAGATE_PRICING_FILE: join(dir, 'pricing.json'),
        MEDIAGATE_RATE_LIMIT_PER_MIN: '0',
        MEDIAGATE_ADMIN_KEYS: ADMIN,
        ...(database ? { DATABASE_URL: database.url } : {}),
      },
      { engine: createInstantEngine() },
    );
    const fast = { pollInterval: 50, maxPollInterval: 200 };
    const [first, second] = server.keys.map((apiKey) => new Mediagate({ baseURL: server.url, apiKey }));
    if (!first || !second) throw new Error('two keys expected');
    await first.videos.createAndWait({ model: T2V, prompt: 'export', duration: 4 }, fast);
    await first.videos.createAndWait({ model: T2V, prompt: 'export', duration: 3 }, fast);
    await second.videos.createAndWait({ model: T2V, prompt: 'export', duration: 5 }, fast);
    await second.images.createAndWait({ model: IMAGE, prompt: 'export' }, fast);
  }, 120_000);
  afterAll(async () => {
    await server.close();
    await database?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  const get = (path: string, key = ADMIN) => fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}` } });

  it('answers a FOCUS CSV whose totals, per key and model, are the usage report’s to the micro-unit', async () => {
    const response = await get(`/v1/admin/usage/export?format=focus&from=${today}&to=${today}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/csv/);
    const text = await response.text();
    const [header] = parseCsv(text);
    expect(header).toEqual([...FOCUS_COLUMNS]);
    for (const column of header ?? []) expect(column.startsWith('x_') || /^[A-Z][A-Za-z]+$/.test(column)).toBe(true);
    const rows = csvRows(text);
    const start = Date.parse(`${today}T00:00:00Z`) / 1000;
    const report = await new MediagateAdmin({ baseURL: server.url, apiKey: ADMIN }).usage.retrieve({
      start,
      end: start + 86_400,
      groupBy: ['key', 'model', 'day'],
    });
    expect(rows).toHaveLength(report.data.length);
    expect(rows.length).toBeGreaterThanOrEqual(3);
    expect(rows.reduce((sum, row) => sum + micro(row['BilledCost'] ?? ''), 0)).toBe(micro(String(report.totals.cost)));
    for (const line of report.data) {
      const row = rows.find((candidate) => candidate['x_ApiKeyId'] === line.key_id && candidate['SkuId'] === line.model);
      expect(row, `${String(line.key_id)} ${String(line.model)}`).toBeDefined();
      expect(micro(row?.['EffectiveCost'] ?? '')).toBe(micro(String(line.cost)));
      expect(row).toMatchObject({ BillingCurrency: 'EUR', ChargeCategory: 'Usage', x_Tasks: String(line.tasks), x_BilledSeconds: String(line.seconds) });
    }
    // No secret in the file: the keys appear by id and name only.
    for (const key of [...server.keys, ADMIN]) expect(text).not.toContain(key);
  });

  it('refuses a missing or bad query with 400 invalid_parameter naming it, and a client key with 403', async () => {
    const cases: [string, string][] = [
      [`from=${today}&to=${today}`, 'format'],
      [`format=csv&from=${today}&to=${today}`, 'format'],
      [`format=focus&to=${today}`, 'from'],
      [`format=focus&from=2026-02-30&to=${today}`, 'from'],
      [`format=focus&from=${today}`, 'to'],
      [`format=focus&from=${today}&to=1700000000`, 'to'],
      [`format=focus&from=2026-11-02&to=2026-11-01`, 'to'],
      [`format=focus&from=${today}&from=${today}&to=${today}`, 'from'],
    ];
    for (const [query, param] of cases) {
      const response = await get(`/v1/admin/usage/export?${query}`);
      expect(response.status, query).toBe(400);
      expect(((await response.json()) as { error: Record<string, unknown> }).error).toMatchObject({ code: 'invalid_parameter', param });
    }
    const client = await get(`/v1/admin/usage/export?format=focus&from=${today}&to=${today}`, server.keys[0]);
    expect(client.status).toBe(403);
  });

  it('`mediagate usage export` writes the same file through the SDK', async () => {
    const output = join(dir, 'focus.csv');
    const run = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [CLI, 'usage', 'export', '--format', 'focus', '--from', today, '--to', today, '--output', output, '--base-url', server.url],
        { cwd: ROOT, env: { ...process.env, MEDIAGATE_ADMIN_KEY: ADMIN }, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stderr }));
    });
    expect(run).toEqual({ code: 0, stderr: '' });
    const served = await (await get(`/v1/admin/usage/export?format=focus&from=${today}&to=${today}`)).text();
    expect(await readFile(output, 'utf8')).toBe(served);
  }, 60_000);
});
