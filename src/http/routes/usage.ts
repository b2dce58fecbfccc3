import type { FastifyRequest } from 'fastify';
import { formatAmount } from '../../billing/index.js';
import { errors } from '../../errors.js';
import type { KeyBudgetState, UsageRecord } from '../../store/records.js';
import type { DepsOf, Handler } from '../route.js';
import { KEY_ID } from './admin-keys.js';
import { queryValue } from './task-ops.js';

/** The usage module's: the usage rows and budgets, in the pricing's currency. */
type UsageDeps = DepsOf<'store', 'currency'>;

/**
 * Usage reports (docs/usage-and-budgets.md): `GET /v1/usage` for the calling key, and the
 * operator's report across keys (`GET /v1/admin/usage`, mounted under the admin keys). Both
 * read the daily rollup (`usage_daily`, kept by the store's charge trigger), never the tasks:
 * a report over a million tasks reads days x models rows.
 *
 * A report covers whole UTC days: `start` is taken back to the start of its day and `end`
 * forward to the end of its day (a task belongs to the day it became final), and the answer
 * says which range it covered.
 */

const DAY_S = 86_400;
/** The default range without a budget period: the last 30 days, today included. */
const DEFAULT_DAYS = 30;
/** Unix seconds, as a query gives them. */
const UNIX_SECONDS = /^\d{1,11}$/;

type Dimension = 'key' | 'model' | 'day';

const dayOf = (seconds: number): string => new Date(seconds * 1000).toISOString().slice(0, 10);
const startOfDay = (seconds: number): number => Math.floor(seconds / DAY_S) * DAY_S;

/** The start (unix seconds) of the budget period holding `seconds`, and of the next one. */
export function budgetPeriod(period: 'day' | 'month', seconds: number): { start: number; end: number } {
  if (period === 'day') return { start: startOfDay(seconds), end: startOfDay(seconds) + DAY_S };
  const date = new Date(seconds * 1000);
  return {
    start: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1) / 1000,
    end: Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) / 1000,
  };
}

function timeParam(request: FastifyRequest, name: 'start' | 'end'): number | undefined {
  const text = queryValue(request, name);
  if (text === undefined) return undefined;
  if (!UNIX_SECONDS.test(text)) throw errors.invalidQuery(name, `${name} must be a time in unix seconds (a whole number).`);
  return Number(text);
}

function groupBy(request: FastifyRequest, allowed: readonly Dimension[], fallback: readonly Dimension[]): ReadonlySet<Dimension> {
  const text = queryValue(request, 'group_by');
  if (text === undefined) return new Set(fallback);
  const parts = text.split(',').map((part) => part.trim());
  const dimensions = new Set<Dimension>();
  for (const part of parts) {
    if (!(allowed as readonly string[]).includes(part) || dimensions.has(part as Dimension)) {
      throw errors.invalidQuery('group_by', `group_by must be one or more of ${allowed.join(', ')}, separated by commas, each once.`);
    }
    dimensions.add(part as Dimension);
  }
  return dimensions;
}

/** The report's range in whole UTC days: [start, end) in unix seconds. */
function range(request: FastifyRequest, now: number, defaultRange: { start: number; end: number }): { start: number; end: number } {
  const start = timeParam(request, 'start');
  const end = timeParam(request, 'end');
  let from: number;
  let to: number;
  if (start === undefined && end === undefined) ({ start: from, end: to } = defaultRange);
  else if (start === undefined) {
    to = end ?? now;
    from = to - DEFAULT_DAYS * DAY_S;
  } else {
    from = start;
    to = end ?? Math.max(now, start + 1);
  }
  if (to <= from) throw errors.invalidQuery('end', 'end must be after start.');
  // Whole days: back to the start of the first, forward to the end of the last.
  return { start: startOfDay(from), end: startOfDay(to - 1) + DAY_S };
}

