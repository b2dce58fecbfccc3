import { formatAmount, parseAmount } from '../billing/index.js';
import { allModels } from '../catalog/index.js';
import { validationError, type ApiError } from '../errors.js';
import type { ApiKeyRecord, KeyPatch, KeySettings } from '../store/store.js';

/**
 * A key's settings as the admin API (and the CLI, through the same checks) reads and writes
 * them (docs/admin.md): the body of `POST /v1/admin/keys` and `PATCH /v1/admin/keys/{id}`, and
 * the key object both answer. Every fault is a 400 with the field at fault as `param`, in the
 * order body shape, unknown fields, missing ones, types, values.
 */

/** A name is 1-200 characters (code points), none of them a control character. */
export const MAX_NAME_CHARS = 200;
/** Model patterns per key. */
export const MAX_MODEL_PATTERNS = 100;
/** Amounts up to a billion units stay exact as JSON numbers (billing/money.ts). */
export const MAX_BUDGET_MICRO = 1_000_000_000 * 1_000_000;
/** The largest per-key limit (the environment's own bound). */
export const MAX_LIMIT = 100_000_000;

const CREATE_FIELDS = ['name', 'budget', 'budget_period', 'models', 'rate_limit_per_min', 'max_tasks_in_flight'] as const;
const PATCH_FIELDS = [...CREATE_FIELDS, 'disabled'] as const;
// eslint-disable-next-line no-control-regex -- a name must not hold control characters (they break terminals and logs)
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/**
 * Characters that change how a name reads without showing: bidi controls (a name can then show
 * reversed, "yek-noitcudorp"), zero-width and other format characters (two names that look the
 * same), line separators, and the letters that render blank (Hangul fillers).
 */
const INVISIBLE = /[\p{Cf}\p{Zl}\p{Zp}\u115f\u1160\u3164\uffa0]/u;

const describe = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A fast test for a key's patterns, built once per lookup: undefined when every model is allowed. */
export function modelFilter(patterns: readonly string[] | null): ((id: string) => boolean) | undefined {
  if (patterns === null) return undefined;
  const exact = new Set(patterns.filter((pattern) => !pattern.endsWith('*')));
  const prefixes = patterns.filter((pattern) => pattern.endsWith('*')).map((pattern) => pattern.slice(0, -1));
  return (id) => exact.has(id) || prefixes.some((prefix) => id.startsWith(prefix));
}

function name(value: unknown): string | ApiError {
  if (typeof value !== 'string') return validationError('invalid_parameter', 'name', `'name' must be a string; got ${describe(value)}.`);
  const chars = [...value].length;
  if (chars === 0 || value.trim() === '') return validationError('invalid_parameter', 'name', `'name' must not be empty.`);
  if (CONTROL.test(value)) return validationError('invalid_parameter', 'name', `'name' must not contain control characters.`);
  const hidden = INVISIBLE.exec(value)?.[0];
  if (hidden !== undefined) {
    const code = `U+${(hidden.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
    return validationError('invalid_parameter', 'name', `'name' must not contain invisible or bidirectional control characters; found ${code}.`);
  }
  if (chars > MAX_NAME_CHARS) return validationError('unsupported_value', 'name', `'name' is ${chars} characters; at most ${MAX_NAME_CHARS} are allowed.`);
  return value;
}

function budget(value: unknown): number | null | ApiError {
  if (value === null) return null;
  if (typeof value !== 'number') return validationError('invalid_parameter', 'budget', `'budget' must be a number or null; got ${describe(value)}.`);
  if (!Number.isFinite(value)) return validationError('invalid_parameter', 'budget', `'budget' must be a finite number.`);
  if (value < 0) return validationError('unsupported_value', 'budget', `'budget' must not be negative; got ${value}.`);
  if (value > MAX_BUDGET_MICRO / 1_000_000) {
    return validationError('unsupported_value', 'budget', `'budget' must be at most ${formatAmount(MAX_BUDGET_MICRO)}; got ${value}.`);
  }
  const parsed = parseAmount(value);
  if (!parsed.ok) return validationError('invalid_parameter', 'budget', `'budget' ${parsed.reason} (amounts have at most 6 decimals).`);
  return parsed.micro;
}

function period(value: unknown): 'day' | 'month' | null | ApiError {
  if (value === null) return null;
  if (typeof value !== 'string') {
    return validationError('invalid_parameter', 'budget_period', `'budget_period' must be "day", "month" or null; got ${describe(value)}.`);
  }
  if (value !== 'day' && value !== 'month') {
    return validationError(
      'unsupported_value',
      'budget_period',
      `'budget_period' must be "day", "month" or null (a lifetime budget); got '${value.slice(0, 50)}'.`,
    );
  }
  return value;
}

function models(value: unknown): readonly string[] | null | ApiError {
  if (value === null) return null;
  if (!Array.isArray(value))
    return validationError('invalid_parameter', 'models', `'models' must be an array of model ids or prefixes, or null; got ${describe(value)}.`);
  if (value.length > MAX_MODEL_PATTERNS)
    return validationError('unsupported_value', 'models', `'models' has ${value.length} items; at most ${MAX_MODEL_PATTERNS} are allowed.`);
  const list: string[] = [];
  for (const [index, item] of value.entries()) {
    if (typeof item !== 'string' || item === '') {
      return validationError('invalid_parameter', 'models', `models[${index}] must be a model id or a prefix ending in '*'; got ${describe(item)}.`);
    }
    const star = item.indexOf('*');
    if (star !== -1 && star !== item.length - 1) {
      return validationError('invalid_parameter', 'models', `models[${index}] may hold '*' only at its end (a prefix); got '${item.slice(0, 200)}'.`);
    }
    const matches = modelFilter([item]);
    if (matches !== undefined && !allModels().some((row) => matches(row.id))) {
      return validationError('unsupported_value', 'models', `models[${index}] '${item.slice(0, 200)}' matches no model; GET /v1/models lists them.`);
    }
    if (!list.includes(item)) list.push(item);
  }
  return list;
}

function limit(field: 'rate_limit_per_min' | 'max_tasks_in_flight', value: unknown): number | null | ApiError {
  if (value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    return validationError(
      'invalid_parameter',
      field,
      `'${field}' must be an integer or null (the server's default); got ${typeof value === 'number' ? value : describe(value)}.`,
    );
  }
  if (value < 1 || value > MAX_LIMIT) return validationError('unsupported_value', field, `'${field}' must be from 1 to ${MAX_LIMIT}; got ${value}.`);
  return value;
}

