import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuthHook } from '../auth.js';
import type { ModelKind } from '../../catalog/index.js';
import { errors } from '../../errors.js';
import type { HttpContext } from '../context.js';
import { imageCreated, imageTask, videoTask, type UrlFor } from '../envelopes.js';
import { IMAGE_STATUS_RESPONSE, VIDEO_TASK_RESPONSE } from '../response-schemas.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Size of the raw JSON body in bytes (set by the JSON parser). */
    bodyBytes: number;
  }
}

const JSON_TYPE = /^application\/json\s*(;|$)/i;

/** Body presence and type, checked before validation so an empty POST is never a 500. */
function requireJsonBody(request: FastifyRequest): unknown {
  const type = request.headers['content-type'];
  if (type === undefined || !JSON_TYPE.test(type)) throw errors.unsupportedMediaType(type);
  if (request.body === undefined) throw errors.malformedJson('the body is empty.');
  return request.body;
}

/** The four operations of the seed: create and get, for each family. */
export function taskRoutes(app: FastifyInstance, ctx: HttpContext, onRequest: AuthHook, urlFor: UrlFor): void {
  // One labelled counter per model, resolved once: prom-client hashes a label object per call.
  const createdCounters = new Map<string, { inc(): void }>();
  const countCreated = (kind: ModelKind, model: string): void => {
    let counter = createdCounters.get(model);
    if (counter === undefined) {
      counter = ctx.metrics.tasksCreated.labels(kind, model);
      createdCounters.set(model, counter);
    }
    counter.inc();
  };

  async function create(kind: ModelKind, request: FastifyRequest) {
    const body = requireJsonBody(request);
    const result = ctx.validator.validate(kind, { body, bodyBytes: request.bodyBytes });
    if (!result.ok) throw result.error;
    // A valid request is told about the in-flight limit; an invalid one gets its 400 first.
    await ctx.keyLimits?.admitTask(request.owner);
    const task = await ctx.service.create(request.owner, result.row, result.params);
    ctx.keyLimits?.taskCreated(request.owner);
    countCreated(kind, task.model);
    return task;
  }

  async function get(kind: ModelKind, request: FastifyRequest<{ Params: { task_id: string } }>) {
    const id = request.params.task_id;
    const task = await ctx.service.get(request.owner, id);
    if (!task || task.kind !== kind) throw errors.taskNotFound(id);
    return task;
  }

  app.post('/v1/video/generations', { onRequest, schema: { response: { 200: VIDEO_TASK_RESPONSE } } }, async (request) => videoTask(await create('video', request), urlFor));
  app.get<{ Params: { task_id: string } }>('/v1/video/generations/:task_id', { onRequest, schema: { response: { 200: VIDEO_TASK_RESPONSE } } }, async (request) =>
    videoTask(await get('video', request), urlFor),
  );
  app.post('/v1/images/generations/async', { onRequest }, async (request) => imageCreated(await create('image', request)));
  app.get<{ Params: { task_id: string } }>('/v1/images/generations/async/:task_id', { onRequest, schema: { response: { 200: IMAGE_STATUS_RESPONSE } } }, async (request) =>
    imageTask(await get('image', request), urlFor),
  );
}
