import type { EventStreams } from './tasks/event-streams.js';
import type { FinalBodies } from './tasks/final-bodies.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { HttpContext } from './context.js';
import type { Family } from '../wire/envelopes.js';
import type { UrlFor } from '../wire/task-bodies.js';
import type { ModelRow } from '../catalog/index.js';

/** Methods a route may declare; HEAD is answered wherever GET is (Fastify's `exposeHeadRoutes`). */
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a route's handler is built from, once per server. */
export interface RouteDeps {
  readonly ctx: HttpContext;
  readonly urlFor: UrlFor;
  /** The currency of usage figures: the pricing file's, "USD" without one. */
  readonly currency: string;
  /** Aborted when the server starts closing: long-lived responses (event streams) end then. */
  readonly closing: AbortSignal;
  /** The routes this server has (the OpenAPI document describes exactly those). */
  readonly routes: readonly Route[];
  /** The event streams open in this process, per key (caps, lifetime, key re-checks). */
  readonly streams: EventStreams;
  /** Serialized bodies of final tasks (final-bodies.ts); off when the context has no cache size. */
  readonly finalBodies: FinalBodies;
}

/**
 * The part of `RouteDeps` a feature's handlers read: the context fields `K` and the server parts
 * `D`. A handler typed with it says what its module gives it and cannot reach the rest of the
 * bag; the server still passes the whole `RouteDeps`, which is assignable to every such part.
 */
export type DepsOf<K extends keyof HttpContext, D extends Exclude<keyof RouteDeps, 'ctx'> = never> = Pick<RouteDeps, D> & {
  readonly ctx: Pick<HttpContext, K>;
};

export type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/**
 * A GET answered beneath the framework (http/dispatch.ts): the 200 body for `owner`, or
 * undefined to leave the request to the router, which then gives whatever other answer is due.
 * Only for a key already resolved, and the body goes through the route's `response` schema:
 * an object is serialized by it, a Buffer is bytes it serialized before (`serialize`, given to
 * the answer's maker). Bytes at hand come back at once, without a promise.
 */
export type FastAnswer = (owner: string, params: Readonly<Record<string, string>>) => Buffer | Promise<object | Buffer | undefined>;

/** What a create reads of its request: a Fastify request, or the fast path's (http/fast-create.ts). */
export type CreateRequest = Pick<FastifyRequest, 'headers' | 'owner' | 'apiKey' | 'bodyBytes' | 'checkedMedia'>;

/** Where a create's own headers go (the deprecation headers of a declared model's lifecycle). */
export interface HeaderSink {
  header(name: string, value: string): unknown;
}

/**
 * A create answered beneath the framework (http/fast-create.ts): the 200 body of the task made
 * from `body` (already parsed) for the request's key; headers the create adds (deprecation) go
 * to `headers`. It throws what the router's handler would throw, for the same error answer.
 */
export type FastCreate = (request: CreateRequest, body: unknown, headers: HeaderSink) => Promise<object>;

/** The route's `response` schema compiled to a serializer (the one the fast path writes with). */
export type Serialize = (body: object) => string;

/** What an operation's OpenAPI description is built from: the models this server offers. */
export interface OperationContext {
  readonly models: readonly ModelRow[];
}

/**
 * An OpenAPI 3.1 Operation object (operationId, summary, description, tags, parameters,
 * requestBody, responses). The responses every keyed operation can give (401, 429, 500 in the
 * row's family envelope) are added by the fold (openapi.ts), not repeated in each row.
 */
export type OpenApiOperation = Readonly<Record<string, unknown>> & { readonly responses: Readonly<Record<string, unknown>> };

/** A row that is not part of the API's description (console pages, probes, file bytes), and why. */
export interface Undocumented {
  readonly undocumented: string;
}

/**
 * A row's OpenAPI side, declared next to its handler (`routes/<feature>-docs.ts`) and spread
 * into the row: its operation, the component schemas that operation names, and the top-level
 * `webhooks` (requests the service sends) that come with it.
 */
export interface RouteDocs {
  readonly operation: ((docs: OperationContext) => OpenApiOperation) | Undocumented;
  readonly components?: Readonly<Record<string, unknown>>;
  readonly webhooks?: Readonly<Record<string, unknown>>;
}

/** One row of the route table (http/routes.ts). */
export interface Route {
  /** Fastify pattern: `:name` is one path segment, a final `*` the rest of the path. */
  readonly path: string;
  readonly methods: readonly Method[];
  /** The error envelope of the route (wire/envelopes.ts); agrees with `familyOf(path)` (a spec checks). */
  readonly family: Family;
  /** The `route` label of the request metrics; default `path`. */
  readonly metricsLabel?: string;
  /**
   * Whether the route takes an API key (the auth hook, then the key's request quota): `true` a
   * client key, `'admin'` an admin key (docs/admin.md); each refuses the other role.
   */
  readonly auth: boolean | 'admin';
  /** JSON Schema of the 200 body: Fastify's serializer for it, and the fast answer's. */
  readonly response?: object;
  readonly handler: (deps: RouteDeps) => Handler;
  /** The request body is read (up to the body cap) and ignored, whatever its type (cancel). */
  readonly ignoresBody?: boolean;
  /** Content-type parsers of the row's own (besides JSON), registered on a scope of its own: the front doors' multipart. */
  readonly parsers?: (scope: FastifyInstance) => Promise<void>;
  /**
   * The row's OpenAPI operation, one per method of the row; `/openapi.json` is the fold of the
   * rows' operations (openapi.ts). Every row declares one, or says why it has none.
   */
  readonly operation: RouteDocs['operation'];
  /** Component schemas this row's operation refers to (`#/components/schemas/<name>`). */
  readonly components?: RouteDocs['components'];
  /** OpenAPI 3.1 top-level `webhooks` entries this row's feature sends. */
  readonly webhooks?: RouteDocs['webhooks'];
  /** GET only; needs `auth` and `response`, and a path without `*`. */
  readonly fast?: (deps: RouteDeps, serialize: Serialize) => FastAnswer;
  /** POST only, with `auth` and a path without parameters: the create fast path (fast-create.ts). */
  readonly fastCreate?: (deps: RouteDeps) => FastCreate;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The table row a route was registered from (server.ts), for metrics and envelopes. */
    route?: Route;
  }
}

/** A path parameter of a matched route, as a string (Fastify types `params` as unknown). */
export function pathParam(request: FastifyRequest, name: string): string {
  const params = request.params;
  const value = typeof params === 'object' && params !== null ? (params as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? value : '';
}
