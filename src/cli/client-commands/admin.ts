import { InvalidArgumentError, type Command } from 'commander';
import type { AdminKey, AdminKeyCreateParams, AdminKeyUpdateParams, AdminUsageDimension, MediagateAdmin } from '../../client/index.js';
import { action, addAdminConnectionOptions, makeAdminClient, positiveIntegerArg, usageError, usageExit, type AdminConnectionFlags } from './context.js';
import { alignedTable, amount, formatUsage, groupByArg, timeArg } from './usage.js';

/**
 * `mediagate admin keys list|create|show|set|revoke` and `mediagate admin usage`: key
 * administration over HTTP (`/v1/admin/*`) with an admin key, through the SDK's MediagateAdmin.
 * They work from anywhere the service is reachable; the `mediagate keys` commands, by contrast,
 * open the service's store directly.
 */

interface KeyFlags extends AdminConnectionFlags {
  readonly name?: string;
  readonly budget?: number | 'none';
  readonly period?: 'day' | 'month' | 'lifetime';
  readonly models?: string[] | 'all';
  readonly rateLimit?: number | 'default';
  readonly maxInFlight?: number | 'default';
  readonly disable?: boolean;
  readonly enable?: boolean;
  readonly limit?: number;
  readonly all?: boolean;
  readonly json?: boolean;
}

interface AdminUsageFlags extends AdminConnectionFlags {
  readonly start?: number;
  readonly end?: number;
  readonly groupBy?: string;
  readonly key?: string;
  readonly json?: boolean;
}

// Commander stores an option whose parser returns null as '': a setting cleared is a word
// here ('none', 'lifetime', 'all', 'default'), and null only in the request.

/** Whether a flag's text is the word that clears its setting, as typed (any case, spaces around): `mediagate keys` reads them the same way. */
export const clears = (value: string, word: 'none' | 'lifetime' | 'all' | 'default'): boolean => value.trim().toLowerCase() === word;

/** An amount (at most 6 decimals), or `none` for no budget. */
function budgetArg(value: string): number | 'none' {
  if (clears(value, 'none')) return 'none';
  const number = Number(value);
  if (value.trim() === '' || !Number.isFinite(number) || number < 0) throw new InvalidArgumentError('an amount (e.g. 25 or 12.5), or none.');
  return number;
}

function periodArg(value: string): 'day' | 'month' | 'lifetime' {
  const word = value.trim().toLowerCase();
  if (word === 'day' || word === 'month' || word === 'lifetime') return word;
  throw new InvalidArgumentError('day, month or lifetime.');
}

/** Comma-separated model ids or prefixes ending in `*`, or `all`. */
function modelsArg(value: string): string[] | 'all' {
  if (clears(value, 'all')) return 'all';
  const models = value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  if (models.length === 0) throw new InvalidArgumentError('model ids or prefixes ending in * (vendora/*), comma-separated, or all.');
  return models;
}

/** A positive whole number, or `default` (the server's setting). */
function limitArg(value: string): number | 'default' {
  return clears(value, 'default') ? 'default' : positiveIntegerArg(value);
}

/** The flags a create or a change sends; only those given. */
function settings(flags: KeyFlags): Omit<AdminKeyUpdateParams, 'disabled'> {
  return {
    ...(flags.name !== undefined ? { name: flags.name } : {}),
    ...(flags.budget !== undefined ? { budget: flags.budget === 'none' ? null : flags.budget } : {}),
    ...(flags.period !== undefined ? { budget_period: flags.period === 'lifetime' ? null : flags.period } : {}),
    ...(flags.models !== undefined ? { models: flags.models === 'all' ? null : flags.models } : {}),
    ...(flags.rateLimit !== undefined ? { rate_limit_per_min: flags.rateLimit === 'default' ? null : flags.rateLimit } : {}),
    ...(flags.maxInFlight !== undefined ? { max_tasks_in_flight: flags.maxInFlight === 'default' ? null : flags.maxInFlight } : {}),
  };
}

