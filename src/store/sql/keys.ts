import type { Dialect } from '../dialect.js';
import { operation } from '../dialect.js';
import type { CountRow, Int } from '../rows.js';
import { periodStart, usageDay } from '../usage-sql.js';

/*
 * API keys (docs/admin.md). A key is stored as its SHA-256 hash with its role (`client` or
 * `admin`), its settings (name, budget, models, limits, disabled) and, kept by the charge
 * trigger, what it holds and spent (migration 9).
 *
 * A key from MEDIAGATE_API_KEYS or MEDIAGATE_ADMIN_KEYS has the id `key_` + the first 16 hex
 * digits of its hash, so the same key keeps one id on every start and process; every other key
 * gets a random id. That id shape is what marks a key as the environment's (`ENV_KEY`): its
 * name and settings are the operator's to change, and the start-up sync touches only whether
 * it is revoked, and its role.
 */
const ENV_KEY = `id = 'key_' || substr(hash, 1, 16)`;

/** What the auth lookup needs, and nothing that changes at every task (spent, reserved). */
export interface KeyAuthRow {
  id: string;
  revoked_at: Int | null;
  role: string;
  disabled: Int;
  models: string | null;
  rate_limit_per_min: Int | null;
  max_tasks_in_flight: Int | null;
}

export const findKeyByHash = operation<{ hash: string }, KeyAuthRow>(
  'find-key-by-hash',
  () => `SELECT id, revoked_at, role, CASE WHEN disabled THEN 1 ELSE 0 END AS disabled, models, rate_limit_per_min, max_tasks_in_flight
           FROM api_keys WHERE hash = @hash`,
);

export interface InsertKeyParams {
  id: string;
  hash: string;
  name: string;
  createdAt: number;
  role: string;
  budget: number | null;
  budgetPeriod: string | null;
  /** JSON array, or null for every model. */
  models: string | null;
  rateLimitPerMin: number | null;
  maxTasksInFlight: number | null;
}

/** A key whose hash is stored already is not inserted again (0 rows). */
export const insertKey = operation<InsertKeyParams>(
  'insert-key',
  () => `INSERT INTO api_keys (id, hash, name, created_at, revoked_at, role, budget, budget_period, models, rate_limit_per_min, max_tasks_in_flight)
         VALUES (@id, @hash, @name, @createdAt, NULL, @role, @budget, @budgetPeriod, @models, @rateLimitPerMin, @maxTasksInFlight)
         ON CONFLICT (hash) DO NOTHING`,
);

export const countKeys = operation<object, CountRow>('count-keys', () => `SELECT count(*) AS n FROM api_keys`);

/** Admin keys that work: without one, the admin API is not there (404). */
export const countAdminKeys = operation<object, CountRow>(
  'count-admin-keys',
  () => `SELECT count(*) AS n FROM api_keys WHERE role = 'admin' AND revoked_at IS NULL AND NOT disabled`,
);

/** A key with its settings and, for the period holding `now`, what it spent and holds. */
export interface KeyRow {
  id: string;
  name: string | null;
  role: string;
  created_at: Int;
  revoked_at: Int | null;
  disabled: Int;
  budget: Int | null;
  budget_period: string | null;
  models: string | null;
  rate_limit_per_min: Int | null;
  max_tasks_in_flight: Int | null;
  reserved: Int;
  spent: Int;
}

function keyColumns(dialect: Dialect): string {
  return `id, name, role, created_at, revoked_at, CASE WHEN disabled THEN 1 ELSE 0 END AS disabled, budget, budget_period, models,
          rate_limit_per_min, max_tasks_in_flight, reserved,
          CASE WHEN spent_period >= ${periodStart(dialect, 'budget_period', 'CAST(@now AS BIGINT)')} THEN spent ELSE 0 END AS spent`;
}

/** Every key, revoked ones too, oldest first (`mediagate keys list`). */
export const listKeys = operation<{ now: number }, KeyRow>('list-keys', (dialect) => `SELECT ${keyColumns(dialect)} FROM api_keys ORDER BY created_at, id`);

