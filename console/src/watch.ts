import { ApiRefusal, isFinal, isMissingOperation, viewOfImage, viewOfVideo, type Api, type ImageTaskData, type TaskView, type VideoTask } from './api.js';

/**
 * Follows a task to its end: the server-sent events of decisions §8.3 when the server
 * answers them, else polling that backs off while nothing changes (0.5 s growing by half to 5 s,
 * back to 0.5 s when progress moves). Whether events exist is learnt once, from the first try.
 */

let eventsSupported: boolean | undefined;
/** Set from the OpenAPI document: false means poll without trying events. */
export function setEventsListed(listed: boolean): void {
  if (!listed) eventsSupported = false;
}
export const transport = (): string => (eventsSupported === false ? 'polling' : eventsSupported ? 'events' : 'unknown');

const FIRST_POLL_MS = 500;
const MAX_POLL_MS = 5000;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

async function followEvents(api: Api, task: TaskView, onUpdate: (view: TaskView) => void, signal: AbortSignal): Promise<TaskView | undefined> {
  const path =
    task.kind === 'video'
      ? `/v1/video/generations/${encodeURIComponent(task.id)}/events`
      : `/v1/images/generations/async/${encodeURIComponent(task.id)}/events`;
  const response = await fetch(path, { headers: api.headers({ accept: 'text/event-stream' }), signal, cache: 'no-store' });
  if (!response.ok || !response.body) {
    const text = await response.text();
    const error = new ApiRefusal(
      response.status,
      (() => {
        try {
          const body = JSON.parse(text) as { code?: string; error?: { code?: string } };
          return body.error?.code ?? body.code ?? '';
        } catch {
          return '';
        }
      })(),
      '',
      text,
      text,
    );
    if (isMissingOperation(error)) {
      eventsSupported = false;
      return undefined;
    }
    throw error;
  }
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    eventsSupported = false;
    return undefined;
  }
  eventsSupported = true;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let last: TaskView | undefined;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return last;
    buffer += value.replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data === '') continue;
      const parsed = JSON.parse(data) as unknown;
      last = task.kind === 'video' ? viewOfVideo(parsed as VideoTask) : viewOfImage((parsed as { data: ImageTaskData }).data, task.model, parsed);
      onUpdate(last);
      if (isFinal(last.status)) {
        await reader.cancel();
        return last;
      }
    }
  }
}

export async function watch(api: Api, task: TaskView, onUpdate: (view: TaskView) => void, signal: AbortSignal): Promise<TaskView> {
  let current = task;
  if (eventsSupported !== false) {
    try {
      const final = await followEvents(api, task, onUpdate, signal);
      if (final && isFinal(final.status)) return final;
      if (final) current = final;
    } catch (error) {
      if (signal.aborted) return current;
      // A dropped stream: polling takes over from where it was.
      if (error instanceof ApiRefusal && error.code === 'task_not_found') throw error;
    }
  }
  let wait = FIRST_POLL_MS;
  while (!signal.aborted && !isFinal(current.status)) {
    await sleep(wait, signal);
    if (signal.aborted) break;
    const next = await api.get(task.kind, task.id, task.model, signal);
    const moved = next.status !== current.status || next.progress !== current.progress;
    wait = moved ? FIRST_POLL_MS : Math.min(MAX_POLL_MS, Math.round(wait * 1.5));
    current = next;
    onUpdate(current);
  }
  return current;
}
