import type { Command } from 'commander';
import type { Mediagate, TaskKind, UncheckedParams } from '../../client/index.js';
import { addConnectionOptions, collect, integerArg, makeClient, positiveIntegerArg, usageExit } from './context.js';
import { setValues } from './media.js';
import { resumeCommand, waitAndReport, type WaitFlags } from './tasks.js';

export interface CreateFlags extends WaitFlags {
  readonly model: string;
  readonly prompt: string;
  readonly seed?: number;
  readonly promptExtend?: boolean;
  readonly set?: readonly string[];
  readonly wait?: boolean;
  readonly idempotencyKey?: string;
}

/** Flags of `video create` and `image create`: model and prompt, the family's own (`specific`), then the shared ones. */
export function addCreateOptions(command: Command, specific: (command: Command) => Command): Command {
  return addConnectionOptions(
    specific(command.requiredOption('-m, --model <id>', 'model id (see `mediagate models`)').requiredOption('-p, --prompt <text>', 'text prompt'))
      .option('--seed <n>', 'random seed', integerArg)
      .option('--prompt-extend', 'let the model expand the prompt')
      .option('--no-prompt-extend', 'do not expand the prompt')
      .option('--set <key=value>', 'any other parameter; the value is JSON when it parses, @FILE reads a file (repeatable)', collect)
      .option('--idempotency-key <key>', 'send Idempotency-Key: a repeat with the same key and body returns the first task (and the create is retried safely)')
      .option('-w, --wait', 'wait for the task (live events, polling as the fallback), with a progress bar on a terminal')
      .option('--no-events', 'wait by polling instead of the live event stream')
      .option('-d, --download <dir>', 'wait, then save the outputs into DIR (implies --wait)')
      .option('--json', 'print the task as JSON on stdout')
      .option('-q, --quiet', 'no progress on stderr')
      .option('--poll-interval <ms>', 'first interval between polls while waiting', positiveIntegerArg),
  );
}

/** Parameters common to both families, in wire names; undefined flags are left out. */
export function commonParams(flags: CreateFlags): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  if (flags.seed !== undefined) params['seed'] = flags.seed;
  if (flags.promptExtend !== undefined) params['prompt_extend'] = flags.promptExtend;
  return params;
}

/** Creates the task (the server validates; the CLI builds parameters at run time), then waits or prints its id. */
export async function createTask(kind: TaskKind, flags: CreateFlags, params: Record<string, unknown>): Promise<void> {
  const client: Mediagate = makeClient(flags);
  const body: UncheckedParams = { ...params, ...(await setValues(flags.set ?? [])), model: flags.model, prompt: flags.prompt };
  const options = flags.idempotencyKey !== undefined ? { idempotencyKey: flags.idempotencyKey } : {};
  const { data: created, response } = await (
    kind === 'video' ? client.videos.createUnchecked(body, options) : client.images.createUnchecked(body, options)
  ).withResponse();
  const id = 'id' in created ? created.id : created.task_id;
  if (response.idempotentReplayed && !flags.quiet)
    process.stderr.write(`Idempotency key already used with this request: task ${id} is the original (nothing new was created).\n`);
  if (flags.wait || flags.download !== undefined) {
    if (!flags.quiet && !response.idempotentReplayed) process.stderr.write(`Created ${kind} task ${id}.\n`);
    await waitAndReport(client, kind, id, flags);
    return;
  }
  if (flags.json) {
    // The same object `task get --json` prints: the video task, or the image task's `data`.
    const task = 'id' in created ? created : await client.images.get(id);
    process.stdout.write(`${JSON.stringify(task, null, 2)}\n`);
  } else {
    process.stdout.write(`${id}\n`);
  }
  if (!flags.quiet)
    process.stderr.write(`${response.idempotentReplayed ? 'Task' : `Created ${kind} task`} ${id}. Wait for it with:\n  ${resumeCommand(id, flags)}\n`);
}

/** `mediagate <group> create`, with usage errors exiting 2 and the action wrapped for exit codes. */
export function createCommand(group: Command, description: string): Command {
  group.exitOverride(usageExit);
  return group.command('create').description(description).exitOverride(usageExit);
}
