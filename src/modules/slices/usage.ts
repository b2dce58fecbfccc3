import { pathField } from '../../config-fields.js';

/**
 * Usage and budgets' settings (modules/usage.ts; docs/pricing.md). The file is read and checked
 * once at start by the process's entry (src/cli/serve.ts, `readPricing`), or by the floors when
 * they are not given `options.pricing`: prices are a floor every module shares.
 */
export const USAGE_SLICE = {
  pricingFile: pathField('MEDIAGATE_PRICING_FILE', 'JSON file of model prices; unset: nothing is priced (usage still counts seconds and images)'),
} as const;
