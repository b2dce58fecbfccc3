#!/usr/bin/env node
/**
 * `mediagate-client`: the client commands alone, the bin of the light client package
 * (packages/client). It loads no server code, so it works where only the client is installed.
 */
import { Command } from 'commander';
import { registerAdminCommands } from './admin.js';
import { registerImageCommands } from './image.js';
import { registerModelsCommand } from './models.js';
import { registerTaskCommands } from './task.js';
import { registerUsageCommand } from './usage.js';
import { registerVideoCommands } from './video.js';
import { registerWebhookCommands } from './webhooks.js';

const program = new Command();
program
  .name('mediagate-client')
  .description('Client of a mediagate service: create, wait for, list and cancel tasks; manage webhooks; read usage; administer keys with an admin key.');
registerVideoCommands(program);
registerImageCommands(program);
registerTaskCommands(program);
registerModelsCommand(program);
registerWebhookCommands(program);
registerUsageCommand(program);
registerAdminCommands(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`mediagate-client: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
