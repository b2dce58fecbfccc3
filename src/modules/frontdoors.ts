import { FRONT_DOOR_ROUTES } from '../frontdoors/routes.js';
import { fieldsOf } from '../config-fields.js';
import type { Module } from './module.js';
import { FRONT_DOORS_SLICE } from './slices/frontdoors.js';

/**
 * The OpenAI-compatible front doors (docs/guides/openai-clients.md): their rows; tasks are
 * created by the tasks module's create path, and the synchronous ones wait on the task feed
 * (MEDIAGATE_SYNC_WAIT_S, given to the server's context).
 */
export function frontDoorsModule(): Module {
  return { name: 'front-doors', config: fieldsOf(FRONT_DOORS_SLICE), routes: FRONT_DOOR_ROUTES, loops: [] };
}
