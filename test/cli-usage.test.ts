/**
 * `mediagate usage` and `mediagate admin keys|usage`, run as child processes as built (dist/)
 * against a real server with a pricing file and an admin key (instant engine: its videos state
 * the requested duration, so they are billed like a render): the tables, the budget line, --json
 * as the API answers, the exit codes (2 usage, 4 a key of the wrong role or none, 6 no such
 * key, 8 budget exceeded), and a key administered end to end as its holder sees it.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Mediagate, type AdminKey, type UsageReport } from '../src/client/index.js';
import { eventually } from './helpers/eventually.js';
import { envKeyId } from './helpers/ledger.js';
import { ADMIN_KEY, startPricedServer, type PricedServer } from './helpers/priced-server.js';
import type { TestServer } from './helpers/server.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const T2V = 'vendora/famw-2.7-t2v';
const IMAGE = 'vendora/famz-image-spicy';
const PRICING = { currency: 'EUR', models: { [T2V]: { per_task: 0.1, per_second: 0.1 }, '*': { per_image: 0.02, per_second: 0.1 } } };

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

describe('usage and admin commands', () => {
  let server: TestServer;
  let priced: PricedServer | undefined;
  const today = new Date().toISOString().slice(0, 10);

  function cli(args: readonly string[], env: Readonly<Record<string, string | undefined>> = {}, bin = 'dist/cli/main.js'): Promise<Run> {
    const childEnv: NodeJS.ProcessEnv = {
      ...process.env,
      MEDIAGATE_BASE_URL: server.url,
      MEDIAGATE_API_KEY: server.keys[0],
      MEDIAGATE_ADMIN_KEY: ADMIN_KEY,
      ...env,
    };
    for (const [name, value] of Object.entries(env)) if (value === undefined) delete childEnv[name];
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [bin, ...args], { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  beforeAll(async () => {
    // The second key: a budget of 1 a month, set before its first request (budgets are cached a few seconds).
    priced = await startPricedServer(PRICING, { amount: 1, period: 'month' });
    server = priced.server;
    const client = new Mediagate({ baseURL: server.url, apiKey: server.keys[0] });
    const fast = { pollInterval: 50, maxPollInterval: 200 };
    await client.videos.createAndWait({ model: T2V, prompt: 'usage', duration: 4 }, fast);
    await client.videos.createAndWait({ model: T2V, prompt: 'usage', duration: 2 }, fast);
    await client.images.createAndWait({ model: IMAGE, prompt: 'usage' }, fast);
    const budgeted = new Mediagate({ baseURL: server.url, apiKey: server.keys[1] });
    await budgeted.videos.createAndWait({ model: T2V, prompt: 'budget', duration: 5 }, fast);
  }, 60_000);

  afterAll(async () => {
    await priced?.close();
  });

  describe('mediagate usage', () => {
    it('prints the rows by model and day, right-aligned, a total line and the budget line', async () => {
      const run = await cli(['usage']);
      expect(run.code, run.stderr).toBe(0);
      const lines = run.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^Usage \d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2} \(UTC days\), amounts in EUR$/);
      expect(lines.slice(2, 6)).toEqual([
        expect.stringMatching(/^MODEL\s+DAY\s+TASKS\s+SECONDS\s+IMAGES\s+COST$/),
        expect.stringMatching(new RegExp(`^${T2V}\\s+${today}\\s+2\\s+6\\s+0\\s+0\\.80$`)),
        expect.stringMatching(new RegExp(`^vendora/famz-image-spicy\\s+${today}\\s+1\\s+0\\s+1\\s+0\\.02$`)),
        expect.stringMatching(/^TOTAL\s+3\s+6\s+1\s+0\.82$/),
      ]);
      // Numbers aligned right: every row's cost ends in the same column.
      const ends = lines.slice(2, 6).map((line) => line.length);
      expect(new Set(ends).size).toBe(1);
      expect(lines.at(-1)).toBe('Budget: none. Spent 0.82 EUR in all.');
    });

    it('shows a budget as spent and reserved of the budget, the share used, what is left and when it resets', async () => {
      const run = await cli(['usage'], { MEDIAGATE_API_KEY: server.keys[1] });
      expect(run.code, run.stderr).toBe(0);
      const now = new Date();
      const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);
      expect(run.stdout.trimEnd().split('\n').at(-1)).toBe(
        `Budget: 0.60 spent + 0.00 reserved of 1.00 EUR a month (60.0%), 0.40 left, resets ${next} 00:00 UTC.`,
      );
    });

    it('--json prints the report as the API answers it; --group-by and --start narrow it', async () => {
      const run = await cli(['usage', '--json', '--group-by', 'model', '--start', today, '--end', today]);
      expect(run.code, run.stderr).toBe(0);
      const report = JSON.parse(run.stdout) as UsageReport;
      const start = Date.parse(`${today}T00:00:00Z`) / 1000;
      expect(report).toMatchObject({ object: 'usage', currency: 'EUR', start, end: start + 86_400, totals: { tasks: 3, cost: 0.82 } });
      expect(report.data.map((row) => [row.model, row.day])).toEqual([
        [T2V, null],
        [IMAGE, null],
      ]);
      // The light package's bin has the command too.
      const light = await cli(['usage', '--group-by', 'day'], {}, 'dist/cli/client-commands/bin.js');
      expect(light.code, light.stderr).toBe(0);
      expect(light.stdout).toMatch(new RegExp(`^DAY\\s+TASKS\\s+SECONDS\\s+IMAGES\\s+COST\\n${today}\\s+3\\s+6\\s+1\\s+0\\.82\\nTOTAL`, 'm'));
    });

    it('exits 2 on a bad flag, and 8 when a create does not fit the budget', async () => {
      const bad = await cli(['usage', '--group-by', 'key']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/--group-by.*one or more of model, day/);
      const over = await cli(['video', 'create', '--model', T2V, '--prompt', 'too much', '--duration', '5'], { MEDIAGATE_API_KEY: server.keys[1] });
      expect(over.code, over.stdout + over.stderr).toBe(8);
      expect(over.stderr).toMatch(/budget cannot hold this task \(HTTP 402\)[\s\S]*code:\s+budget_exceeded/);
    });
  });

  describe('mediagate admin', () => {
    it('creates a key (printed once), lists, shows, changes, disables and revokes it, as its holder sees it', async () => {
      const created = await cli([
        'admin',
        'keys',
        'create',
        'team a',
        '--budget',
        '0.5',
        '--period',
        'day',
        '--models',
        'vendora/famw-*',
        '--rate-limit',
        '30',
      ]);
      expect(created.code, created.stderr).toBe(0);
      const key = created.stdout.trim();
      expect(key).toMatch(/^mg_\S+$/);
      expect(created.stderr).toMatch(/^id\s+key_\w+\nname\s+team a\nstatus\s+active\nbudget\s+0\.50 a day\n/);
      expect(created.stderr).toMatch(/models\s+vendora\/famw-\*\n/);
      const id = /^id\s+(\S+)/.exec(created.stderr)?.[1] ?? '';
      const holder = new Mediagate({ baseURL: server.url, apiKey: key, maxRetries: 0 });
      expect((await holder.models.list()).every((model) => model.id.startsWith('vendora/famw-'))).toBe(true);

      const list = await cli(['admin', 'keys', 'list']);
      expect(list.code, list.stderr).toBe(0);
      const rows = list.stdout.trimEnd().split('\n');
      expect(rows[0]).toMatch(/^ID\s+NAME\s+STATUS\s+MODELS\s+BUDGET\s+SPENT\s+RESERVED$/);
      expect(rows[1]).toMatch(new RegExp(`^${id}\\s+team a\\s+active\\s+vendora/famw-\\*\\s+0\\.50 a day\\s+0\\.00\\s+0\\.00$`));
      expect(rows.some((row) => row.startsWith(envKeyId(server.keys[1])) && /1\.00 a month\s+0\.60\s+0\.00$/.test(row))).toBe(true);

      const set = await cli(['admin', 'keys', 'set', id, '--budget', 'none', '--models', 'all', '--max-in-flight', '3', '--disable', '--json']);
      expect(set.code, set.stderr).toBe(0);
      expect(JSON.parse(set.stdout)).toMatchObject({ id, budget: null, models: null, max_tasks_in_flight: 3, rate_limit_per_min: 30, disabled: true });
      await eventually(
        async () =>
          (await holder.models.list().then(
            () => 200,
            (error: { status?: number }) => error.status,
          )) === 401,
        {
          what: 'the disabled key to be refused',
        },
      );

      const shown = await cli(['admin', 'keys', 'show', id]);
      expect(shown.stdout).toMatch(/status\s+disabled\nbudget\s+none\n[\s\S]*models\s+all\nrate\s+30 creates a minute\nin flight\s+3 tasks at once\n/);
      const revoked = await cli(['admin', 'keys', 'revoke', id]);
      expect(revoked).toMatchObject({ code: 0, stdout: `Revoked ${id}.\n` });
      const gone = await cli(['admin', 'keys', 'show', id, '--json']);
      expect(gone.code).toBe(6);
      expect(JSON.parse(gone.stdout)).toEqual({
        error: { kind: 'not_found', status: 404, code: 'key_not_found', param: 'id', message: expect.any(String), request_id: expect.any(String) },
      });
      const nothing = await cli(['admin', 'keys', 'set', envKeyId(server.keys[0])]);
      expect(nothing.code).toBe(2);
      expect(nothing.stderr).toMatch(/nothing to change/);
    });

    it('prints usage across keys with a KEY column, by key alone, or for one key (--json)', async () => {
      const run = await cli(['admin', 'usage', '--group-by', 'key']);
      expect(run.code, run.stderr).toBe(0);
      const lines = run.stdout.trimEnd().split('\n');
      expect(lines[2]).toMatch(/^KEY\s+TASKS\s+SECONDS\s+IMAGES\s+COST$/);
      expect(lines).toEqual(
        expect.arrayContaining([
          expect.stringMatching(new RegExp(`^${envKeyId(server.keys[0])}\\s+3\\s+6\\s+1\\s+0\\.82$`)),
          expect.stringMatching(new RegExp(`^${envKeyId(server.keys[1])}\\s+1\\s+5\\s+0\\s+0\\.60$`)),
          expect.stringMatching(/^TOTAL\s+4\s+11\s+1\s+1\.42$/),
        ]),
      );
      const one = await cli(['admin', 'usage', '--key', envKeyId(server.keys[1]), '--json']);
      expect(one.code, one.stderr).toBe(0);
      expect(JSON.parse(one.stdout)).toMatchObject({
        totals: { tasks: 1, cost: 0.6 },
        data: [{ key_id: envKeyId(server.keys[1]), model: T2V, day: today, tasks: 1, seconds: 5, images: 0, cost: 0.6 }],
      });
    });

    it('exits 4 with a client key (403 admin_key_required) or no admin key at all', async () => {
      const client = await cli(['admin', 'keys', 'list', '--admin-key', server.keys[0]]);
      expect(client.code).toBe(4);
      expect(client.stderr).toMatch(/HTTP 403[\s\S]*code:\s+admin_key_required/);
      const none = await cli(['admin', 'usage'], { MEDIAGATE_ADMIN_KEY: undefined });
      expect(none.code).toBe(4);
      expect(none.stderr).toMatch(/no admin key: pass --admin-key or set MEDIAGATE_ADMIN_KEY/);
      const keys = (await cli(['admin', 'keys', 'list', '--all', '--json'])).stdout;
      expect((JSON.parse(keys) as AdminKey[]).map((key) => key.id)).not.toContain(envKeyId(ADMIN_KEY));
    });
  });
});
