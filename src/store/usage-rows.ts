import type { CompletionUsage, KeyBudgetState, UsageExportRecord, UsageQuery, UsageRecord } from './records.js';
import { num } from './rows.js';
import type { KeyBudgetRow, UsageRow } from './sql/usage.js';
import type { UsageExportRow } from './sql/usage-export.js';

/** Rows of sql/usage.ts as records, and records as its parameters (both stores). */

export function toKeyBudgetState(row: KeyBudgetRow): KeyBudgetState {
  return {
    budget: row.budget === null ? null : num(row.budget),
    period: row.budget_period === 'day' || row.budget_period === 'month' ? row.budget_period : null,
    reserved: num(row.reserved),
    spent: num(row.spent),
  };
}

export function toUsageRecord(row: UsageRow): UsageRecord {
  return {
    keyId: row.key_id,
    model: row.model,
    day: row.day,
    tasks: num(row.tasks),
    seconds: num(row.seconds),
    images: num(row.images),
    cost: num(row.cost),
  };
}

export function toUsageExportRecord(row: UsageExportRow): UsageExportRecord {
  return {
    day: row.day,
    keyId: row.key_id,
    keyName: row.key_name,
    model: row.model,
    tasks: num(row.tasks),
    seconds: num(row.seconds),
    images: num(row.images),
    cost: num(row.cost),
  };
}

export function reportParams(query: UsageQuery): { startDay: string; endDay: string; byKey: number; byModel: number; byDay: number } {
  return {
    startDay: query.startDay,
    endDay: query.endDay,
    byKey: query.byKey ? 1 : 0,
    byModel: query.byModel ? 1 : 0,
    byDay: query.byDay ? 1 : 0,
  };
}

export function usageParams(usage: CompletionUsage): { seconds: number; images: number; cost: number; upstreamUsage: string | null } {
  return { seconds: usage.seconds, images: usage.images, cost: usage.cost, upstreamUsage: usage.upstreamUsage ?? null };
}
