import { USAGE_ROUTES } from '../http/routes.js';
import type { Module } from './module.js';

/**
 * Usage and budgets: a key's usage and the admin reports (docs/admin.md). The prices are a floor
 * (MEDIAGATE_PRICING_FILE, read once by floors.ts): budgets are reserved at create and usage is
 * measured at settle by the task service, which every module shares.
 */
export function usageModule(): Module {
  return { name: 'usage', config: ['pricingFile'], routes: USAGE_ROUTES, loops: [] };
}
