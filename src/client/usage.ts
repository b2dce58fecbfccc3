import { APIPromise, responseInfo } from './api-promise.js';
import { MediagateError } from './errors.js';
import { unexpectedResponse, type HttpCore, type HttpResult } from './http.js';
import type { RequestOptions, UsageDimension, UsageParams, UsageReport, UsageTime } from './types.js';
import { isRecord } from './records.js';

const isCount = (value: unknown): boolean => typeof value === 'number' && Number.isFinite(value);

/** The fields every report has: `{object:'usage', currency, start, end, totals, data}`. */
export function isReportShape(value: unknown): value is Readonly<Record<string, unknown>> & { data: readonly unknown[] } {
  return (
    isRecord(value) &&
    value['object'] === 'usage' &&
    typeof value['currency'] === 'string' &&
    isCount(value['start']) &&
    isCount(value['end']) &&
    isRecord(value['totals']) &&
    isCount(value['totals']['cost']) &&
    Array.isArray(value['data']) &&
    value['data'].every((row) => isRecord(row) && isCount(row['tasks']) && isCount(row['cost']))
  );
}

function isUsageReport(value: unknown): value is UsageReport {
  return isReportShape(value) && isRecord(value['budget']) && isCount(value['budget']['spent']) && isCount(value['budget']['reserved']);
}

/** Unix seconds of a Date or a number (whole seconds; a Date is taken down to its second). */
export function unixSeconds(name: string, value: UsageTime | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = value instanceof Date ? Math.floor(value.getTime() / 1000) : value;
  if (!Number.isInteger(seconds) || seconds < 0) throw new MediagateError(`${name} must be a Date or whole unix seconds (>= 0); got ${String(value)}.`);
  return seconds;
}

/** `group_by` as the server reads it: dimensions joined by commas. */
export function groupByQuery(value: string | readonly string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  const parts = typeof value === 'string' ? [value] : value;
  if (parts.length === 0) throw new MediagateError('groupBy must name at least one dimension.');
  return parts.join(',');
}

export function report<T>(
  http: HttpCore,
  path: string,
  query: Readonly<Record<string, string | number | undefined>>,
  options: RequestOptions | undefined,
  check: (value: unknown) => value is T,
): APIPromise<T> {
  return new APIPromise(
    http.request({ method: 'GET', path, query, idempotent: true }, options).then((result: HttpResult) => {
      if (!check(result.body)) throw unexpectedResponse(result, 'a usage report {object, currency, start, end, totals, data}');
      return { data: result.body, response: responseInfo(result.status, result.headers) };
    }),
  );
}

/** `client.usage`: the calling key's usage and budget (`GET /v1/usage`). */
export class UsageReports {
  readonly #http: HttpCore;

  constructor(http: HttpCore) {
    this.#http = http;
  }

  /**
   * Final tasks of this key (failed and cancelled ones count, at cost 0) by model and UTC day,
   * their totals, and the key's budget: spent and reserved in the current period, and when it
   * resets. Default range: the current budget period, else the last 30 days.
   *
   * ```ts
   * const { totals, budget, currency } = await client.usage.retrieve();
   * const byModel = await client.usage.retrieve({ start: new Date('2026-11-01'), groupBy: 'model' });
   * byModel.data[0]?.model; // string (day is null: not grouped by day)
   * ```
   */
  retrieve<D extends UsageDimension = UsageDimension>(params: UsageParams<D> = {}, options?: RequestOptions): APIPromise<UsageReport<D>> {
    const query = { start: unixSeconds('start', params.start), end: unixSeconds('end', params.end), group_by: groupByQuery(params.groupBy) };
    return report(this.#http, '/v1/usage', query, options, (value): value is UsageReport<D> => isUsageReport(value));
  }
}
