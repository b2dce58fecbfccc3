#!/usr/bin/env node
import { Command } from 'commander';
import { registerKeyCommands } from './keys.js';
import { migrate } from './migrate.js';
import { serve } from './serve.js';
import { worker } from './worker.js';
import { registerImageCommands, registerModelsCommand, registerTaskCommands, registerVideoCommands } from './client-commands/index.js';

const program = new Command();
program.name('mediagate').description('Self-hosted gateway for asynchronous video and image generation.');

program
  .command('serve', { isDefault: true })
  .description('run the HTTP API and, unless --no-workers, the workers that render tasks')
  .option('--no-workers', 'API only: leave rendering to `mediagate worker` processes')
  .action(async (options: { workers: boolean }) => {
    await serve({ workers: options.workers, http: true });
  });

program
  .command('worker')
  .description('run workers only (no HTTP): render tasks from the shared PostgreSQL queue (DATABASE_URL)')
  .action(async () => {
    await worker();
  });

program
  .command('migrate')
  .description('apply pending schema migrations (SQLite, or PostgreSQL at DATABASE_URL) and exit')
  .action(async () => {
    await migrate();
  });

registerVideoCommands(program);
registerImageCommands(program);
registerTaskCommands(program);
registerModelsCommand(program);
registerKeyCommands(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`mediagate: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
