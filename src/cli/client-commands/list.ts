import {
  snapshot,
  type ImageTask,
  type ImageTaskStatus,
  type Mediagate,
  type Page,
  type TaskKind,
  type TaskSnapshot,
  type TaskStatus,
  type VideoTask,
} from '../../client/index.js';
import { usageError } from './context.js';
import { table } from './models.js';

/** Flags of `task list`. */
export interface ListFlags {
  readonly kind?: string;
  readonly status?: string;
  readonly model?: string;
  readonly limit?: number;
  readonly all?: boolean;
}

const VIDEO_WORDS: readonly TaskStatus[] = ['queued', 'processing', 'completed', 'failed', 'cancelled'];
const IMAGE_WORDS: Readonly<Record<TaskStatus, ImageTaskStatus>> = {
  queued: 'QUEUED',
  processing: 'IN_PROGRESS',
  completed: 'SUCCESS',
  failed: 'FAILURE',
  cancelled: 'CANCELLED',
};

/** A status in either family's words (`completed` or `SUCCESS`), as the video family's word. */
function statusWord(value: string | undefined): TaskStatus | undefined {
  if (value === undefined) return undefined;
  const lower = value.toLowerCase();
  const video = VIDEO_WORDS.find((word) => word === lower);
  if (video) return video;
  const image = VIDEO_WORDS.find((word) => IMAGE_WORDS[word] === value.toUpperCase());
  if (image) return image;
  throw usageError(`mediagate: --status ${value}: one of ${VIDEO_WORDS.join(', ')} (or the image words ${Object.values(IMAGE_WORDS).join(', ')}).`);
}

function kinds(value: string | undefined): readonly TaskKind[] {
  if (value === undefined || value === 'all') return ['video', 'image'];
  if (value === 'video' || value === 'image') return [value];
  throw usageError(`mediagate: --kind ${value}: video, image or all.`);
}

/** Creation time in Unix seconds, for merging the two families newest first. */
function createdAt(task: VideoTask | ImageTask): number {
  return 'created_at' in task ? task.created_at : task.submit_time;
}

/**
 * This key's tasks of the chosen families, newest first: the first `limit` (default 20) of them,
 * or with `all` every task (each family paged through with `after = last_id`).
 */
export async function listTasks(client: Mediagate, flags: ListFlags): Promise<TaskSnapshot[]> {
  const status = statusWord(flags.status);
  const limit = flags.limit ?? 20;
  const pages: Promise<Page<VideoTask> | Page<ImageTask>>[] = kinds(flags.kind).map((kind) => {
    const base = { limit: Math.min(limit, 100), ...(flags.model !== undefined ? { model: flags.model } : {}) };
    return kind === 'video'
      ? client.videos.list({ ...base, ...(status ? { status } : {}) })
      : client.images.list({ ...base, ...(status ? { status: IMAGE_WORDS[status] } : {}) });
  });
  const tasks: (VideoTask | ImageTask)[] = [];
  for (const page of await Promise.all(pages)) {
    // Each family's newest `limit` (a limit above 100 takes several pages), or all of them.
    let taken = 0;
    for await (const task of page) {
      tasks.push(task);
      if (!flags.all && ++taken >= limit) break;
    }
  }
  tasks.sort((a, b) => createdAt(b) - createdAt(a));
  return (flags.all ? tasks : tasks.slice(0, limit)).map((task) => snapshot<VideoTask | ImageTask>(task));
}

const when = (seconds: number): string => (seconds === 0 ? '-' : new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'));

/** An aligned table: ID, KIND, MODEL, STATUS, PROGRESS, CREATED. */
export function formatTaskTable(tasks: readonly TaskSnapshot[]): string {
  const rows = [['ID', 'KIND', 'MODEL', 'STATUS', 'PROGRESS', 'CREATED']];
  for (const seen of tasks) {
    const task = seen.task;
    rows.push([seen.id, seen.kind, 'model' in task ? task.model : '-', seen.status, seen.progress === null ? '-' : `${seen.progress}%`, when(createdAt(task))]);
  }
  return table(rows);
}
