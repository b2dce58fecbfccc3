import { outageOf } from '../../outages.js';
import type { FastifyRequest } from 'fastify';
import { deprecationHeaders, type CheckedMedia, type ModelKind, type ModelRow, type ResolvedParams } from '../../catalog/index.js';
import { errors } from '../../errors.js';
import { dataUrlInputBytes } from '../../storage/inputs.js';
import { BudgetExceeded, InputsOverLimit, TasksOverLimit, type CreateLimits, type TaskService } from '../../tasks/service.js';
import { amountText } from '../../billing/index.js';
import type { Task } from '../../store/records.js';
import type { Family } from '../../wire/envelopes.js';
import { imageCreated, imageTask, videoTask } from '../../wire/task-bodies.js';
import { InFlightKeys, idempotencyKeyOf, requestHash } from '../tasks/idempotency.js';
import { inputBytesRefused, tasksRefused } from '../keys/rate-limit.js';
import {
  pathParam,
  type CreateRequest,
  type DepsOf,
  type FastAnswer,
  type FastCreate,
  type Handler,
  type HeaderSink,
  type RouteDeps,
  type Serialize,
} from '../route.js';

export type { HeaderSink } from '../route.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Size of the raw JSON body in bytes (set by the JSON parser). */
    bodyBytes: number;
    /** The data URLs of the body a parser thread checked, with its verdicts (large bodies only). */
    checkedMedia?: readonly CheckedMedia[];
  }
}

const JSON_TYPE = /^application\/json\s*(;|$)/i;

/** Body presence and type, checked before validation so an empty POST is never a 500. */
export function requireJsonBody(request: FastifyRequest): unknown {
  const type = request.headers['content-type'];
  if (type === undefined || !JSON_TYPE.test(type)) throw errors.unsupportedMediaType(type);
  if (request.body === undefined) throw errors.malformedJson('the body is empty.');
  return request.body;
}

/**
 * This owner's task of this family: what the owner-scoped read (`service.get(owner, id)`, so
 * another key's task is never seen) found, if it is of `family`; a task of the other family is
 * as unknown as a missing one. Every `.../{task_id}` route, and the status fast path, applies
 * it to its read.
 */
export function ofFamily(task: Task | undefined, family: Family): Task | undefined {
  return task !== undefined && task.kind === family ? task : undefined;
}

/** The same, or the family's 404 (`task_not_found`, param `task_id`). */
export async function requireOwnedTask(service: TaskService, request: FastifyRequest, family: Family): Promise<Task> {
  const id = pathParam(request, 'task_id');
  const task = ofFamily(await service.get(request.owner, id), family);
  if (task === undefined) throw errors.taskNotFound(id);
  return task;
}

/** The body of a task in its family's shape: what a status poll answers. */
export function taskBody({ urlFor, currency }: DepsOf<never, 'urlFor' | 'currency'>, family: Family): (task: Task) => object {
  return family === 'video' ? (task) => videoTask(task, urlFor, currency) : (task) => imageTask(task, urlFor, currency);
}

/** What a create did: made the task, or (an Idempotency-Key seen before with the same body) found it. */
export interface CreateOutcome {
  readonly task: Task;
  readonly replayed: boolean;
  /** The resolved parameters of a task just created (a replay has the stored ones only). */
  readonly params?: ResolvedParams;
}

/**
 * The one create path of a family, whichever dialect asked: Idempotency-Key, validation against
 * the catalog rows, per-key limits, budget (402), the insert, metrics. `body` is called after
 * the Idempotency-Key check (its 400 comes first); it is the request in the seed's words (the
 * front doors map theirs first, src/frontdoors/).
 */
export type CreateFlow = (request: CreateRequest, body: () => unknown, reply?: HeaderSink) => Promise<CreateOutcome>;

const NO_LIMITS: CreateLimits = {};

