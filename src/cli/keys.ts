/**
 * `mediagate keys create|set|show|list|revoke`: managed API keys and their settings (docs/admin.md). A key is printed once, at creation;
 * the store keeps only its SHA-256 hash. The commands open the same store as the server (the
 * same configuration variables), so they work beside a running service.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { pino } from 'pino';
import { KeyRegistry, generateKey } from '../auth/api-keys.js';
import { adminKeyPatchFault, parseKeyBody } from '../auth/key-settings.js';
import { clears } from './client-commands/admin.js';
import { amountText } from '../billing/index.js';
import { ApiError } from '../errors.js';
import type { ApiKeyRecord, KeyPatch, KeyRole, KeySettings, KeyStore, Store } from '../store/store.js';

/**
 * Runs `run` on the store the server opens for this configuration (SQLite or DATABASE_URL),
 * migrated. `existing`: read only a store that is already there (a listing creates nothing),
 * and say on stderr which one was read.
 */
export async function withStore<T>(run: (store: Store) => Promise<T>, existing = false): Promise<T> {
  const { openBackendFor } = await import('../service-factory.js');
  const { readConfig } = await import('./serve.js');
  const config = readConfig();
  if (existing) {
    const sqlitePath = join(config.dataDir, 'mediagate.db');
    if (!config.databaseUrl && !existsSync(sqlitePath)) {
      throw new CliError(
        `no key store at ${sqlitePath} (SQLite in MEDIAGATE_DATA_DIR, default ./data): set MEDIAGATE_DATA_DIR to the server's data directory, or DATABASE_URL`,
      );
    }
    // Never the URL itself: it may hold a password.
    process.stderr.write(`store: ${config.databaseUrl ? 'PostgreSQL at DATABASE_URL' : `SQLite ${sqlitePath}`}\n`);
  }
  const backend = openBackendFor(config, pino({ level: 'warn' }, pino.destination(2)));
  try {
    await backend.migrate();
    return await run(backend.store);
  } finally {
    await backend.close();
  }
}

/** A failure the command states in one line (main.ts prints it without a stack). */
export class CliError extends Error {
  override readonly name = 'CliError';
}

/** Columns padded to their widest cell, so a longer status ("revoked <date>") keeps them aligned. */
export function formatTable(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')).join('\n');
}

const when = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

export interface CreatedKey {
  readonly id: string;
  readonly name: string;
  readonly key: string;
  readonly role: KeyRole;
}

/** Creates a key; the returned `key` is the only copy there will ever be. */
export async function createKey(store: KeyStore, name: string, options: { role?: KeyRole; settings?: Partial<KeySettings> } = {}): Promise<CreatedKey> {
  const key = generateKey();
  const role = options.role ?? 'client';
  const id = await new KeyRegistry({ store, configured: [] }).create(key, name, { role, ...(options.settings ? { settings: options.settings } : {}) });
  return { id, name, key, role };
}

/** The settings flags of `keys create` and `keys set`, as commander gives them. */
interface SettingsFlags {
  name?: string;
  budget?: string;
  period?: string;
  models?: string;
  rateLimit?: string;
  maxInFlight?: string;
  disable?: boolean;
  enable?: boolean;
}

/** Which flag sets which field of the admin API's body (for messages). */
const FLAG_OF: Readonly<Record<string, string>> = {
  name: '--name',
  budget: '--budget',
  budget_period: '--period',
  models: '--models',
  rate_limit_per_min: '--rate-limit',
  max_tasks_in_flight: '--max-in-flight',
  disabled: '--disable/--enable',
};

/** A number as typed on the command line, kept as text's number so that the API's checks see what was typed. */
function numberFlag(flag: string, text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) throw new CliError(`${flag} must be a number; got '${text.slice(0, 50)}'`);
  return value;
}

/**
 * The flags as the admin API's body, checked by the same rules (auth/key-settings.ts): a CLI
 * key and an API key can hold exactly the same settings. `none`, `lifetime`, `all` and
 * `default` clear a setting.
 */
