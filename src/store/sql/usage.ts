import { operation } from '../dialect.js';
import type { Int } from '../rows.js';
import { periodStart } from '../usage-sql.js';

/**
 * Budgets and usage (migration 9). A key's `spent` is the cost of its tasks final in the period
 * starting at `spent_period`; the charge trigger keeps it, `reserved` and the `usage_daily`
 * rollup. These statements reserve at create and read the figures back.
 */

/**
 * What the key spent in the period holding `now` (ms): `spent` if it belongs to that period,
 * else 0 (the period rolled over and nothing has been charged in the new one yet).
 */
export function spentNow(dialect: 'sqlite' | 'postgres'): string {
  // Cast: SQLite binds a JS number as REAL (and integer division is what a period start needs);
  // PostgreSQL would otherwise type the parameter as a 32-bit integer.
  return `(CASE WHEN spent_period >= ${periodStart(dialect, 'budget_period', 'CAST(@now AS BIGINT)')} THEN spent ELSE 0 END)`;
}

/** Gives a reservation back (its create took no task: the idempotency key was held). */
export const releaseReservation = operation<{ id: string; amount: number }>(
  'release-reservation',
  () => `UPDATE api_keys SET reserved = reserved - @amount WHERE id = @id`,
);

export interface KeyBudgetRow {
  budget: Int | null;
  budget_period: string | null;
  reserved: Int;
  spent: Int;
  spent_period: Int;
}

/** A key's budget and what it holds now: `spent` is this period's (0 once the period rolled over). */
export const keyBudgetState = operation<{ id: string; now: number }, KeyBudgetRow>(
  'key-budget-state',
  (dialect) => `SELECT budget, budget_period, reserved, ${spentNow(dialect)} AS spent, spent_period FROM api_keys WHERE id = @id`,
);

export interface UsageRow {
  key_id: string;
  model: string;
  day: string;
  tasks: Int;
  seconds: Int;
  images: Int;
  cost: Int;
}

/**
 * The rollup summed over the days [startDay, endDay) ('YYYY-MM-DD'), grouped by the dimensions
 * whose flag is 1 (the others read as ''). `key` '' means every key (the operator's report);
 * a key's report reads its own rows through the primary key (key_id, model, day), the report
 * across keys the days' index.
 */
function report(byKey: boolean): string {
  return `SELECT ${byKey ? `CASE WHEN @byKey = 1 THEN key_id ELSE '' END` : 'key_id'} AS key_id,
              CASE WHEN @byModel = 1 THEN model ELSE '' END AS model,
              CASE WHEN @byDay = 1 THEN day ELSE '' END AS day,
              sum(tasks) AS tasks, sum(seconds) AS seconds, sum(images) AS images, sum(cost) AS cost
         FROM usage_daily
        WHERE ${byKey ? '' : 'key_id = @key AND '}day >= @startDay AND day < @endDay
        GROUP BY 1, 2, 3
        ORDER BY 3, 2, 1`;
}

interface ReportParams {
  startDay: string;
  endDay: string;
  byModel: number;
  byDay: number;
}

export const keyUsageReport = operation<ReportParams & { key: string }, UsageRow>('key-usage-report', () => report(false));

export const usageReportAcrossKeys = operation<ReportParams & { byKey: number }, UsageRow>('usage-report-across-keys', () => report(true));