export function createFlow(deps: RouteDeps, kind: ModelKind): CreateFlow {
  const { ctx } = deps;
  // One labelled counter per model, resolved once: prom-client hashes a label object per call.
  const createdCounters = new Map<string, { inc(): void }>();
  const countCreated = (model: string): void => {
    let counter = createdCounters.get(model);
    if (counter === undefined) {
      counter = ctx.metrics.tasksCreated.tally({ kind, model });
      createdCounters.set(model, counter);
    }
    counter.inc();
  };
  const created = (task: Task, params: ResolvedParams): CreateOutcome => {
    ctx.keyLimits?.taskCreated(task.owner);
    countCreated(task.model);
    if (withLifecycle.size > 0) countDeprecated(task.model);
    return { task, replayed: false, params };
  };
  const now = ctx.now ?? Date.now;
  /**
   * A create on a deprecated model says so in its headers (and, once created, is counted by
   * model). Only declared rows have a lifecycle: a built-in model pays one property read.
   */
  const markDeprecated = (row: ModelRow, reply: HeaderSink | undefined): void => {
    if (row.lifecycle === undefined || reply === undefined) return;
    const headers = deprecationHeaders(row, now());
    if (headers === undefined) return;
    for (const [name, value] of Object.entries(headers)) reply.header(name, value);
  };
  // The models that have a lifecycle, by id: a created task of another model is not looked at further.
  const withLifecycle = new Map(ctx.models.filter((row) => row.lifecycle !== undefined).map((row) => [row.id, row]));
  const countDeprecated = (model: string): void => {
    const row = withLifecycle.get(model);
    if (row !== undefined && deprecationHeaders(row, now()) !== undefined) ctx.metrics.deprecatedCreates.inc({ model });
  };
  const inFlight = new InFlightKeys();
  // Amounts in the 402 name their currency, as every other figure of usage does.
  const money = (micro: number): string => `${deps.currency} ${amountText(micro)}`;
  /** A refused create: 402 with what the key holds against its budget (read only on a refusal). */
  const refuse = async (owner: string, refused: BudgetExceeded): Promise<never> => {
    const state = await ctx.store.keyBudgetState(owner, Date.now());
    ctx.metrics.budgetRefusals.inc({ reason: state?.period ?? 'lifetime' });
    const holds =
      state && state.budget !== null
        ? ` The key's ${state.period ?? 'lifetime'} budget is ${money(state.budget)}; it has spent ${money(state.spent)} and holds ${money(state.reserved)} for unfinished tasks.`
        : '';
    throw errors.budgetExceeded(`This task may cost up to ${money(refused.maxCost)}, more than what is left of the API key's budget.${holds}`);
  };
  // The insert's reservation refused the inputs (another create of the key got there first): the pre-check's 429.
  const overLimit = async (owner: string, refused: InputsOverLimit): Promise<never> => {
    throw inputBytesRefused(await ctx.service.activeInputBytes(owner), refused.bytes, refused.limit);
  };
  // A `catch` on the create's own promise, not an async wrapper: a create pays each promise turn.
  const budgeted = <T>(request: CreateRequest, create: () => Promise<T>): Promise<T> =>
    create().catch((error: unknown) => {
      if (error instanceof BudgetExceeded) return refuse(request.owner, error);
      if (error instanceof InputsOverLimit) return overLimit(request.owner, error);
      if (error instanceof TasksOverLimit) throw tasksRefused(request.apiKey.maxTasksInFlight ?? ctx.keyLimits?.inFlightDefault ?? 0);
      throw error;
    });
  return async (request, readBody, reply) => {
    const key = idempotencyKeyOf(request);
    const body = readBody();
    const validate = () => {
      const { bodyBytes, checkedMedia } = request;
      const { allowsModel } = request.apiKey;
      const result = ctx.validator.validate(kind, checkedMedia ? { body, bodyBytes, allowsModel, checkedMedia } : { body, bodyBytes, allowsModel });
      if (!result.ok) throw result.error;
      markDeprecated(result.row, reply);
      return result;
    };
    // A valid request is told about the in-flight limits; an invalid one gets its 400 first.
    const keyLimits = ctx.keyLimits;
    // Most keys have neither limit: no promise to wait for, no data URLs to count.
    const admits = keyLimits !== undefined && !keyLimits.admitsAll(request.apiKey.maxTasksInFlight);
    const admit = async (params: Readonly<Record<string, unknown>>): Promise<void> => {
      if (!admits) return;
      await keyLimits.admitTask(request.owner, request.apiKey.maxTasksInFlight);
      await keyLimits.admitInputBytes(request.owner, dataUrlInputBytes(params));
    };
    // The insert's transaction guards the key's tasks in flight (its own limit, else this default).
    const limits = ctx.keyLimits === undefined ? NO_LIMITS : { inFlight: ctx.keyLimits.inFlightDefault };
    if (key === undefined) {
      const result = validate();
      if (admits) await admit(result.params);
      return created(await budgeted(request, () => ctx.service.create(request.owner, result.row, result.params, limits)), result.params);
    }
    // Validation runs under the key, so a second request meanwhile is 409; a refused one takes no key.
    return inFlight.hold(request.owner, key, async () => {
      const result = validate();
      const done = await budgeted(request, () =>
        ctx.service.createOnce(request.owner, result.row, result.params, { key, requestHash: requestHash(kind, body) }, () => admit(result.params), limits),
      );
      if (done.outcome === 'reused') throw errors.idempotencyKeyReused();
      if (done.outcome === 'created') return created(done.task, result.params);
      return { task: done.task, replayed: true };
    });
  };
}

