import type { FastifyRequest } from 'fastify';
import { findModel } from '../../catalog/index.js';
import { errors } from '../../errors.js';
import type { Task, TaskStatus } from '../../store/records.js';
import type { Family } from '../../wire/envelopes.js';
import { IMAGE_STATUS_WORDS, VIDEO_STATUSES, imageTaskData } from '../../wire/task-bodies.js';
import type { DepsOf, Handler } from '../route.js';
import { ofFamily, requireOwnedTask, taskBody } from './tasks.js';

/** The tasks module's part a cancel or a list reads: the service and the presenter's parts. */
type TaskOpDeps = DepsOf<'service', 'urlFor' | 'currency'>;

/** Each family's status words (decisions §8), to the stored status. */
const STATUS_WORDS: Readonly<Record<Family, Readonly<Record<string, TaskStatus>>>> = {
  video: Object.fromEntries(VIDEO_STATUSES.map((status) => [status, status])),
  image: Object.fromEntries(VIDEO_STATUSES.map((status) => [IMAGE_STATUS_WORDS[status], status])),
};

const ID_PREFIX: Readonly<Record<Family, string>> = { video: 'vid_', image: 'img_' };
/** A task id's form: prefix, 8 time characters, 22 random (base64url). */
const ID_FORMAT = /^(vid|img)_[A-Za-z0-9_-]{30}$/;
/** Query words: printable, bounded (a model id is at most this long). */
const WORD = /^[\x21-\x7e]{1,200}$/;

/**
 * `POST /v1/video/generations/{task_id}/cancel`, `POST /v1/images/generations/async/{task_id}/cancel`
 * (decisions §8): 200 with the cancelled task (again for an already cancelled one); 409
 * task_not_cancellable for a completed or failed one. Any body is ignored.
 */
export function cancelTask(family: Family): (deps: TaskOpDeps) => Handler {
  return (deps) => {
    const body = taskBody(deps, family);
    return async (request) => {
      // Read first: a task of the other family is 404 here, and must not be cancelled.
      const found = await requireOwnedTask(deps.ctx.service, request, family);
      const outcome = await deps.ctx.service.cancel(request.owner, found.id);
      if (outcome === undefined) throw errors.taskNotFound(found.id);
      const { task } = outcome;
      if (task.status !== 'cancelled') throw errors.taskNotCancellable(task.id, task.status);
      return body(task);
    };
  };
}

interface ListQuery {
  readonly limit: number;
  readonly after?: string;
  readonly status?: TaskStatus;
  readonly model?: string;
}

export function queryValue(request: FastifyRequest, name: string): string | undefined {
  const query = request.query;
  const value = typeof query === 'object' && query !== null ? (query as Record<string, unknown>)[name] : undefined;
  if (value === undefined) return undefined;
  // A repeated parameter arrives as an array: one value is expected.
  if (typeof value !== 'string') throw errors.invalidQuery(name, `${name} must be given once.`);
  return value;
}

/** A page's `limit` query (decisions §8): 1-100, default 20. Lists of tasks and of webhook deliveries share it. */
export function pageLimit(request: FastifyRequest): number {
  const text = queryValue(request, 'limit');
  if (text === undefined) return 20;
  if (!/^\d{1,3}$/.test(text) || Number(text) < 1 || Number(text) > 100) {
    throw errors.invalidQuery('limit', 'limit must be an integer from 1 to 100.');
  }
  return Number(text);
}

/** The list query of a family, validated (decisions §8: codes and params). */
function listQuery(request: FastifyRequest, family: Family): ListQuery {
  const limit = pageLimit(request);
  const after = queryValue(request, 'after');
  if (after !== undefined && !(ID_FORMAT.test(after) && after.startsWith(ID_PREFIX[family]))) {
    throw errors.invalidQuery('after', `after must be the id of a ${family} task (${ID_PREFIX[family]}...).`);
  }
  const statusWord = queryValue(request, 'status');
  let status: TaskStatus | undefined;
  if (statusWord !== undefined) {
    if (!WORD.test(statusWord)) throw errors.invalidQuery('status', 'status must be a status word.');
    status = STATUS_WORDS[family][statusWord];
    if (status === undefined) throw errors.unsupportedQueryValue('status', `status must be one of ${Object.keys(STATUS_WORDS[family]).join(', ')}.`);
  }
  const model = queryValue(request, 'model');
  if (model !== undefined) {
    if (!WORD.test(model)) throw errors.invalidQuery('model', 'model must be a model id.');
    if (findModel(model)?.kind !== family) throw errors.unsupportedQueryValue('model', `model '${model.slice(0, 100)}' is not a ${family} model.`);
  }
  return { limit, ...(after !== undefined ? { after } : {}), ...(status ? { status } : {}), ...(model !== undefined ? { model } : {}) };
}

/**
 * `GET /v1/video/generations`, `GET /v1/images/generations/async` (decisions §8): newest
 * first, `limit` per page, `after` the previous page's `last_id`.
 */
export function listTasks(family: Family): (deps: TaskOpDeps) => Handler {
  return (deps) => {
    const body = taskBody(deps, family);
    return async (request) => {
      const query = listQuery(request, family);
      // The cursor must be one of this key's tasks of this family, not just of its form.
      if (query.after !== undefined && ofFamily(await deps.ctx.service.get(request.owner, query.after), family) === undefined) {
        throw errors.invalidQuery('after', `after must be the id of one of your ${family} tasks.`);
      }
      const rows = await deps.ctx.service.list({ owner: request.owner, kind: family, ...query, limit: query.limit + 1 });
      const page: Task[] = rows.slice(0, query.limit);
      const hasMore = rows.length > query.limit;
      const lastId = page.at(-1)?.id ?? null;
      if (family === 'video') return { object: 'list', data: page.map(body), has_more: hasMore, last_id: lastId };
      const items = page.map((task) => imageTaskData(task, deps.urlFor, deps.currency));
      return { code: 'success', message: '', data: { items, has_more: hasMore, last_id: lastId } };
    };
  };
}
