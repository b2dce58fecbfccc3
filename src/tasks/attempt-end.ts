import { meter, type Metered } from '../billing/index.js';
import type { TaskOutput } from '../store/records.js';

/** A finished file of an attempt, still in its scratch directory: a render's, or a copy of an upstream's output. */
export interface FinishedFile {
  readonly path: string;
  readonly type: 'video' | 'image';
  readonly contentType: string;
}

export interface AttemptEndSteps<F extends FinishedFile> {
  readonly taskId: string;
  readonly log: { warn(fields: object, msg: string): void };
  /** Moves one file into the media store; returns its key (a render's write retries through an outage). */
  readonly put: (file: F) => Promise<string>;
  /** Just before the settle: what must not outlive a final task (a render's scratch). */
  readonly beforeSettle?: () => Promise<void>;
  /** The settle: true when this attempt's completion took effect (the task's fence held). */
  readonly complete: (outputs: TaskOutput[], metered: Metered | undefined) => Promise<boolean>;
  /** Deletes a stored file of a completion that lost (the task ended another way meanwhile). */
  readonly remove: (key: string) => Promise<void>;
}

/**
 * The one end of an attempt, for renders (worker-pool.ts) and upstream jobs (upstream/
 * scheduler.ts) alike: measure the files (billed from what was delivered: the videos' seconds
 * read from their MP4 headers, not the requested duration; a file that cannot be measured bills
 * the requested duration), store them, complete the task, and, when the completion lost, delete
 * what was stored. Returns whether the completion took effect. A failing step throws: the
 * caller settles the attempt its own way (hand-back, retry, fail).
 */
export async function endAttempt<F extends FinishedFile>(files: readonly F[], steps: AttemptEndSteps<F>): Promise<boolean> {
  // Measured before the files move into storage.
  const metered = await meter(files);
  if (!metered.ok) steps.log.warn({ task: steps.taskId, reason: metered.reason }, 'could not measure the outputs; billing the requested duration');
  const outputs: TaskOutput[] = [];
  for (const file of files) outputs.push({ type: file.type, key: await steps.put(file), contentType: file.contentType });
  await steps.beforeSettle?.();
  const won = await steps.complete(outputs, metered.ok ? metered.value : undefined);
  if (!won) await Promise.all(outputs.map((output) => steps.remove(output.key)));
  return won;
}
