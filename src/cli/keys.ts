/**
 * `mediagate keys create|list|revoke`: managed API keys. A key is printed once, at creation;
 * the store keeps only its SHA-256 hash. The commands open the same store as the server (the
 * same configuration variables), so they work beside a running service.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { pino } from 'pino';
import { KeyRegistry, generateKey } from '../auth/api-keys.js';
import type { KeyStore, Store } from '../store/store.js';

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
}

/** Creates a key; the returned `key` is the only copy there will ever be. */
export async function createKey(store: KeyStore, name: string): Promise<CreatedKey> {
  const key = generateKey();
  const id = await new KeyRegistry({ store, configured: [] }).create(key, name);
  return { id, name, key };
}

const NAME = /^[\x20-\x7e]{1,100}$/;

export function registerKeyCommands(program: Command): void {
  const keys = program.command('keys').description('manage API keys (stored as hashes; a key is shown only when created)');

  keys
    .command('create')
    .description('create an API key and print it once')
    .option('--name <name>', 'a label for the key (who or what uses it)', 'cli')
    .option('--json', 'print {id, name, key} as JSON')
    .action(async (options: { name: string; json?: boolean }) => {
      if (!NAME.test(options.name)) throw new Error('--name must be 1-100 printable ASCII characters');
      const created = await withStore((store) => createKey(store, options.name));
      if (options.json) {
        process.stdout.write(`${JSON.stringify(created)}\n`);
        return;
      }
      process.stdout.write(
        `Created API key ${created.id} (${created.name}). It is shown only this once; keep it:\n\n  ${created.key}\n\n` +
          `Use it as: Authorization: Bearer <key>. Revoke it with: mediagate keys revoke ${created.id}\n`,
      );
    });

  keys
    .command('list')
    .description('list API keys (ids, names and dates; never the keys)')
    .option('--json', 'print a JSON array')
    .action(async (options: { json?: boolean }) => {
      const rows = await withStore((store) => store.listKeys(), true);
      if (options.json) {
        process.stdout.write(`${JSON.stringify(rows)}\n`);
        return;
      }
      const lines = rows.map((row) => [row.id, row.revokedAt === null ? 'active' : `revoked ${when(row.revokedAt)}`, when(row.createdAt), row.name]);
      process.stdout.write(`${formatTable([['id', 'status', 'created', 'name'], ...lines])}\n`);
    });

  keys
    .command('revoke')
    .description(
      'revoke an API key by id; a running server stops accepting it within 5 s (a key from MEDIAGATE_API_KEYS comes back at the next start: remove it from the variable)',
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
