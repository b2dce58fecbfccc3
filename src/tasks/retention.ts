import { Loop } from '../loop.js';
import type { OutputStorage } from '../storage/storage.js';
import type { SweepTurn } from '../storage/sweep-turn.js';
import type { TaskService } from './service.js';

export interface RetentionSweepOptions {
  readonly service: TaskService;
  readonly storage: OutputStorage;
  /** MEDIAGATE_TASK_RETENTION_S: how long a final task is kept after it ended. */
  readonly retentionMs: number;
  readonly intervalMs: number;
  /** When set, the listing of inputs runs only when this process takes the turn (shared media: storage/sweep-turn.ts). */
  readonly listingTurn?: SweepTurn;
  readonly log: { info(fields: object, msg: string): void; warn(fields: object, msg: string): void };
}

/** Tasks deleted per statement batch; a sweep loops until a batch comes back short. */
const BATCH = 200;
/**
 * How old an inputs folder must be before the sweep asks whether its task still needs it: a
 * create stores its inputs a moment before it inserts the row, and a published input
 * (`pub_...`, no task) must outlive its URL (an hour).
 */
const INPUT_FOLDER_MIN_AGE_MS = 2 * 3600_000;

/**
 * The loop (not started) that deletes, at its start and then every `intervalMs`, final tasks older than the retention with their
 * output files (in batches, on either store), and inputs whose task is final or gone (left
 * when a process stopped between a settle and its delete). A deleted task is simply not
 * there: its reads are `task_not_found`.
 */
export function retentionLoop(options: RetentionSweepOptions): Loop {
  const { service, storage, log } = options;
  const sweep = async (): Promise<void> => {
    let deleted = 0;
    for (;;) {
      const batch = await service.deleteExpired(options.retentionMs, BATCH);
      // The row goes first: a client never reads a task whose files are already gone.
      for (const task of batch) {
        await Promise.all(task.outputs.map((output) => storage.delete(output.key)));
        await storage.discard(task.id);
      }
      deleted += batch.length;
      if (batch.length < BATCH) break;
    }
    if (deleted > 0) log.info({ deleted }, 'tasks past their retention deleted');
    const now = Date.now();
    if (options.listingTurn !== undefined && !(await options.listingTurn(now))) return;
    const inputs = await service.sweepInputs(now - INPUT_FOLDER_MIN_AGE_MS);
    if (inputs > 0) log.info({ removed: inputs }, 'inputs of ended tasks deleted');
  };
  return new Loop({
    name: 'retention',
    turn: sweep,
    intervalMs: options.intervalMs,
    onError: (error) => log.warn({ err: error }, 'retention sweep failed'),
  });
}
