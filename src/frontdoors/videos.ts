import type { FastifyRequest } from 'fastify';
import { ApiError, errors } from '../errors.js';
import type { TaskWithParams } from '../store/operations.js';
import { pathParam, type DepsOf, type Handler, type RouteDeps } from '../http/route.js';
import { sendStoredFile } from '../http/routes/files.js';
import { pageLimit, queryValue } from '../http/routes/task-ops.js';
import { createFlow } from '../http/routes/tasks.js';
import { createRenamed, modelLookup, objectBody } from './common.js';
import { bodyKind, readForm, type FormFile } from './form.js';
import { videoObject } from './video-object.js';
import { videoRequest } from './video-request.js';

/** The OpenAI clients retry a 409 by default (node_modules/openai/client.mjs, `shouldRetry`): this one says not to. */
const NO_RETRY = { 'x-should-retry': 'false' } as const;

/** The calling key's video task with its parameters, or the 404 (`task_not_found`) both dialects give. */
async function requireVideo({ ctx }: DepsOf<'service'>, request: FastifyRequest): Promise<TaskWithParams> {
  const id = pathParam(request, 'video_id');
  const task = await ctx.service.getWithParams(request.owner, id);
  if (task === undefined || task.kind !== 'video') throw errors.taskNotFound(id);
  return task;
}

/**
 * `POST /v1/videos`: multipart/form-data (the `openai` client) or JSON, mapped onto the model's
 * parameters (video-request.ts) and created by the seed's create path: the same validation,
 * limits, budget, Idempotency-Key, events and webhooks. Answers the Video object. It takes the
 * whole `RouteDeps` because it hands them to that path (`createFlow`), which still reads the whole context.
 */
export function createVideo(deps: RouteDeps): Handler {
  const { ctx } = deps;
  const create = createFlow(deps, 'video');
  const lookup = modelLookup(ctx.models, 'video');
  return async (request, reply) => {
    const kind = bodyKind(request, true);
    let raw: unknown = request.body;
    let files: Readonly<Record<string, FormFile>> = {};
    if (kind === 'form') ({ fields: raw, files } = await readForm(request, ctx.bodyLimitBytes));
    else if (raw === undefined) throw errors.malformedJson('the body is empty.');
    const outcome = await createRenamed(
      create,
      request,
      () => {
        const object = objectBody(raw);
        if (object === undefined) return { body: raw, rename: {} };
        const mapped = videoRequest(object, files, lookup(request, object['model'])?.schema, kind === 'form');
        if (mapped.checkedMedia.length > 0) request.checkedMedia = [...(request.checkedMedia ?? []), ...mapped.checkedMedia];
        // Seed rule 2 limits a body's size for one model: a form counts as the JSON it stands for.
        if (kind === 'form') request.bodyBytes = Buffer.byteLength(JSON.stringify(mapped.body));
        return mapped;
      },
      reply,
    );
    if (outcome.replayed) reply.header('idempotent-replayed', 'true');
    const params = outcome.params ?? (await ctx.service.getWithParams(request.owner, outcome.task.id))?.params ?? {};
    return videoObject({ ...outcome.task, params }, ctx.outputTtlMs);
  };
}

/** `GET /v1/videos/{video_id}`. */
export function getVideo(deps: DepsOf<'service' | 'outputTtlMs'>): Handler {
  return async (request) => videoObject(await requireVideo(deps, request), deps.ctx.outputTtlMs);
}

/**
 * `GET /v1/videos?limit=&after=&order=`: the calling key's video tasks, newest first (`desc`,
 * the default) or oldest first; `after` is the previous page's `last_id`.
 */
export function listVideos(deps: DepsOf<'service' | 'outputTtlMs'>): Handler {
  const { ctx } = deps;
  return async (request) => {
    const limit = pageLimit(request);
    const order = queryValue(request, 'order') ?? 'desc';
    if (order !== 'asc' && order !== 'desc') throw errors.unsupportedQueryValue('order', `order must be 'asc' or 'desc'.`);
    const after = queryValue(request, 'after');
    if (after !== undefined) {
      const cursor = after.length <= 64 ? await ctx.service.get(request.owner, after) : undefined;
      if (cursor === undefined || cursor.kind !== 'video') throw errors.invalidQuery('after', 'after must be the id of one of your videos.');
    }
    const rows = await ctx.service.listWithParams({ owner: request.owner, kind: 'video', order, after, limit: limit + 1 });
    const page = rows.slice(0, limit);
    return {
      object: 'list',
      data: page.map((task) => videoObject(task, ctx.outputTtlMs)),
      first_id: page[0]?.id ?? null,
      last_id: page.at(-1)?.id ?? null,
      has_more: rows.length > limit,
    };
  };
}

/**
 * `GET /v1/videos/{video_id}/content`: the MP4 (`variant=video`, the default), with Range as the
 * file route serves it; 409 `video_not_ready` until the task has completed.
 */
export function getVideoContent(deps: DepsOf<'service' | 'storage'>): Handler {
  const { ctx } = deps;
  return async (request, reply) => {
    const variant = queryValue(request, 'variant');
    if (variant !== undefined && variant !== 'video') {
      throw errors.unsupportedQueryValue('variant', `variant must be 'video' (the MP4); '${variant.slice(0, 40)}' is not offered.`);
    }
    const task = await requireVideo(deps, request);
    const output = task.outputs.find((item) => item.type === 'video');
    if (task.status !== 'completed' || output === undefined) {
      throw new ApiError(
        409,
        'video_not_ready',
        'video_id',
        `Video '${task.id}' is ${task.status}; its content is there once it has completed.`,
        'invalid_request_error',
        {
          headers: NO_RETRY,
        },
      );
    }
    const file = await ctx.storage.open(output.key);
    if (!file) throw errors.fileGone();
    reply
      .header('content-type', file.contentType)
      .header('cache-control', 'private, no-store')
      .header('x-content-type-options', 'nosniff')
      .header('content-disposition', `attachment; filename="${task.id}.mp4"`);
    return sendStoredFile(request, reply, file);
  };
}

/**
 * `DELETE /v1/videos/{video_id}`: cancels the task if it is running (TaskService.cancel, as the
 * seed's cancel), then deletes it with its files; afterwards it is 404 on both dialects.
 */
export function deleteVideo(deps: DepsOf<'service' | 'storage'>): Handler {
  const { ctx } = deps;
  return async (request) => {
    const task = await requireVideo(deps, request);
    if (task.status === 'queued' || task.status === 'processing') await ctx.service.cancel(request.owner, task.id);
    const deleted = await ctx.service.deleteFinal(request.owner, task.id);
    if (deleted === undefined) throw errors.taskNotFound(task.id);
    // The row went first: nobody reads a task whose files are gone (as retention does).
    await Promise.all(deleted.outputs.map((output) => ctx.storage.delete(output.key)));
    await ctx.storage.discard(task.id);
    return { id: task.id, object: 'video.deleted', deleted: true };
  };
}