function settingsOf(flags: SettingsFlags, mode: 'create' | 'patch'): KeyPatch {
  const body: Record<string, unknown> = {};
  if (flags.name !== undefined) body['name'] = flags.name;
  if (flags.budget !== undefined) body['budget'] = clears(flags.budget, 'none') ? null : numberFlag('--budget', flags.budget);
  if (flags.period !== undefined) body['budget_period'] = clears(flags.period, 'lifetime') ? null : flags.period.trim().toLowerCase();
  if (flags.models !== undefined) {
    body['models'] = clears(flags.models, 'all')
      ? null
      : flags.models
          .split(',')
          .map((item) => item.trim())
          .filter((item) => item !== '');
  }
  if (flags.rateLimit !== undefined) body['rate_limit_per_min'] = clears(flags.rateLimit, 'default') ? null : numberFlag('--rate-limit', flags.rateLimit);
  if (flags.maxInFlight !== undefined)
    body['max_tasks_in_flight'] = clears(flags.maxInFlight, 'default') ? null : numberFlag('--max-in-flight', flags.maxInFlight);
  if (flags.disable && flags.enable) throw new CliError('--disable and --enable exclude each other');
  if (mode === 'patch' && (flags.disable || flags.enable)) body['disabled'] = flags.disable === true;
  const parsed = mode === 'create' ? parseKeyBody({ name: 'cli', ...body }, 'create') : parseKeyBody(body, 'patch');
  if (parsed instanceof ApiError) throw new CliError(`${FLAG_OF[parsed.param] ?? parsed.param}: ${parsed.message}`);
  return parsed;
}

function addSettingsOptions(command: Command): Command {
  return command
    .option('--budget <amount>', 'budget in the pricing currency, at most 6 decimals (`none`: no budget)')
    .option('--period <period>', 'budget period: day, month or lifetime (UTC calendar days/months)')
    .option('--models <list>', "comma-separated model ids or prefixes ending in '*' (`all`: every model)")
    .option('--rate-limit <n>', 'requests per minute for this key (`default`: MEDIAGATE_RATE_LIMIT_PER_MIN)')
    .option('--max-in-flight <n>', 'queued + processing tasks for this key (`default`: MEDIAGATE_MAX_TASKS_IN_FLIGHT)');
}

const amount = (micro: number | null): string => (micro === null ? 'none' : amountText(micro));

function status(key: ApiKeyRecord): string {
  if (key.revokedAt !== null) return `revoked ${when(key.revokedAt)}`;
  return key.disabled ? 'disabled' : 'active';
}

/** `keys show`: every setting, and what the key spent and holds in its current budget period. */
function describeKey(key: ApiKeyRecord): string {
  const rows: string[][] = [
    ['id', key.id],
    ['role', key.role],
    ['name', key.name],
    ['status', status(key)],
    ['created', when(key.createdAt)],
  ];
  if (key.role === 'client') {
    rows.push(
      ['budget', key.budget === null ? 'none' : `${amount(key.budget)} per ${key.budgetPeriod ?? 'lifetime'}`],
      [key.budgetPeriod === null ? 'spent' : `spent this ${key.budgetPeriod}`, amountText(key.spent)],
      ['reserved', amountText(key.reserved)],
      ['models', key.models === null ? 'all' : key.models.join(', ')],
      ['rate limit', key.rateLimitPerMin === null ? 'default' : `${key.rateLimitPerMin}/min`],
      ['max in flight', key.maxTasksInFlight === null ? 'default' : String(key.maxTasksInFlight)],
    );
  }
  return formatTable(rows);
}

