import type { Dialect } from './dialect.js';

/**
 * The SQL of usage periods and days, written once for the charge trigger (migration 9) and the
 * statements that read budgets. Times in `tasks` are milliseconds since the epoch; periods are
 * unix seconds; days are UTC 'YYYY-MM-DD'.
 */

/** The UTC day of a time in milliseconds, as 'YYYY-MM-DD'. */
export function usageDay(dialect: Dialect, ms: string): string {
  return dialect === 'postgres' ? `to_char(to_timestamp(${ms} / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD')` : `strftime('%Y-%m-%d', ${ms} / 1000, 'unixepoch')`;
}

/**
 * The start (unix seconds) of the budget period holding a time in milliseconds: its UTC day
 * for 'day', its UTC month for 'month', 0 for a lifetime budget or none.
 */
export function periodStart(dialect: Dialect, period: string, ms: string): string {
  const month =
    dialect === 'postgres'
      ? `CAST(extract(epoch FROM date_trunc('month', to_timestamp(${ms} / 1000) AT TIME ZONE 'UTC')) AS bigint)`
      : `CAST(strftime('%s', ${ms} / 1000, 'unixepoch', 'start of month') AS INTEGER)`;
  return `(CASE ${period} WHEN 'day' THEN (${ms} / 86400000) * 86400 WHEN 'month' THEN ${month} ELSE 0 END)`;
}
