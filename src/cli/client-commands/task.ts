import type { Command } from 'commander';
import { action, addConnectionOptions, makeClient, positiveIntegerArg, usageExit } from './context.js';
import { findTask, formatTask, waitAndReport, type WaitFlags } from './tasks.js';

/** `mediagate task get ID` and `mediagate task wait ID`, for tasks of either family. */
export function registerTaskCommands(program: Command): void {
  const group = program.command('task').description('read or wait for a task of either family (tasks belong to the API key that created them)');
  group.exitOverride(usageExit);

  addConnectionOptions(group.command('get').argument('<id>', 'task id (vid_... or img_...)').description('show a task'))
    .option('--json', 'print the task as JSON on stdout')
    .exitOverride(usageExit)
    .action(
      action(async (id: string, flags: WaitFlags) => {
        const seen = await findTask(makeClient(flags), id);
        process.stdout.write(flags.json ? `${JSON.stringify(seen.task, null, 2)}\n` : `${formatTask(seen)}\n`);
      }),
    );

  addConnectionOptions(group.command('wait').argument('<id>', 'task id (vid_... or img_...)').description('wait for a task, with a progress bar on a terminal'))
    .option('-d, --download <dir>', 'save the outputs into DIR')
    .option('--json', 'print the final task as JSON on stdout')
    .option('-q, --quiet', 'no progress on stderr')
    .option('--poll-interval <ms>', 'first interval between polls', positiveIntegerArg)
    .exitOverride(usageExit)
    .action(
      action(async (id: string, flags: WaitFlags) => {
        const client = makeClient(flags);
        const seen = await findTask(client, id);
        await waitAndReport(client, seen.kind, seen.id, flags);
      }),
    );
}
