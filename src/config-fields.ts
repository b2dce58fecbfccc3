import { resolve } from 'node:path';

/**
 * The pieces a configuration is read with: one environment variable's readers (integers,
 * durations, switches, choices, lists, paths), each failing with a `ConfigError` that names the
 * variable, and `Field`, a setting declared with its variable, default and unit, so that a
 * module's slice (modules/slices/) states its settings where the module lives and config.ts only
 * assembles them. Durations are set in seconds and held in milliseconds: converted here, once.
 */
export type Env = Readonly<Record<string, string | undefined>>;

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (!/^-?\d+$/.test(raw)) throw new ConfigError(`${name} must be an integer, got '${raw}'.`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}.`);
  return value;
}

/** A duration given in whole seconds (bounds in seconds), in milliseconds: the unit of every duration below config. */
export function seconds(env: Env, name: string, fallback: number, min: number, max: number): number {
  return integer(env, name, fallback, min, max) * 1000;
}

export function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const match = values.find((value) => value.toLowerCase() === raw.toLowerCase());
  if (!match) throw new ConfigError(`${name} must be one of ${values.join(', ')}, got '${raw}'.`);
  return match;
}

export function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got '${raw}'.`);
}

export function list(env: Env, name: string): string[] {
  return (env[name] ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** A file named relative to the working directory, held as an absolute path; unset: undefined. */
export function path(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  return raw ? resolve(raw) : undefined;
}

/**
 * The unit a variable is set in: `s` (held in ms), `ms`, `bytes`, `count` (a plain number),
 * `text` (a string, a list or a choice), `path` (a file or a program).
 */
export type Unit = 's' | 'ms' | 'bytes' | 'count' | 'text' | 'path';

/** One setting: its variable, what it is, its default as set in the environment, its unit, and its reader. */
export interface Field<T> {
  readonly variable: string;
  /** What it sets, for a reader of the slice (docs/operations/configuration.md says it at length). */
  readonly about: string;
  /** The default in the variable's unit (`15` for 15 s); undefined: unset means none or a built-in rule. */
  readonly default: number | string | boolean | undefined;
  readonly unit: Unit;
  read(env: Env): T;
}

/** A module's settings: its `Config` fields, each declared as a `Field`. */
export type Slice = Readonly<Record<string, Field<unknown>>>;

/** What a slice reads to: each field's value. */
export type SliceValues<S extends Slice> = { readonly [K in keyof S]: S[K] extends Field<infer T> ? T : never };

/** An integer setting in `unit`, between `min` and `max`. */
export function integerField(variable: string, about: string, unit: 'count' | 'bytes' | 'ms', value: number, min: number, max: number): Field<number> {
  return { variable, about, default: value, unit, read: (env) => integer(env, variable, value, min, max) };
}

/** A duration set in whole seconds (default and bounds in seconds), held in milliseconds. */
export function secondsField(variable: string, about: string, value: number, min: number, max: number): Field<number> {
  return { variable, about, default: value, unit: 's', read: (env) => seconds(env, variable, value, min, max) };
}

/** One of `values` (any case); unset: `value`. */
export function choiceField<T extends string>(variable: string, about: string, values: readonly T[], value: T): Field<T> {
  return { variable, about, default: value, unit: 'text', read: (env) => oneOf(env, variable, values, value) };
}

/** A file path, absolute once read; unset: undefined. */
export function pathField(variable: string, about: string): Field<string | undefined> {
  return { variable, about, default: undefined, unit: 'path', read: (env) => path(env, variable) };
}

/** Reads every field of a slice from the environment, each once. */
export function readSlice<S extends Slice>(slice: S, env: Env): SliceValues<S> {
  const values: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(slice)) values[key] = field.read(env);
  return values as SliceValues<S>;
}

/** The `Config` fields a slice declares, for a module's `config` list. */
export function fieldsOf<S extends Slice>(slice: S): (keyof S & string)[] {
  return Object.keys(slice);
}
