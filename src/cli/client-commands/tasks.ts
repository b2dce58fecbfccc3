import {
  AbortError,
  NotFoundError,
  TaskFailedError,
  snapshot,
  type ImageTask,
  type Mediagate,
  type ProgressEvent,
  type TaskKind,
  type TaskSnapshot,
  type VideoTask,
} from '../../client/index.js';
import { CliError, EXIT, type ConnectionFlags } from './context.js';
import { downloadOutputs } from './download.js';
import { amount } from './usage.js';
import { createProgressView, formatElapsed } from './progress.js';

/** Flags of every command that can wait for a task. */
export interface WaitFlags extends ConnectionFlags {
  readonly json?: boolean;
  readonly quiet?: boolean;
  readonly download?: string;
  readonly pollInterval?: number;
  /** false with --no-events: poll instead of following the task's event stream. */
  readonly events?: boolean;
}

/**
 * Finds a task in either family. The id prefix (`vid_`, `img_`) says where to look first, but is
 * not trusted blindly: on 404 the other family is asked before giving up.
 */
export async function findTask(client: Mediagate, id: string): Promise<TaskSnapshot> {
  const order: readonly TaskKind[] = id.startsWith('img_') ? ['image', 'video'] : ['video', 'image'];
  let notFound: NotFoundError | undefined;
  for (const kind of order) {
    try {
      return kind === 'video' ? snapshot<VideoTask | ImageTask>(await client.videos.get(id)) : snapshot<VideoTask | ImageTask>(await client.images.get(id));
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      notFound ??= error;
    }
  }
  throw notFound ?? new CliError(EXIT.notFound, `mediagate: no task ${id}.`);
}

const time = (seconds: number | null): string => (seconds === null || seconds === 0 ? '-' : new Date(seconds * 1000).toISOString());

/** A task as `key  value` lines, for `task get` without --json. */
export function formatTask(seen: TaskSnapshot): string {
  const task = seen.task;
  const rows: [string, string][] = [
    ['id', seen.id],
    ['kind', seen.kind],
  ];
  if ('model' in task) rows.push(['model', task.model]);
  rows.push(['status', seen.status], ['progress', seen.progress === null ? '-' : `${seen.progress}%`]);
  if ('created_at' in task) {
    rows.push(['created', time(task.created_at)], ['started', time(task.started_at)], ['finished', time(task.completed_at)]);
  } else {
    rows.push(['created', time(task.submit_time)], ['started', time(task.start_time)], ['finished', time(task.finish_time)]);
  }
  for (const url of seen.outputs) rows.push(['output', url]);
  const usage = task.usage;
  // A cost of 0 is left out: without a pricing file every task costs 0, and "USD 0.00" would say it was priced.
  if (usage) rows.push(['usage', `${usage.seconds} s, ${usage.images} images${usage.cost > 0 ? `, ${usage.currency} ${amount(usage.cost)}` : ''}`]);
  if (seen.error) {
    if (seen.error.code !== '') rows.push(['code', seen.error.code]);
    if (seen.error.param !== '') rows.push(['param', seen.error.param]);
    rows.push(['message', seen.error.message]);
  }
  return rows.map(([key, value]) => `${key.padEnd(9)} ${value}`).join('\n');
}

/** The command that resumes a wait, with the flags that shape its result (never the API key). */
export function resumeCommand(id: string, flags: WaitFlags): string {
  const quote = (value: string): string => (/^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`);
  const parts = ['mediagate', 'task', 'wait', id];
  if (flags.download !== undefined) parts.push('--download', quote(flags.download));
  if (flags.json) parts.push('--json');
  if (flags.baseUrl !== undefined) parts.push('--base-url', quote(flags.baseUrl));
  return parts.join(' ');
}

/**
 * The task's own duration in seconds, from its creation to its completion (its timestamps, not
 * this process's clock: a wait resumed after an interruption reports the task, not the wait).
 */
export function taskDuration(task: VideoTask | ImageTask): number | undefined {
  const [from, to] = 'created_at' in task ? [task.created_at, task.completed_at] : [task.submit_time, task.finish_time];
  if (to === null || to === 0 || from === 0 || to < from) return undefined;
  return to - from;
}

const print = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
};

/**
 * Waits for a task with a progress view on stderr, then prints the result: with --json the task
 * object on stdout; otherwise the saved file paths (--download) or the output URLs, one a line.
 * Ctrl-C (or SIGTERM) stops waiting only: the task keeps running, and the resume command is printed.
 */
export async function waitAndReport(client: Mediagate, kind: TaskKind, id: string, flags: WaitFlags): Promise<void> {
  const view = createProgressView(id, process.stderr, flags.quiet === true);
  const controller = new AbortController();
  // Ctrl-C, or SIGTERM (a supervisor, `timeout`, a closing terminal multiplexer): either stops
  // waiting the same way; the exit code says which (128 + the signal's number).
  let stoppedBy: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    stoppedBy ??= signal;
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const options = {
    signal: controller.signal,
    onProgress: (event: ProgressEvent) => view.update(event),
    ...(flags.pollInterval !== undefined ? { pollInterval: flags.pollInterval } : {}),
    ...(flags.events === false ? { events: false } : {}),
  };
  let task: VideoTask | ImageTask;
  try {
    task = kind === 'video' ? await client.videos.wait(id, options) : await client.images.wait(id, options);
    view.end();
  } catch (error) {
    view.end();
    if (error instanceof AbortError) {
      process.stderr.write(`Stopped waiting; task ${id} keeps running. Resume with:\n  ${resumeCommand(id, flags)}\n`);
      throw new CliError(stoppedBy === 'SIGTERM' ? EXIT.terminated : EXIT.interrupted, '');
    }
    if (error instanceof TaskFailedError && flags.json) print(error.task);
    throw error;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  const seen = snapshot<VideoTask | ImageTask>(task);
  const files = flags.download !== undefined ? await downloadOutputs(id, seen.outputs, flags.download) : [];
  const took = taskDuration(task);
  const duration = took === undefined ? '' : ` in ${formatElapsed(took * 1000)}`;
  if (!flags.quiet) process.stderr.write(`${id} completed${duration}${files.length > 0 ? `; saved ${files.length} file(s)` : ''}\n`);
  if (flags.json) print(task);
  else process.stdout.write(`${(files.length > 0 ? files : seen.outputs).join('\n')}\n`);
}