/** The settings of a create (`name` required) or a patch (any field), or the first fault. */
export function parseKeyBody(body: unknown, mode: 'create'): (Partial<KeySettings> & { name: string }) | ApiError;
export function parseKeyBody(body: unknown, mode: 'patch'): KeyPatch | ApiError;
export function parseKeyBody(body: unknown, mode: 'create' | 'patch'): KeyPatch | ApiError {
  if (!isObject(body)) return validationError('invalid_parameter', 'body', `The request body must be a JSON object; got ${describe(body)}.`);
  const allowed: readonly string[] = mode === 'create' ? CREATE_FIELDS : PATCH_FIELDS;
  for (const field of Object.keys(body)) {
    if (!allowed.includes(field)) {
      return validationError('unsupported_parameter', field.slice(0, 100), `Unknown parameter '${field.slice(0, 100)}'; allowed: ${allowed.join(', ')}.`);
    }
  }
  if (mode === 'create' && body['name'] === undefined) return validationError('missing_parameter', 'name', `Missing required parameter 'name'.`);
  const patch: { -readonly [K in keyof KeyPatch]: KeyPatch[K] } = {};
  const take = <T>(field: string, parse: (value: unknown) => T | ApiError, set: (value: T) => void): ApiError | undefined => {
    if (body[field] === undefined) return undefined;
    const parsed = parse(body[field]);
    if (parsed instanceof Error) return parsed;
    set(parsed);
    return undefined;
  };
  const fault =
    take('name', name, (value) => (patch.name = value)) ??
    take('budget', budget, (value) => (patch.budget = value)) ??
    take('budget_period', period, (value) => (patch.budgetPeriod = value)) ??
    take('models', models, (value) => (patch.models = value)) ??
    take(
      'rate_limit_per_min',
      (value) => limit('rate_limit_per_min', value),
      (value) => (patch.rateLimitPerMin = value),
    ) ??
    take(
      'max_tasks_in_flight',
      (value) => limit('max_tasks_in_flight', value),
      (value) => (patch.maxTasksInFlight = value),
    ) ??
    take(
      'disabled',
      (value) =>
        typeof value === 'boolean' ? value : validationError('invalid_parameter', 'disabled', `'disabled' must be true or false; got ${describe(value)}.`),
      (value) => (patch.disabled = value),
    );
  return fault ?? patch;
}

/** The settings only a client key uses, as the patch and the wire name them. */
const CLIENT_ONLY: ReadonlyArray<readonly [keyof KeyPatch, string]> = [
  ['budget', 'budget'],
  ['budgetPeriod', 'budget_period'],
  ['models', 'models'],
  ['rateLimitPerMin', 'rate_limit_per_min'],
  ['maxTasksInFlight', 'max_tasks_in_flight'],
];

/**
 * The fault of a patch of an admin key that names a client-only setting: an admin key
 * authorizes /v1/admin/* and nothing else, so a budget, a model list or limits would never
 * apply to what it does, and a rate limit stored on it would throttle the admin API unseen.
 */
export function adminKeyPatchFault(patch: KeyPatch): ApiError | undefined {
  const field = CLIENT_ONLY.find(([setting]) => patch[setting] !== undefined)?.[1];
  if (field === undefined) return undefined;
  return validationError(
    'unsupported_parameter',
    field,
    `'${field}' applies to client keys only; an admin key authorizes /v1/admin/* and nothing else, and takes only 'name' and 'disabled'.`,
  );
}

/** The key object of the admin API (GET, PATCH, list items): amounts as numbers of the currency. */
export interface KeyBody {
  id: string;
  object: 'key';
  name: string;
  budget: number | null;
  budget_period: 'day' | 'month' | null;
  models: readonly string[] | null;
  rate_limit_per_min: number | null;
  max_tasks_in_flight: number | null;
  created_at: number;
  disabled: boolean;
  spent: number;
  reserved: number;
}

export function keyBody(key: ApiKeyRecord): KeyBody {
  return {
    id: key.id,
    object: 'key',
    name: key.name,
    budget: key.budget === null ? null : formatAmount(key.budget),
    budget_period: key.budgetPeriod,
    models: key.models,
    rate_limit_per_min: key.rateLimitPerMin,
    max_tasks_in_flight: key.maxTasksInFlight,
    created_at: Math.floor(key.createdAt / 1000),
    disabled: key.disabled,
    spent: formatAmount(key.spent),
    reserved: formatAmount(key.reserved),
  };
}
