import { APIPromise, responseInfo } from './api-promise.js';
import { resolveClientOptions, type ClientOptions } from './client.js';
import { MediagateError, apiErrorFrom } from './errors.js';
import { HttpCore, fetchFailure, parseBody, unexpectedResponse, type HttpResult } from './http.js';
import { Page } from './pagination.js';
import type {
  AdminKey,
  AdminKeyCreateParams,
  AdminKeyCreated,
  AdminKeyListParams,
  AdminKeyUpdateParams,
  AdminUsageDimension,
  AdminUsageExportParams,
  AdminUsageParams,
  AdminUsageReport,
  RequestOptions,
} from './types.js';
import { groupByQuery, isReportShape, report, unixSeconds } from './usage.js';
import { isRecord } from './records.js';

/**
 * The admin client: key administration and usage across keys (`/v1/admin/*`), with an admin key.
 * A class of its own rather than a part of `Mediagate` because the two keys never overlap: an
 * admin key is refused on every client call (401) and a client key on every admin call (403
 * PermissionDeniedError `admin_key_required`).
 */

const KEYS = '/v1/admin/keys';

const isAmount = (value: unknown): boolean => typeof value === 'number' && Number.isFinite(value);

function isAdminKey(value: unknown): value is AdminKey {
  return (
    isRecord(value) &&
    typeof value['id'] === 'string' &&
    typeof value['name'] === 'string' &&
    (value['budget'] === null || isAmount(value['budget'])) &&
    typeof value['disabled'] === 'boolean' &&
    (value['models'] === null || Array.isArray(value['models']))
  );
}

function isCreated(value: unknown): value is AdminKeyCreated {
  return isRecord(value) && typeof value['key'] === 'string' && isAdminKey(value);
}

function isKeyList(value: unknown): value is { data: AdminKey[]; has_more: boolean; last_id: string | null } {
  return (
    isRecord(value) &&
    Array.isArray(value['data']) &&
    value['data'].every(isAdminKey) &&
    typeof value['has_more'] === 'boolean' &&
    (typeof value['last_id'] === 'string' || value['last_id'] === null)
  );
}

function keyPath(id: string): string {
  if (id === '') throw new MediagateError('A key id is required.');
  return `${KEYS}/${encodeURIComponent(id)}`;
}

function adminKey(result: HttpResult): AdminKey {
  if (!isAdminKey(result.body)) throw unexpectedResponse(result, 'a key {id, name, budget, ..., disabled}');
  return result.body;
}

/** `admin.keys`: client keys as an operator hands them out. */
export class AdminKeys {
  readonly #http: HttpCore;

  constructor(http: HttpCore) {
    this.#http = http;
  }

  /**
   * Makes a client key. The answer's `key` (`mg_...`) is shown this once: the server keeps only
   * its hash. Not retried on a lost answer (a second key would be made).
   */
  create(params: AdminKeyCreateParams, options?: RequestOptions): APIPromise<AdminKeyCreated> {
    return new APIPromise(
      this.#http.request({ method: 'POST', path: KEYS, body: params, idempotent: false }, options).then((result) => {
        if (!isCreated(result.body)) throw unexpectedResponse(result, 'a key with its secret {id, name, key, ...}');
        return { data: result.body, response: responseInfo(result.status, result.headers) };
      }),
    );
  }

  /** One page of keys, newest first; iterate it (`for await`) for every key of every page. */
  async list(params: AdminKeyListParams = {}, options?: RequestOptions): Promise<Page<AdminKey>> {
    const result = await this.#http.request({ method: 'GET', path: KEYS, query: { limit: params.limit, after: params.after }, idempotent: true }, options);
    if (!isKeyList(result.body)) throw unexpectedResponse(result, 'a list of keys {object, data, has_more, last_id}');
    return new Page({ data: result.body.data, hasMore: result.body.has_more, lastId: result.body.last_id }, (after) =>
      this.list({ ...params, after }, options),
    );
  }

  /** The key with what it has spent and holds reserved in its current budget period. A KeyNotFoundError when unknown or revoked. */
  retrieve(id: string, options?: RequestOptions): APIPromise<AdminKey> {
    return this.#call({ method: 'GET', path: keyPath(id) }, options);
  }

  /**
   * Changes any of the create fields, and `disabled`; null clears a setting. Every process of
   * the service applies it within 5 seconds. A budget added now holds only tasks created after.
   */
  update(id: string, params: AdminKeyUpdateParams, options?: RequestOptions): APIPromise<AdminKey> {
    // Setting the same fields twice leaves the same key: safe to retry.
    return this.#call({ method: 'PATCH', path: keyPath(id), body: params }, options);
  }

  /** Revokes the key for good (401 `invalid_api_key` everywhere within 5 seconds); its usage stays in the reports. */
  delete(id: string, options?: RequestOptions): APIPromise<void> {
    return new APIPromise(
      this.#http
        .request({ method: 'DELETE', path: keyPath(id), idempotent: true }, options)
        .then((result) => ({ data: undefined, response: responseInfo(result.status, result.headers) })),
    );
  }

  #call(spec: { method: 'GET' | 'PATCH'; path: string; body?: object }, options: RequestOptions | undefined): APIPromise<AdminKey> {
    return new APIPromise(
      this.#http
        .request({ ...spec, idempotent: true }, options)
        .then((result) => ({ data: adminKey(result), response: responseInfo(result.status, result.headers) })),
    );
  }
}

