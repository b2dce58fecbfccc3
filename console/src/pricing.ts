import type { ModelPricing } from './api.js';

/**
 * A model's price as one short line, shown next to the model in the picker: "USD 0.05/task +
 * 0.08/s (720p), 0.12/s (1080p)". Empty when the server has no pricing file; "free" for a model
 * without a price.
 */
export function priceLabel(pricing: ModelPricing | undefined): string {
  if (pricing === undefined) return '';
  const parts: string[] = [];
  if (pricing.per_task !== undefined) parts.push(`${pricing.per_task}/task`);
  if (typeof pricing.per_second === 'number') parts.push(`${pricing.per_second}/s`);
  else if (pricing.per_second !== undefined) {
    parts.push(
      Object.entries(pricing.per_second)
        .map(([value, amount]) => `${amount}/s (${value === '*' ? 'other' : value})`)
        .join(', '),
    );
  }
  if (pricing.per_image !== undefined) parts.push(`${pricing.per_image}/image`);
  return parts.length === 0 ? 'free' : `${pricing.currency} ${parts.join(' + ')}`;
}