const day = (seconds: number): string => new Date(seconds * 1000).toISOString().slice(0, 10);

function budgetText(key: AdminKey): string {
  if (key.budget === null) return 'none';
  return `${amount(key.budget)} ${key.budget_period === null ? 'in all' : `a ${key.budget_period}`}`;
}

const limitText = (value: number | null, unit: string): string => (value === null ? 'server default' : `${value}${unit}`);

/** One key, a field a line. */
export function formatKey(key: AdminKey): string {
  const rows: [string, string][] = [
    ['id', key.id],
    ['name', key.name],
    ['status', key.disabled ? 'disabled' : 'active'],
    ['budget', budgetText(key)],
    ['spent', `${amount(key.spent)} ${key.budget_period === 'day' ? 'today (UTC)' : key.budget_period === 'month' ? 'this month (UTC)' : 'in all'}`],
    ['reserved', `${amount(key.reserved)} (tasks not finished yet)`],
    ['models', key.models === null ? 'all' : key.models.join(', ')],
    ['rate', limitText(key.rate_limit_per_min, ' creates a minute')],
    ['in flight', limitText(key.max_tasks_in_flight, ' tasks at once')],
    ['created', day(key.created_at)],
  ];
  return rows.map(([name, value]) => `${name.padEnd(10)} ${value}`).join('\n');
}

export function formatKeyTable(keys: readonly AdminKey[]): string {
  const rows = [
    ['ID', 'NAME', 'STATUS', 'MODELS', 'BUDGET', 'SPENT', 'RESERVED'],
    ...keys.map((key) => [
      key.id,
      key.name,
      key.disabled ? 'disabled' : 'active',
      key.models === null ? 'all' : key.models.join(','),
      budgetText(key),
      amount(key.spent),
      amount(key.reserved),
    ]),
  ];
  return alignedTable(rows, 5);
}

async function listKeys(admin: MediagateAdmin, flags: KeyFlags): Promise<AdminKey[]> {
  const wanted = flags.all ? Number.POSITIVE_INFINITY : (flags.limit ?? 20);
  const keys: AdminKey[] = [];
  for await (const key of await admin.keys.list({ limit: Math.min(100, wanted) })) {
    keys.push(key);
    if (keys.length >= wanted) break;
  }
  return keys;
}

const print = (flags: { json?: boolean }, value: unknown, text: string): void => {
  process.stdout.write(flags.json ? `${JSON.stringify(value, null, 2)}\n` : `${text}\n`);
};

function settingOptions(command: Command): Command {
  return command
    .option('--budget <amount>', 'a budget in the pricing file’s currency, or none', budgetArg)
    .option('--period <period>', 'day or month (UTC calendar), or lifetime', periodArg)
    .option('--models <list>', 'model ids or prefixes ending in * (vendora/*), comma-separated, or all', modelsArg)
    .option('--rate-limit <n>', 'creates a minute, or default (the server’s setting)', limitArg)
    .option('--max-in-flight <n>', 'tasks queued or running at once, or default', limitArg);
}

