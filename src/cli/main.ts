#!/usr/bin/env node
import { Command } from 'commander';
import { serve } from './serve.js';

const program = new Command();
program.name('mediagate').description('Self-hosted gateway for asynchronous video and image generation.');

program
  .command('serve', { isDefault: true })
  .description('run the HTTP API and, unless --no-workers, the workers that render tasks')
  .option('--no-workers', 'API only: leave rendering to `mediagate worker` processes')
  .action(async (options: { workers: boolean }) => {
    await serve({ workers: options.workers, http: true });
  });

program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`mediagate: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
