import { findModel, displayName } from '../../catalog/index.js';
import type { TaskWithParams } from '../../store/operations.js';
import { seconds, usageBody } from '../../wire/task-bodies.js';
import type { DepsOf, Handler } from '../route.js';
import { pageLimit } from './task-ops.js';

/**
 * `GET /v1/tasks/recent`: the calling key's newest tasks of both families with what a person
 * recognises them by (prompt, model name, duration, size), and per model what its recent tasks
 * say: how long a run took (median, creation to completion) and the newest output to show as an
 * example. The console's history, model card and example read it; the two families' lists carry
 * neither prompts nor times.
 */

/** A prompt is at most 10,000 characters; a recognisable beginning is enough here. */
const PROMPT_CHARS = 300;

const clip = (text: string): string => {
  const chars = [...text];
  return chars.length <= PROMPT_CHARS ? text : `${chars.slice(0, PROMPT_CHARS - 1).join('')}…`;
};

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** What the task asked for, in the words of its family: seconds and resolution, or an image's size. */
function asked(task: TaskWithParams): { duration: number | null; resolution: string | null; size: string | null } {
  const params = task.params;
  const duration = typeof params['duration'] === 'number' ? params['duration'] : null;
  const width = params['width'];
  const height = params['height'];
  const size = text(params['size']) ?? (typeof width === 'number' && typeof height === 'number' ? `${width}x${height}` : null);
  return {
    duration: task.kind === 'video' ? duration : null,
    resolution: task.kind === 'video' ? text(params['resolution']) : null,
    size: task.kind === 'image' ? size : null,
  };
}

const runMs = (task: TaskWithParams): number | null => (task.status === 'completed' && task.completedAt !== null ? task.completedAt - task.createdAt : null);

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? null) : Math.round(((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2);
}

export function listRecentTasks(deps: DepsOf<'service', 'urlFor' | 'currency'>): Handler {
  return async (request) => {
    const limit = pageLimit(request);
    const pages = await Promise.all(
      (['video', 'image'] as const).map((kind) => deps.ctx.service.listWithParams({ owner: request.owner, kind, order: 'desc', limit })),
    );
    // Newest first across both families: by creation time, then by the id's time and random part
    // (after its family prefix), so two tasks of one millisecond keep one order.
    const tasks = pages
      .flat()
      .sort((a, b) => b.createdAt - a.createdAt || (a.id.slice(4) < b.id.slice(4) ? 1 : -1))
      .slice(0, limit);
    const output = (task: TaskWithParams): string | null => {
      const first = task.outputs[0];
      return task.status === 'completed' && first !== undefined && task.completedAt !== null ? deps.urlFor(first.key, task.completedAt) : null;
    };
    const data = tasks.map((task) => {
      const row = findModel(task.model);
      return {
        id: task.id,
        kind: task.kind,
        model: task.model,
        model_name: row === undefined ? task.model : displayName(row),
        status: task.status,
        prompt: clip(text(task.params['prompt']) ?? ''),
        ...asked(task),
        created_at: seconds(task.createdAt),
        completed_at: task.completedAt === null ? null : seconds(task.completedAt),
        run_ms: runMs(task),
        usage: usageBody(task, deps.currency),
        output: output(task),
      };
    });
    const byModel = new Map<string, { runs: number[]; example: (typeof data)[number] | undefined }>();
    for (const task of data) {
      const entry = byModel.get(task.model) ?? { runs: [], example: undefined };
      if (task.run_ms !== null) entry.runs.push(task.run_ms);
      if (entry.example === undefined && task.output !== null) entry.example = task;
      byModel.set(task.model, entry);
    }
    const models = [...byModel].map(([model, { runs, example }]) => ({
      model,
      completed: runs.length,
      median_run_ms: median(runs),
      example: example === undefined ? null : { task_id: example.id, kind: example.kind, prompt: example.prompt, url: example.output },
    }));
    return { object: 'list', data, models };
  };
}
