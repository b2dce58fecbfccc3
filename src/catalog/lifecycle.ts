import type { ModelRow } from './types.js';

/**
 * A declared model's lifecycle (docs/guides/models.md): deprecated from `deprecated_at` (creates
 * still succeed, with Deprecation/Sunset/Link headers), retired from `retires_at` (creates are
 * refused; the model leaves the listings; its id still answers GET /v1/models/{id}).
 * Every function takes the time, so a clock can be injected and nothing is frozen at start.
 */

/** What GET /v1/models shows of a lifecycle: fields not set are omitted. */
export interface LifecycleView {
  readonly deprecated: boolean;
  readonly deprecated_at?: string;
  readonly retires_at?: string;
  readonly successor?: string;
  readonly retired?: true;
}

export const isRetired = (row: ModelRow, nowMs: number): boolean => row.lifecycle?.retiresAt !== undefined && nowMs >= row.lifecycle.retiresAt;

export const isDeprecated = (row: ModelRow, nowMs: number): boolean => row.lifecycle?.deprecatedAt !== undefined && nowMs >= row.lifecycle.deprecatedAt;

const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

export function lifecycleView(row: ModelRow, nowMs: number): LifecycleView | undefined {
  const life = row.lifecycle;
  if (life === undefined) return undefined;
  return {
    deprecated: isDeprecated(row, nowMs),
    ...(life.deprecatedAt === undefined ? {} : { deprecated_at: rfc3339(life.deprecatedAt) }),
    ...(life.retiresAt === undefined ? {} : { retires_at: rfc3339(life.retiresAt) }),
    ...(life.successor === undefined ? {} : { successor: life.successor }),
    ...(isRetired(row, nowMs) ? { retired: true as const } : {}),
  };
}

/** The headers a create on a deprecated model carries (RFC 9745, RFC 8594, RFC 8288); none before `deprecated_at`. */
export function deprecationHeaders(row: ModelRow, nowMs: number): Record<string, string> | undefined {
  const life = row.lifecycle;
  if (life?.deprecatedAt === undefined || nowMs < life.deprecatedAt) return undefined;
  return {
    deprecation: `@${Math.floor(life.deprecatedAt / 1000)}`,
    ...(life.retiresAt === undefined ? {} : { sunset: new Date(life.retiresAt).toUTCString() }),
    ...(life.successor === undefined ? {} : { link: `</v1/models/${life.successor}>; rel="successor-version"` }),
  };
}

/** The refusal's message on a retired model: it names the successor. */
export function retiredMessage(row: ModelRow): string {
  const successor = row.lifecycle?.successor;
  return `Model '${row.id}' was retired${successor === undefined ? '' : `; use '${successor}' instead`}.`;
}

/**
 * How many lifecycle dates of `rows` have passed: what the listings built from the rows depend on.
 * A view cached with this number is rebuilt when a date passes, without a restart; with no
 * lifecycle among the rows it is always 0.
 */
export function lifecycleEpoch(rows: readonly ModelRow[]): (nowMs: number) => number {
  const dates = rows
    .flatMap((row) => [row.lifecycle?.deprecatedAt, row.lifecycle?.retiresAt])
    .filter((ms): ms is number => ms !== undefined)
    .sort((a, b) => a - b);
  // A binary search: a listing request costs log2(dates) comparisons, however many dates passed.
  return (nowMs) => {
    let low = 0;
    let high = dates.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if ((dates[mid] ?? Infinity) <= nowMs) low = mid + 1;
      else high = mid;
    }
    return low;
  };
}

/** The rows still offered at `nowMs` (retired ones leave listings, OpenAPI, /docs and the console). */
export const offeredRows = (rows: readonly ModelRow[], nowMs: number): readonly ModelRow[] =>
  rows.some((row) => row.lifecycle?.retiresAt !== undefined) ? rows.filter((row) => !isRetired(row, nowMs)) : rows;