export function registerKeyCommands(program: Command): void {
  const keys = program.command('keys').description('manage API keys (stored as hashes; a key is shown only when created)');

  addSettingsOptions(
    keys
      .command('create')
      .description('create an API key and print it once')
      .option('--name <name>', 'a label for the key (who or what uses it)', 'cli')
      .option('--admin', 'an admin key: it authorizes /v1/admin/* and nothing else'),
  )
    .option('--json', 'print {id, name, key, role} as JSON')
    .action(async (options: SettingsFlags & { name: string; admin?: boolean; json?: boolean }) => {
      const settings = settingsOf(options, 'create');
      const role: KeyRole = options.admin ? 'admin' : 'client';
      if (role === 'admin' && Object.keys(settings).some((field) => field !== 'name')) {
        throw new CliError('budgets, models and limits apply to client keys; an admin key takes only --name');
      }
      const created = await withStore((store) => createKey(store, options.name, { role, settings }));
      if (options.json) {
        process.stdout.write(`${JSON.stringify(created)}\n`);
        return;
      }
      process.stdout.write(
        `Created ${role === 'admin' ? 'admin key' : 'API key'} ${created.id} (${created.name}). It is shown only this once; keep it:\n\n  ${created.key}\n\n` +
          `Use it as: Authorization: Bearer <key>. Revoke it with: mediagate keys revoke ${created.id}\n`,
      );
    });

  addSettingsOptions(
    keys
      .command('set')
      .description("change a key's settings (a running server applies them within 5 s)")
      .argument('<id>', 'the key id shown by `keys create` or `keys list`')
      .option('--name <name>', 'a new label'),
  )
    .option('--disable', 'refuse the key (401) until --enable; survives restarts, MEDIAGATE_API_KEYS keys included')
    .option('--enable', 'accept a disabled key again')
    .option('--json', 'print the key as JSON')
    .action(async (id: string, options: SettingsFlags & { json?: boolean }) => {
      const patch = settingsOf(options, 'patch');
      if (Object.keys(patch).length === 0) throw new CliError('nothing to change: give at least one setting (see --help)');
      const key = await withStore(async (store) => {
        const now = Date.now();
        // The admin API's rule: an admin key takes no client-only setting (it would throttle the admin API unseen).
        const fault = (await store.getKey(id, now))?.role === 'admin' ? adminKeyPatchFault(patch) : undefined;
        if (fault) throw new CliError(`${id.slice(0, 64)} is an admin key: ${fault.message}`);
        return (await store.updateKey(id, patch, now)) ? store.getKey(id, now) : undefined;
      }, true);
      if (key === undefined) {
        process.stderr.write(`mediagate: no active key with id '${id.slice(0, 64)}'\n`);
        process.exitCode = 1;
        return;
      }
      process.stdout.write(options.json ? `${JSON.stringify(key)}\n` : `${describeKey(key)}\n`);
    });

  keys
    .command('show')
    .description("a key's settings, and what it spent and holds in its current budget period")
    .argument('<id>', 'the key id shown by `keys create` or `keys list`')
    .option('--json', 'print the key as JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      const key = await withStore((store) => store.getKey(id, Date.now()), true);
      if (key === undefined) {
        process.stderr.write(`mediagate: no key with id '${id.slice(0, 64)}'\n`);
        process.exitCode = 1;
        return;
      }
      process.stdout.write(options.json ? `${JSON.stringify(key)}\n` : `${describeKey(key)}\n`);
    });

  keys
    .command('list')
    .description('list API keys (ids, roles, status, dates and names; never the keys)')
    .option('--json', 'print a JSON array')
    .action(async (options: { json?: boolean }) => {
      const rows = await withStore((store) => store.listKeys(Date.now()), true);
      if (options.json) {
        process.stdout.write(`${JSON.stringify(rows)}\n`);
        return;
      }
      const lines = rows.map((row) => [row.id, row.role, status(row), when(row.createdAt), row.name]);
      process.stdout.write(`${formatTable([['id', 'role', 'status', 'created', 'name'], ...lines])}\n`);
    });

  keys
    .command('revoke')
    .description(
      'revoke an API key by id; a running server stops accepting it at once on PostgreSQL, within 5 s on SQLite (a key from MEDIAGATE_API_KEYS or MEDIAGATE_ADMIN_KEYS comes back at the next start: remove it from the variable, or use `keys set <id> --disable`)',
    )
    .argument('<id>', 'the key id shown by `keys create` or `keys list`')
    .action(async (id: string) => {
      const revoked = await withStore((store) => store.revokeKey(id, Date.now()));
      if (!revoked) {
        process.stderr.write(`mediagate: no active key with id '${id.slice(0, 64)}'\n`);
        process.exitCode = 1;
        return;
      }
      process.stdout.write(`Revoked ${id}.\n`);
    });
}
