import { readSlice, type Env } from '../../config-fields.js';
import { FILES_SLICE } from './files.js';
import { FRONT_DOORS_SLICE } from './frontdoors.js';
import { OBSERVABILITY_SLICE } from './observability.js';
import { TASKS_SLICE } from './tasks.js';
import { USAGE_SLICE } from './usage.js';
import { WEBHOOKS_SLICE } from './webhooks.js';

/**
 * Every module's own settings, by module. config.ts reads each slice once and adds it to the
 * shared fields; a module names its slice's fields (`fieldsOf`) in its `config`. A new module's
 * settings: a slice file here and a line below (docs/architecture.md, "Adding a feature").
 */
export const SLICES = {
  tasks: TASKS_SLICE,
  webhooks: WEBHOOKS_SLICE,
  files: FILES_SLICE,
  usage: USAGE_SLICE,
  'front-doors': FRONT_DOORS_SLICE,
  observability: OBSERVABILITY_SLICE,
} as const;

/** Reads each slice once: the `Config` fields the slices declare, each with its value's type. */
export function readSlices(env: Env) {
  return {
    ...readSlice(TASKS_SLICE, env),
    ...readSlice(WEBHOOKS_SLICE, env),
    ...readSlice(FILES_SLICE, env),
    ...readSlice(USAGE_SLICE, env),
    ...readSlice(FRONT_DOORS_SLICE, env),
    ...readSlice(OBSERVABILITY_SLICE, env),
  };
}

export type SlicesConfig = ReturnType<typeof readSlices>;
