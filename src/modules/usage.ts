import { USAGE_ROUTES } from '../http/routes.js';
import { fieldsOf } from '../config-fields.js';
import type { Module } from './module.js';
import { USAGE_SLICE } from './slices/usage.js';

/**
 * Usage and budgets: a key's usage and the admin reports (docs/admin.md). The prices are a floor
 * (MEDIAGATE_PRICING_FILE, declared in slices/usage.ts, read once by floors.ts): budgets are reserved at create and usage is
 * measured at settle by the task service, which every module shares.
 */
export function usageModule(): Module {
  return { name: 'usage', config: fieldsOf(USAGE_SLICE), routes: USAGE_ROUTES, loops: [] };
}
