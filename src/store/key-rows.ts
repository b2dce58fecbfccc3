import type { ApiKeyRecord, BudgetPeriod, KeyAuthRecord, KeyPatch, KeyRole, NewKey } from './records.js';
import { num, numOrNull, type Int } from './rows.js';
import type { InsertKeyParams, KeyAuthRow, KeyRow, UpdateKeyParams } from './sql/keys.js';

const role = (text: string): KeyRole => (text === 'admin' ? 'admin' : 'client');

/** The stored JSON array of model patterns; anything unreadable counts as no model at all (fails closed). */
function models(text: string | null): readonly string[] | null {
  if (text === null) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.filter((item): item is string => typeof item === 'string') : [];
  } catch {
    return [];
  }
}

const period = (text: string | null): BudgetPeriod | null => (text === 'day' || text === 'month' ? text : null);
const flag = (value: Int): boolean => num(value) !== 0;

export function toKeyAuthRecord(row: KeyAuthRow): KeyAuthRecord {
  return {
    id: row.id,
    revoked: row.revoked_at !== null,
    role: role(row.role),
    disabled: flag(row.disabled),
    models: models(row.models),
    rateLimitPerMin: numOrNull(row.rate_limit_per_min),
    maxTasksInFlight: numOrNull(row.max_tasks_in_flight),
  };
}

export function toApiKeyRecord(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    name: row.name ?? '',
    role: role(row.role),
    createdAt: num(row.created_at),
    revokedAt: numOrNull(row.revoked_at),
    disabled: flag(row.disabled),
    budget: numOrNull(row.budget),
    budgetPeriod: period(row.budget_period),
    models: models(row.models),
    rateLimitPerMin: numOrNull(row.rate_limit_per_min),
    maxTasksInFlight: numOrNull(row.max_tasks_in_flight),
    reserved: num(row.reserved),
    spent: num(row.spent),
  };
}

const modelsText = (list: readonly string[] | null | undefined): string | null => (list === null || list === undefined ? null : JSON.stringify(list));

export function insertKeyParams(key: NewKey): InsertKeyParams {
  return {
    id: key.id,
    hash: key.hash,
    name: key.name,
    createdAt: key.createdAt,
    role: key.role ?? 'client',
    budget: key.budget ?? null,
    budgetPeriod: key.budgetPeriod ?? null,
    models: modelsText(key.models),
    rateLimitPerMin: key.rateLimitPerMin ?? null,
    maxTasksInFlight: key.maxTasksInFlight ?? null,
  };
}

const set = (present: boolean): number => (present ? 1 : 0);

export function updateKeyParams(id: string, patch: KeyPatch): UpdateKeyParams {
  return {
    id,
    setName: set(patch.name !== undefined),
    name: patch.name ?? null,
    setBudget: set(patch.budget !== undefined),
    budget: patch.budget ?? null,
    setPeriod: set(patch.budgetPeriod !== undefined),
    budgetPeriod: patch.budgetPeriod ?? null,
    setModels: set(patch.models !== undefined),
    models: modelsText(patch.models),
    setRate: set(patch.rateLimitPerMin !== undefined),
    rateLimitPerMin: patch.rateLimitPerMin ?? null,
    setInFlight: set(patch.maxTasksInFlight !== undefined),
    maxTasksInFlight: patch.maxTasksInFlight ?? null,
    setDisabled: set(patch.disabled !== undefined),
    disabled: patch.disabled === true ? 1 : 0,
  };
}

/** The list's cursor: the previous page's last key, or, for the first page, a point after every key. */
export function pageAfter(after: ApiKeyRecord | undefined): { afterCreated: number; afterId: string } {
  return after === undefined ? { afterCreated: Number.MAX_SAFE_INTEGER, afterId: '' } : { afterCreated: after.createdAt, afterId: after.id };
}