function lastDays(now: number): { start: number; end: number } {
  const end = startOfDay(now) + DAY_S;
  return { start: end - DEFAULT_DAYS * DAY_S, end };
}

interface Totals {
  tasks: number;
  seconds: number;
  images: number;
  cost: number;
}

function row(record: UsageRecord, dimensions: ReadonlySet<Dimension>, withKey: boolean): object {
  return {
    ...(withKey ? { key_id: dimensions.has('key') ? record.keyId : null } : {}),
    model: dimensions.has('model') ? record.model : null,
    day: dimensions.has('day') ? record.day : null,
    tasks: record.tasks,
    seconds: record.seconds,
    images: record.images,
    cost: formatAmount(record.cost),
  };
}

function totals(records: readonly UsageRecord[]): object {
  const sum: Totals = { tasks: 0, seconds: 0, images: 0, cost: 0 };
  for (const record of records) {
    sum.tasks += record.tasks;
    sum.seconds += record.seconds;
    sum.images += record.images;
    sum.cost += record.cost;
  }
  return { ...sum, cost: formatAmount(sum.cost) };
}

/** A key's budget as the report shows it: amounts as numbers of the currency; `resets_at` the next period's start (null for a lifetime budget or none). */
export function budgetBody(state: KeyBudgetState | undefined, nowSeconds: number): object {
  const period = state?.period ?? null;
  return {
    budget: state?.budget === null || state === undefined ? null : formatAmount(state.budget),
    budget_period: period,
    spent: formatAmount(state?.spent ?? 0),
    reserved: formatAmount(state?.reserved ?? 0),
    resets_at: period === null ? null : budgetPeriod(period, nowSeconds).end,
  };
}

/**
 * `GET /v1/usage`: the calling key's usage over whole UTC days, by model and/or day (default
 * both), with its budget. Default range: the key's current budget period, else the last 30 days.
 */
export function getUsage({ ctx, currency }: UsageDeps): Handler {
  return async (request) => {
    const nowMs = Date.now();
    const now = Math.floor(nowMs / 1000);
    const dimensions = groupBy(request, ['model', 'day'], ['model', 'day']);
    const state = await ctx.store.keyBudgetState(request.owner, nowMs);
    const period = state?.period ?? null;
    const { start, end } = range(request, now, period === null ? lastDays(now) : budgetPeriod(period, now));
    const records = await ctx.store.usageReport({
      key: request.owner,
      startDay: dayOf(start),
      endDay: dayOf(end),
      byKey: false,
      byModel: dimensions.has('model'),
      byDay: dimensions.has('day'),
    });
    return {
      object: 'usage',
      currency,
      start,
      end,
      totals: totals(records),
      data: records.map((record) => row(record, dimensions, false)),
      budget: budgetBody(state, now),
    };
  };
}

/**
 * `GET /v1/admin/usage`: the same report across keys, `key_id` in each row, `group_by` also
 * accepting `key` (default `key,model,day`); `key_id` narrows it to one key. Mounted under the
 * admin keys' authorization, never a client key's.
 */
export function getAdminUsage({ ctx, currency }: UsageDeps): Handler {
  return async (request) => {
    const now = Math.floor(Date.now() / 1000);
    const dimensions = groupBy(request, ['key', 'model', 'day'], ['key', 'model', 'day']);
    const key = queryValue(request, 'key_id');
    if (key !== undefined && !KEY_ID.test(key)) throw errors.invalidQuery('key_id', 'key_id must be a key id.');
    const { start, end } = range(request, now, lastDays(now));
    const records = await ctx.store.usageReport({
      ...(key === undefined ? {} : { key }),
      startDay: dayOf(start),
      endDay: dayOf(end),
      byKey: dimensions.has('key'),
      byModel: dimensions.has('model'),
      byDay: dimensions.has('day'),
    });
    return { object: 'usage', currency, start, end, totals: totals(records), data: records.map((record) => row(record, dimensions, true)) };
  };
}
