/**
 * Billing: prices (the pricing file), amounts in micro-units, what a task costs and what it
 * delivered. Pure functions and plain data; the store and the HTTP layer build on them.
 */
export { amountText, formatAmount, parseAmount, times, DEFAULT_CURRENCY, MICRO_PER_UNIT, MAX_DECIMALS, type Micro, type AmountParse } from './money.js';
export { loadPricing, parsePricing, PricingConfigError, ANY, type Price, type Pricing, type PerResolution } from './pricing-file.js';
export { billedSeconds, maxTaskCost, perSecondAt, priceOf, requestedQuantities, resolutionOf, taskCost, DEFAULT_DURATION_S, type Quantities } from './cost.js';
export { chargeable, describePrice, priceList, pricingView, type PriceListing, type PricingView } from './display.js';
export { meter, type DeliveredFile, type Metered, type MeterResult } from './meter.js';
