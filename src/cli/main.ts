#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { CliError, registerKeyCommands } from './keys.js';
import { registerSecretCommands } from './secrets.js';
import {
  registerAdminCommands,
  registerImageCommands,
  registerModelsCommand,
  registerTaskCommands,
  registerUsageCommand,
  registerVideoCommands,
  registerWebhookCommands,
} from './client-commands/index.js';

const program = new Command();
// package.json sits two levels up from both src/cli/main.ts and dist/cli/main.js.
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
program
  .name('mediagate')
  .description('Self-hosted gateway for asynchronous video and image generation.')
  .version(version, '-V, --version', 'print the version and exit');

program
  .command('serve', { isDefault: true })
  .description('run the HTTP API and, unless --no-workers, the workers that render tasks')
  .option('--no-workers', 'API only: leave rendering to `mediagate worker` processes')
  .action(async (options: { workers: boolean }, command: Command) => {
    // Server code loads only for server commands: client commands start in a fraction of the time.
    const { serve } = await import('./serve.js');
    // The flag wins when given; otherwise MEDIAGATE_WORKERS decides (commander's default of
    // `workers: true` for a `--no-` option would silently override MEDIAGATE_WORKERS=false).
    const given = command.getOptionValueSource('workers') === 'cli';
    await serve(given ? { workers: options.workers } : {});
  });

program
  .command('worker')
  .description('run workers only (no HTTP): render tasks from the shared PostgreSQL queue (DATABASE_URL)')
  .action(async () => {
    const { worker } = await import('./worker.js');
    await worker();
  });

program
  .command('migrate')
  .description('apply pending schema migrations (SQLite, or PostgreSQL at DATABASE_URL) and exit')
  .action(async () => {
    const { migrate } = await import('./migrate.js');
    await migrate();
  });

program
  .command('channels')
  .description('operator tools for MEDIAGATE_CHANNELS_FILE (routing to real providers)')
  .command('check')
  .description('validate the channels file and the variables it names; print channels and routes')
  .option('--probe', 'also make one cheap authenticated call to each channel')
  .action(async (options: { probe?: boolean }) => {
    const { channelsCheck } = await import('./channels.js');
    process.exitCode = await channelsCheck({ probe: options.probe === true });
  });

program
  .command('storage')
  .description('operator tools for the media store (MEDIAGATE_STORAGE: the data directory or S3)')
  .command('check')
  .description('open the media store as at start, then write, read, list and delete a probe object')
  .action(async () => {
    const { storageCheck } = await import('./storage.js');
    process.exitCode = await storageCheck();
  });

program
  .command('pricing')
  .description('operator tools for MEDIAGATE_PRICING_FILE (model prices)')
  .command('check [file]')
  .description("check the pricing file (default MEDIAGATE_PRICING_FILE) as at start; print every model's price")
  .action(async (file: string | undefined) => {
    const { pricingCheck } = await import('./pricing.js');
    process.exitCode = pricingCheck(file);
  });

registerVideoCommands(program);
registerImageCommands(program);
registerTaskCommands(program);
// `models check` loads the catalog only when it runs.
registerModelsCommand(program, async (file) => (await import('./models.js')).modelsCheck(file));
registerWebhookCommands(program);
registerUsageCommand(program);
registerAdminCommands(program);
registerKeyCommands(program);
registerSecretCommands(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  if (error instanceof CliError) {
    process.stderr.write(`mediagate: ${error.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`mediagate: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