/** `admin.usage`: the usage report across keys. */
export class AdminUsage {
  readonly #http: HttpCore;

  constructor(http: HttpCore) {
    this.#http = http;
  }

  /**
   * Final tasks by key, model and UTC day (default all three; `groupBy: 'key'` for one row per
   * key), and their totals; `keyId` narrows it to one key. Default range: the last 30 days.
   */
  retrieve<D extends AdminUsageDimension = AdminUsageDimension>(params: AdminUsageParams<D> = {}, options?: RequestOptions): APIPromise<AdminUsageReport<D>> {
    const query = {
      start: unixSeconds('start', params.start),
      end: unixSeconds('end', params.end),
      group_by: groupByQuery(params.groupBy),
      key_id: params.keyId,
    };
    return report(this.#http, '/v1/admin/usage', query, options, (value): value is AdminUsageReport<D> => isReportShape(value));
  }

  /**
   * The spend of every key, model and UTC day from `from` through `to` (both included) as the
   * server streams it: a FinOps FOCUS CSV (RFC 4180), read as it arrives, so an export of any
   * length need not fit in memory. `timeout` bounds the wait for the response's start; an
   * error answer throws as every call does. Not retried: read the stream once.
   *
   * ```ts
   * const csv = await admin.usage.export({ format: 'focus', from: '2026-11-01', to: '2026-11-30' });
   * await pipeline(Readable.fromWeb(csv), createWriteStream('focus.csv'));
   * ```
   */
  async export(params: AdminUsageExportParams, options: RequestOptions = {}): Promise<ReadableStream<Uint8Array>> {
    const spec = {
      method: 'GET' as const,
      path: '/v1/admin/usage/export',
      query: { format: params.format, from: params.from, to: params.to },
      idempotent: true,
    };
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => controller.abort(), options.timeout ?? this.#http.timeout);
    let response: Response;
    try {
      response = await this.#http.fetch(this.#http.url(spec), {
        method: 'GET',
        headers: this.#http.headers(spec, options, 'text/csv'),
        signal: controller.signal,
      });
    } catch (error) {
      options.signal?.removeEventListener('abort', onAbort);
      throw fetchFailure(error, this.#http.baseURL, options.signal);
    } finally {
      clearTimeout(timer);
    }
    if (response.status < 200 || response.status >= 300 || response.body === null) {
      options.signal?.removeEventListener('abort', onAbort);
      const body = parseBody(await response.text().catch(() => ''));
      if (response.status >= 200 && response.status < 300) throw unexpectedResponse({ status: response.status, headers: response.headers, body }, 'a CSV body');
      throw apiErrorFrom(response.status, response.headers, body);
    }
    return response.body;
  }
}

/**
 * The admin client.
 *
 * ```ts
 * const admin = new MediagateAdmin(); // MEDIAGATE_BASE_URL, MEDIAGATE_ADMIN_KEY
 * const created = await admin.keys.create({ name: 'team-a', budget: 50, budget_period: 'month', models: ['vendora/*'] });
 * console.log(created.key); // shown this once
 * await admin.keys.update(created.id, { disabled: true });
 * const { data } = await admin.usage.retrieve({ groupBy: 'key' });
 * ```
 */
export class MediagateAdmin {
  readonly baseURL: string;
  readonly keys: AdminKeys;
  readonly usage: AdminUsage;

  /** The options of `new Mediagate(...)`; `apiKey` defaults to `MEDIAGATE_ADMIN_KEY`. */
  constructor(options: ClientOptions = {}) {
    const resolved = resolveClientOptions(options, 'MEDIAGATE_ADMIN_KEY');
    const http = new HttpCore(resolved);
    this.baseURL = resolved.baseURL;
    this.keys = new AdminKeys(http);
    this.usage = new AdminUsage(http);
  }
}
