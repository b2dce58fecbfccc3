import type { Command } from 'commander';
import { NotFoundError, snapshot, type ImageTask, type Mediagate, type TaskSnapshot, type VideoTask } from '../../client/index.js';
import { action, addConnectionOptions, makeClient, positiveIntegerArg, usageError, usageExit } from './context.js';
import { formatTaskTable, listTasks, type ListFlags } from './list.js';
import { findTask, formatTask, waitAndReport, type WaitFlags } from './tasks.js';

/** Cancels in the family the id names first, then the other (as findTask reads). */
async function cancelTask(client: Mediagate, id: string): Promise<TaskSnapshot> {
  const order = id.startsWith('img_') ? (['image', 'video'] as const) : (['video', 'image'] as const);
  let notFound: NotFoundError | undefined;
  for (const kind of order) {
    try {
      const task: VideoTask | ImageTask = kind === 'video' ? await client.videos.cancel(id) : await client.images.cancel(id);
      return snapshot(task);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      notFound ??= error;
    }
  }
  throw notFound ?? usageError(`mediagate: no task ${id}.`);
}

interface ListCommandFlags extends ListFlags, WaitFlags {}

/** `mediagate task get|wait|cancel|list`, for tasks of either family. */
export function registerTaskCommands(program: Command): void {
  const group = program.command('task').description('read, wait for, cancel or list tasks of either family (tasks belong to the API key that created them)');
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
    .option('--no-events', 'poll instead of following the live event stream')
    .exitOverride(usageExit)
    .action(
      action(async (id: string, flags: WaitFlags) => {
        const client = makeClient(flags);
        const seen = await findTask(client, id);
        await waitAndReport(client, seen.kind, seen.id, flags);
      }),
    );

  addConnectionOptions(
    group
      .command('cancel')
      .argument('<id>', 'task id (vid_... or img_...)')
      .description('cancel a queued or running task (exit 7 when it already completed or failed)'),
  )
    .option('--json', 'print the cancelled task as JSON on stdout')
    .exitOverride(usageExit)
    .action(
      action(async (id: string, flags: WaitFlags) => {
        const seen = await cancelTask(makeClient(flags), id);
        process.stdout.write(flags.json ? `${JSON.stringify(seen.task, null, 2)}\n` : `${formatTask(seen)}\n`);
      }),
    );

  addConnectionOptions(group.command('list').description('list tasks, newest first'))
    .option('--kind <kind>', 'video, image or all', 'all')
    .option('--status <status>', 'queued, processing, completed, failed or cancelled (image words work too)')
    .option('--model <id>', 'only this model')
    .option('--limit <n>', 'how many (default 20; per request at most 100)', positiveIntegerArg)
    .option('--all', 'every task, page after page')
    .option('--json', 'print the tasks as a JSON array (each as `task get --json` prints it)')
    .exitOverride(usageExit)
    .action(
      action(async (flags: ListCommandFlags) => {
        const tasks = await listTasks(makeClient(flags), flags);
        if (flags.json)
          process.stdout.write(
            `${JSON.stringify(
              tasks.map((seen) => seen.task),
              null,
              2,
            )}\n`,
          );
        else process.stdout.write(tasks.length === 0 ? 'No tasks.\n' : `${formatTaskTable(tasks)}\n`);
      }),
    );
}
