/**
 * `mediagate keys create --admin|set|show|list` with settings, on SQLite and PostgreSQL: the
 * commands write the store a running server reads, with the admin API's checks.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, postgresAvailability, selectedBackends, type TestDatabase } from './helpers/postgres.js';
import { startServer } from './helpers/server.js';
import { CLI } from './helpers/process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);
const backends = [
  ...(selectedBackends().includes('sqlite') ? ['sqlite' as const] : []),
  ...((await postgresAvailability()).enabled ? ['postgres' as const] : []),
];

interface Ran {
  stdout: string;
  stderr: string;
  code: number;
}

for (const backend of backends) {
  describe(`mediagate keys with settings on ${backend}`, () => {
    let dataDir: string;
    let database: TestDatabase | undefined;
    const env = (): Record<string, string> => ({ MEDIAGATE_DATA_DIR: dataDir, MEDIAGATE_API_KEYS: '', ...(database ? { DATABASE_URL: database.url } : {}) });
    const cli = async (args: readonly string[]): Promise<Ran> => {
      try {
        const { stdout, stderr } = await run(process.execPath, [CLI, 'keys', ...args], {
          cwd: ROOT,
          env: { ...process.env, DATABASE_URL: '', ...env() },
        });
        return { stdout, stderr, code: 0 };
      } catch (error) {
        const failed = error as Ran;
        return { stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
      }
    };

    beforeAll(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'mediagate-keys-admin-'));
      database = backend === 'postgres' ? await createTestDatabase() : undefined;
    });
    afterAll(async () => {
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    });

    it('create --admin and a client key with settings; show, set, list; the server obeys them', async () => {
      const adminRun = await cli(['create', '--admin', '--name', 'ops', '--json']);
      expect(adminRun.code, adminRun.stderr).toBe(0);
      const adminKey = JSON.parse(adminRun.stdout) as { id: string; key: string; role: string };
      expect(adminKey.role).toBe('admin');

      const made = await cli([
        'create',
        '--name',
        'team',
        '--budget',
        '50',
        '--period',
        'month',
        '--models',
        'vendora/*, vendorb/*',
        '--rate-limit',
        '100',
        '--max-in-flight',
        '5',
        '--json',
      ]);
      expect(made.code, made.stderr).toBe(0);
      const client = JSON.parse(made.stdout) as { id: string; key: string; role: string };
      expect(client.role).toBe('client');

      const shown = await cli(['show', client.id, '--json']);
      expect(JSON.parse(shown.stdout)).toMatchObject({
        id: client.id,
        role: 'client',
        name: 'team',
        budget: 50_000_000,
        budgetPeriod: 'month',
        models: ['vendora/*', 'vendorb/*'],
        rateLimitPerMin: 100,
        maxTasksInFlight: 5,
        disabled: false,
        spent: 0,
        reserved: 0,
      });
      const human = await cli(['show', client.id]);
      expect(human.stdout).toMatch(/budget\s+50 per month/);
      expect(human.stdout).toMatch(/spent this month\s+0/);
      expect(human.stdout).toMatch(/models\s+vendora\/\*, vendorb\/\*/);

      const set = await cli(['set', client.id, '--disable', '--budget', 'None', '--models', 'all', '--rate-limit', 'default', '--json']);
      expect(set.code, set.stderr).toBe(0);
      expect(JSON.parse(set.stdout)).toMatchObject({ disabled: true, budget: null, models: null, rateLimitPerMin: null, maxTasksInFlight: 5 });

      const listed = await cli(['list']);
      expect(listed.code).toBe(0);
      const lines = listed.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^id\s+role\s+status\s+created\s+name$/);
      expect(lines.find((line) => line.startsWith(adminKey.id))).toMatch(/ admin +active .* ops$/);
      expect(lines.find((line) => line.startsWith(client.id))).toMatch(/ client +disabled .* team$/);

      const server = await startServer({ ...env(), MEDIAGATE_WORKERS: 'false' });
      try {
        const get = await fetch(`${server.url}/v1/admin/keys/${client.id}`, { headers: { authorization: `Bearer ${adminKey.key}` } });
        expect(get.status).toBe(200);
        expect(await get.json()).toMatchObject({ id: client.id, name: 'team', disabled: true, max_tasks_in_flight: 5 });
        const refused = await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${client.key}` } });
        expect(refused.status, 'a disabled key').toBe(401);
      } finally {
        await server.close();
      }
    }, 120_000);

    it('refuses bad settings with the flag at fault, and an unknown id', async () => {
      const cases: [readonly string[], RegExp][] = [
        [['create', '--name', 'n'.repeat(201)], /--name: .*at most 200/],
        [['create', '--budget', '-1'], /--budget: /],
        [['create', '--budget', 'lots'], /--budget must be a number/],
        [['create', '--period', 'week'], /--period: /],
        [['create', '--models', 'vendorz/*'], /--models: .*matches no model/],
        [['create', '--rate-limit', '1.5'], /--rate-limit: /],
        [['create', '--admin', '--budget', '5'], /admin key takes only --name/],
        [['set', 'key_ffffffffffffffff', '--enable'], /no active key with id 'key_ffffffffffffffff'/],
        [['set', 'key_ffffffffffffffff'], /nothing to change/],
        [['show', 'key_ffffffffffffffff'], /no key with id/],
      ];
      for (const [args, message] of cases) {
        const ran = await cli(args);
        expect(ran.code, args.join(' ')).toBe(1);
        expect(ran.stderr, args.join(' ')).toMatch(message);
      }
    }, 120_000);
  });
}
