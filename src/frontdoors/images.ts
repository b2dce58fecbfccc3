import type { FastifyRequest } from 'fastify';
import { ApiError, errors, type ErrorCode } from '../errors.js';
import type { Task } from '../store/records.js';
import type { OutputStorage } from '../storage/storage.js';
import type { Handler, RouteDeps } from '../http/route.js';
import { createFlow } from '../http/routes/tasks.js';
import { seconds, usageBody } from '../wire/task-bodies.js';
import { createRenamed, modelLookup, objectBody } from './common.js';
import { bodyKind } from './form.js';
import { imageRequest, type ResponseFormat } from './image-request.js';
import { waitForEnd } from './wait.js';

/** A failed task's codes that are a fault of the request: 400, like the same fault found at create. */
const REQUEST_FAULTS = new Set<string>([
  'missing_parameter',
  'invalid_parameter',
  'unsupported_parameter',
  'unsupported_value',
  'invalid_input',
  'input_refused',
]);

/** Why a held request stopped waiting before its task ended. */
type WaitEnd = 'bound' | 'stopping' | 'client';

/**
 * The wait ran out: the task goes on, on the async path. Not retried by the `openai` client (it
 * would create another task). A client that went away gets nothing, but the message the log
 * keeps says so, with the time it waited, rather than the wait's bound.
 */
function waitRanOut(task: Task, end: WaitEnd, waitedMs: number): ApiError {
  const waited = `${Math.round(waitedMs / 1000)} s`;
  const why =
    end === 'stopping' ? 'The server is stopping' : end === 'client' ? `The client went away after ${waited}` : `The image did not finish within ${waited}`;
  return new ApiError(504, 'wait_timeout', '', `${why}; task ${task.id} goes on: poll GET /v1/images/generations/async/${task.id}.`, 'server_error', {
    headers: { 'x-should-retry': 'false' },
  });
}

/** An ended task that did not complete, as the synchronous answer's error (decisions: 400, 422; the task id in the message). */
function endedWithout(task: Task): ApiError {
  if (task.status === 'cancelled') {
    return new ApiError(422, 'cancelled', '', `Task ${task.id} was cancelled before it completed.`, 'generation_error');
  }
  const error = task.error;
  const code: ErrorCode = error?.code ?? 'generation_failed';
  const message = `Task ${task.id} failed: ${error?.message ?? 'the generation failed.'}`;
  if (REQUEST_FAULTS.has(code)) return new ApiError(400, code, error?.param ?? '', message);
  return new ApiError(422, code, error?.param ?? '', message, 'generation_error');
}

async function fileBytes(storage: OutputStorage, key: string): Promise<Buffer> {
  const file = await storage.open(key);
  if (!file) throw errors.fileGone();
  const chunks: Buffer[] = [];
  for await (const chunk of file.stream()) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Ends when the server starts closing or the client goes away: a held request must not hold either. */
function heldSignal(request: FastifyRequest, closing: AbortSignal): { signal: AbortSignal; end(): WaitEnd; release(): void } {
  const controller = new AbortController();
  let clientLeft = false;
  const stop = (): void => controller.abort();
  // The client went away: stop waiting. The task is left to run (it is not cancelled).
  const left = (): void => {
    clientLeft = true;
    stop();
  };
  closing.addEventListener('abort', stop);
  request.raw.socket?.once('close', left);
  if (closing.aborted) stop();
  return {
    signal: controller.signal,
    end: () => (closing.aborted ? 'stopping' : clientLeft ? 'client' : 'bound'),
    release() {
      closing.removeEventListener('abort', stop);
      request.raw.socket?.off('close', left);
    },
  };
}

/**
 * `POST /v1/images/generations`, synchronous: the seed's image create path (image-request.ts
 * maps the fields), then the request is held until the task ends (MEDIAGATE_SYNC_WAIT_S at
 * most), waiting on the task feed. Answers `{created, data: [{b64_json} | {url}], usage}`. The
 * whole `RouteDeps`, as `createVideo`: the create path it hands them to still reads the whole context.
 */
export function generateImage(deps: RouteDeps, syncWaitMs: number): Handler {
  const { ctx } = deps;
  const create = createFlow(deps, 'image');
  const lookup = modelLookup(ctx.models, 'image');
  return async (request, reply) => {
    bodyKind(request, false);
    if (request.body === undefined) throw errors.malformedJson('the body is empty.');
    const asked: { format: ResponseFormat } = { format: 'b64_json' };
    const { task, replayed } = await createRenamed(
      create,
      request,
      () => {
        const object = objectBody(request.body);
        if (object === undefined) return { body: request.body, rename: {} };
        const mapped = imageRequest(object, lookup(request, object['model']) !== undefined);
        asked.format = mapped.responseFormat;
        return { body: mapped.body, rename: {} };
      },
      reply,
    );
    if (replayed) reply.header('idempotent-replayed', 'true');
    const held = heldSignal(request, deps.closing);
    const since = Date.now();
    let ended: Task | undefined;
    try {
      ended = await waitForEnd(ctx.feed, ctx.service, request.owner, task.id, syncWaitMs, held.signal);
    } finally {
      held.release();
    }
    if (ended === undefined) throw waitRanOut(task, held.end(), Date.now() - since);
    const output = ended.outputs[0];
    if (ended.status !== 'completed' || output === undefined) throw endedWithout(ended);
    const image =
      asked.format === 'url'
        ? { url: deps.urlFor(output.key, ended.completedAt ?? 0) }
        : { b64_json: (await fileBytes(ctx.storage, output.key)).toString('base64') };
    return { created: seconds(ended.createdAt), data: [image], usage: usageBody(ended, deps.currency) };
  };
}