/** `mediagate admin keys ...` and `mediagate admin usage` */
export function registerAdminCommands(program: Command): void {
  const admin = program.command('admin').description('administer a service over HTTP with an admin key: client keys and usage across keys');
  admin.exitOverride(usageExit);
  const keys = admin.command('keys').description('client keys: create, list, show, change, disable, revoke');
  keys.exitOverride(usageExit);

  addAdminConnectionOptions(keys.command('list').description('list the client keys, newest first, with their budgets and spending'))
    .option('--limit <n>', 'how many (default 20)', positiveIntegerArg)
    .option('--all', 'every key, page after page')
    .option('--json', 'print the keys as a JSON array')
    .exitOverride(usageExit)
    .action(
      action(async (flags: KeyFlags) => {
        const list = await listKeys(makeAdminClient(flags), flags);
        print(flags, list, list.length === 0 ? 'No keys.' : formatKeyTable(list));
      }),
    );

  settingOptions(addAdminConnectionOptions(keys.command('create').argument('<name>', 'who the key is for').description('make a client key; prints it once')))
    .option('--json', 'print the key object, with the key, as JSON')
    .exitOverride(usageExit)
    .action(
      action(async (name: string, flags: KeyFlags) => {
        const params: AdminKeyCreateParams = { ...settings(flags), name };
        const created = await makeAdminClient(flags).keys.create(params);
        if (flags.json) {
          process.stdout.write(`${JSON.stringify(created, null, 2)}\n`);
          return;
        }
        process.stdout.write(`${created.key}\n`);
        process.stderr.write(`${formatKey(created)}\n\nThe line above is the key, shown only now: hand it over and keep no copy here.\n`);
      }),
    );

  addAdminConnectionOptions(keys.command('show').argument('<id>', 'key id').description('show a key, with what it spent and holds reserved this period'))
    .option('--json', 'print the key as JSON')
    .exitOverride(usageExit)
    .action(
      action(async (id: string, flags: KeyFlags) => {
        const key = await makeAdminClient(flags).keys.retrieve(id);
        print(flags, key, formatKey(key));
      }),
    );

  settingOptions(addAdminConnectionOptions(keys.command('set').argument('<id>', 'key id').description('change a key (every process applies it within 5 s)')))
    .option('--name <name>', 'a new name')
    .option('--disable', 'refuse the key (401) until enabled again')
    .option('--enable', 'accept the key again')
    .option('--json', 'print the key as JSON')
    .exitOverride(usageExit)
    .action(
      action(async (id: string, flags: KeyFlags) => {
        if (flags.disable && flags.enable) throw usageError('mediagate: --disable and --enable exclude each other.');
        const params: AdminKeyUpdateParams = {
          ...settings(flags),
          ...(flags.disable ? { disabled: true } : {}),
          ...(flags.enable ? { disabled: false } : {}),
        };
        if (Object.keys(params).length === 0)
          throw usageError('mediagate: nothing to change: pass --budget, --period, --models, --rate-limit, --max-in-flight, --name, --disable or --enable.');
        const key = await makeAdminClient(flags).keys.update(id, params);
        print(flags, key, formatKey(key));
      }),
    );

  addAdminConnectionOptions(keys.command('revoke').argument('<id>', 'key id').description('revoke a key for good (refused everywhere within 5 s)'))
    .option('--json', 'print {"id", "revoked": true}')
    .exitOverride(usageExit)
    .action(
      action(async (id: string, flags: KeyFlags) => {
        await makeAdminClient(flags).keys.delete(id);
        print(flags, { id, revoked: true }, `Revoked ${id}.`);
      }),
    );

  addAdminConnectionOptions(admin.command('usage').description('usage across keys: finished tasks by key, model and day, and their cost'))
    .option('--start <time>', 'from this UTC day (YYYY-MM-DD), ISO date-time or unix seconds (default: 30 days ago)', timeArg(false))
    .option('--end <time>', 'through this UTC day (YYYY-MM-DD), or until this date-time or unix seconds (default: today)', timeArg(true))
    .option('--group-by <dims>', 'key, model, day, or several comma-separated (default key,model,day)', groupByArg(['key', 'model', 'day']))
    .option('--key <id>', 'only this key')
    .option('--json', 'print the report as the API answers it')
    .exitOverride(usageExit)
    .action(
      action(async (flags: AdminUsageFlags) => {
        const report = await makeAdminClient(flags).usage.retrieve({
          ...(flags.start !== undefined ? { start: flags.start } : {}),
          ...(flags.end !== undefined ? { end: flags.end } : {}),
          ...(flags.groupBy !== undefined ? { groupBy: flags.groupBy.split(',') as AdminUsageDimension[] } : {}),
          ...(flags.key !== undefined ? { keyId: flags.key } : {}),
        });
        print(flags, report, formatUsage(report, true));
      }),
    );
}