/** One key, revoked or not, whatever its role (the caller decides what it may see). */
export const getKey = operation<{ id: string; now: number }, KeyRow>('get-key', (dialect) => `SELECT ${keyColumns(dialect)} FROM api_keys WHERE id = @id`);

/**
 * A page of active keys of one role, newest first (created_at, then id, both descending);
 * `afterCreated`/`afterId` is the last key of the previous page (the first page passes a time
 * after every key). New keys land before the first page, so paging is stable while keys are made.
 */
export const listKeyPage = operation<{ role: string; afterCreated: number; afterId: string; limit: number; now: number }, KeyRow>(
  'list-key-page',
  (dialect) => `SELECT ${keyColumns(dialect)} FROM api_keys
         WHERE role = @role AND revoked_at IS NULL AND (created_at < @afterCreated OR (created_at = @afterCreated AND id < @afterId))
         ORDER BY created_at DESC, id DESC
         LIMIT @limit`,
);

export interface UpdateKeyParams {
  id: string;
  setName: number;
  name: string | null;
  setBudget: number;
  budget: number | null;
  setPeriod: number;
  budgetPeriod: string | null;
  setModels: number;
  models: string | null;
  setRate: number;
  rateLimitPerMin: number | null;
  setInFlight: number;
  maxTasksInFlight: number | null;
  setDisabled: number;
  disabled: number;
}

/**
 * Changes the settings whose flag is 1 and leaves the others as they are, in one statement (two
 * changes of different settings at once both take effect). 0 rows: no such active key.
 */
export const updateKey = operation<UpdateKeyParams>(
  'update-key',
  () => `UPDATE api_keys SET
           name = CASE WHEN @setName = 1 THEN @name ELSE name END,
           budget = CASE WHEN @setBudget = 1 THEN @budget ELSE budget END,
           budget_period = CASE WHEN @setPeriod = 1 THEN @budgetPeriod ELSE budget_period END,
           models = CASE WHEN @setModels = 1 THEN @models ELSE models END,
           rate_limit_per_min = CASE WHEN @setRate = 1 THEN @rateLimitPerMin ELSE rate_limit_per_min END,
           max_tasks_in_flight = CASE WHEN @setInFlight = 1 THEN @maxTasksInFlight ELSE max_tasks_in_flight END,
           disabled = CASE WHEN @setDisabled = 1 THEN (@disabled = 1) ELSE disabled END
         WHERE id = @id AND revoked_at IS NULL`,
);

/**
 * After a change of budget period, in the same transaction: `spent` becomes what the key's tasks
 * final in the current period of the new kind cost, summed from the daily rollup (which task
 * retention does not delete; a period is whole UTC days), and `spent_period` that period's
 * start. The row is locked by the update before it: a task ending meanwhile either committed its
 * charge before (and is in the sum) or waits for this transaction (and adds to the new sum).
 */
export const recomputeSpent = operation<{ id: string; now: number }>('recompute-spent', (dialect) => {
  const start = periodStart(dialect, 'budget_period', 'CAST(@now AS BIGINT)');
  return `UPDATE api_keys
             SET spent = (SELECT COALESCE(sum(u.cost), 0) FROM usage_daily u
                           WHERE u.key_id = api_keys.id AND u.day >= ${usageDay(dialect, `${start} * 1000`)}),
                 spent_period = ${start}
           WHERE id = @id`;
});

export const revokeKey = operation<{ id: string; now: number }>(
  'revoke-key',
  () => `UPDATE api_keys SET revoked_at = @now WHERE id = @id AND revoked_at IS NULL`,
);

/*
 * syncEnvKeys, in one transaction: every active environment key is revoked, then those still
 * configured are reactivated with their role; a statement per configured key keeps the text
 * fixed (no list). Names and settings are left as they are.
 */
export const revokeEnvKeys = operation<{ now: number }>(
  'revoke-env-keys',
  () => `UPDATE api_keys SET revoked_at = @now WHERE ${ENV_KEY} AND revoked_at IS NULL`,
);

export const activateEnvKey = operation<{ hash: string; role: string }>(
  'activate-env-key',
  () => `UPDATE api_keys SET revoked_at = NULL, role = @role WHERE ${ENV_KEY} AND hash = @hash`,
);