/** The 200 body of a task just created: the video task, or the image family's short answer. */
function createdBody({ urlFor, currency }: RouteDeps, kind: ModelKind): (task: Task) => object {
  return kind === 'video' ? (task) => videoTask(task, urlFor, currency) : imageCreated;
}

/** `POST /v1/video/generations`, `POST /v1/images/generations/async`. */
export function createTask(kind: ModelKind): (deps: RouteDeps) => Handler {
  return (deps) => {
    const create = createFlow(deps, kind);
    const answer = createdBody(deps, kind);
    const replayBody = taskBody(deps, kind);
    return async (request, reply) => {
      const { task, replayed } = await create(request, () => requireJsonBody(request), reply);
      if (!replayed) return answer(task);
      reply.header('idempotent-replayed', 'true');
      return replayBody(task);
    };
  };
}

/**
 * The same create for the fast path (http/fast-create.ts), which takes only requests without an
 * Idempotency-Key (so never a replay) and with a JSON body it has parsed.
 */
export function createTaskFast(kind: ModelKind): (deps: RouteDeps) => FastCreate {
  return (deps) => {
    const create = createFlow(deps, kind);
    const answer = createdBody(deps, kind);
    // `create` is an async function (it never throws, it rejects): no async wrapper around it.
    return (request, body, headers) => create(request, () => body, headers).then((outcome) => answer(outcome.task));
  };
}

/** `GET /v1/video/generations/{task_id}`, `GET /v1/images/generations/async/{task_id}`. */
export function getTask(family: Family): (deps: RouteDeps) => Handler {
  return (deps) => {
    const body = taskBody(deps, family);
    return async (request, reply) => {
      try {
        return body(await requireOwnedTask(deps.ctx.service, request, family));
      } catch (error) {
        // The database is unreachable: a final task this process holds the body of still
        // answers (a final task never changes); anything else is the outage's 503.
        const held = outageOf(error) === 'database' ? deps.finalBodies.get(request.owner, family, pathParam(request, 'task_id')) : undefined;
        if (held === undefined) throw error;
        return reply.type('application/json; charset=utf-8').send(held);
      }
    };
  };
}

/**
 * The same status read, for the fast path: an unknown task is left to the router's 404. A task's
 * body is serialized once and then answered from those bytes without a read until the task
 * changes (final-bodies.ts says when bodies are dropped: a running task's at its next change).
 */
export function getTaskFast(family: Family): (deps: RouteDeps, serialize: Serialize) => FastAnswer {
  return (deps, serialize) => {
    const body = taskBody(deps, family);
    const cache = deps.finalBodies;
    // One `then`, not an async function: on the fast path each promise turn shows in the bench.
    return (owner, params) => {
      const id = params['task_id'] ?? '';
      const hit = cache.get(owner, family, id);
      if (hit !== undefined) return hit;
      const pending = cache.beginRead(id);
      return deps.ctx.service.get(owner, id).then(
        (read) => {
          const task = ofFamily(read, family);
          if (task === undefined) {
            cache.endRead(id, pending);
            return undefined;
          }
          return cache.keep(task, family, serialize(body(task)), pending);
        },
        (error: unknown) => {
          cache.endRead(id, pending);
          throw error;
        },
      );
    };
  };
}
