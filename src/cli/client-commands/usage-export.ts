import { createWriteStream } from 'node:fs';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { InvalidArgumentError, type Command } from 'commander';
import { action, addAdminConnectionOptions, CliError, EXIT, makeAdminClient, usageError, usageExit, type AdminConnectionFlags } from './context.js';

/**
 * `mediagate usage export --format focus --from YYYY-MM-DD --to YYYY-MM-DD [--output file]`:
 * the spend export (`GET /v1/admin/usage/export`) with an admin key, streamed to the file or to
 * stdout as the server sends it, byte for byte.
 */

interface ExportFlags extends AdminConnectionFlags {
  readonly format: string;
  readonly from: string;
  readonly to: string;
  readonly output?: string;
}

function dayArg(value: string): string {
  const text = value.trim();
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(text) ? Date.parse(`${text}T00:00:00Z`) : NaN;
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== text) throw new InvalidArgumentError('a UTC day as YYYY-MM-DD.');
  return text;
}

function formatArg(value: string): string {
  if (value.trim().toLowerCase() !== 'focus') throw new InvalidArgumentError('only focus (the FinOps FOCUS CSV).');
  return 'focus';
}

/** Adds `export` under the `usage` command. */
export function registerUsageExportCommand(usage: Command): void {
  addAdminConnectionOptions(usage.command('export').description('export every key’s spend by model and UTC day as a FinOps FOCUS CSV (an admin key)'))
    .requiredOption('--format <format>', 'focus', formatArg)
    .requiredOption('--from <day>', 'the first UTC day (YYYY-MM-DD)', dayArg)
    .requiredOption('--to <day>', 'the last UTC day, included (YYYY-MM-DD)', dayArg)
    .option('--output <file>', 'write the CSV to this file (default: stdout)')
    .exitOverride(usageExit)
    .action(
      action(async (_flags: ExportFlags, command: Command) => {
        // `usage` itself takes --base-url: given after `export`, it still lands on the parent.
        const flags = command.optsWithGlobals<ExportFlags>();
        if (flags.to < flags.from) throw usageError('mediagate: --to must be the same day as --from or later.');
        const csv = await makeAdminClient(flags).usage.export({ format: 'focus', from: flags.from, to: flags.to });
        const source = Readable.fromWeb(csv);
        const target: Writable = flags.output === undefined ? process.stdout : createWriteStream(flags.output);
        try {
          await pipeline(source, target, { end: flags.output !== undefined });
        } catch (error) {
          throw new CliError(EXIT.failure, `mediagate: the export broke off: ${error instanceof Error ? error.message : String(error)}`);
        }
      }),
    );
}
