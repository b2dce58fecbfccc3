import type { ModelPricing } from './api.js';
import { amount } from './chart.js';

/**
 * A model's price as one short line, shown next to the model in the picker: "USD 0.05/task +
 * 0.08/s (720p), 0.12/s (1080p)". Empty when the server has no pricing file; "not priced" for a
 * model the file gives no price (the server bills it 0), as the run's price says.
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
  return parts.length === 0 ? 'not priced' : `${pricing.currency} ${parts.join(' + ')}`;
}

/** What the run as configured asks for: seconds and resolution of a video, images of an image task. */
export interface RunShape {
  readonly kind: 'video' | 'image';
  readonly seconds: number;
  readonly resolution: string | undefined;
  readonly images: number;
}

/** The run's price: its amount and how it is made up; undefined when nothing of it is priced. */
export interface RunPrice {
  readonly currency: string;
  readonly cost: number;
  readonly parts: readonly string[];
}

/**
 * The price of one run as the server bills it (docs/pricing.md): per_task + per_second (by
 * resolution, `*` for any other) x seconds + per_image x images. A video is billed by the
 * delivered duration, which is the one asked for. Undefined when the server prices nothing, or
 * nothing that applies to this run: "not priced", never "USD 0.00".
 */
export function runPrice(pricing: ModelPricing | undefined, run: RunShape): RunPrice | undefined {
  if (pricing === undefined) return undefined;
  const parts: string[] = [];
  let cost = 0;
  if (pricing.per_task !== undefined) {
    cost += pricing.per_task;
    parts.push(`${pricing.per_task}/task`);
  }
  const perSecond =
    typeof pricing.per_second === 'number'
      ? pricing.per_second
      : pricing.per_second === undefined
        ? undefined
        : (pricing.per_second[run.resolution ?? ''] ?? pricing.per_second['*']);
  if (run.kind === 'video' && perSecond !== undefined) {
    cost += perSecond * run.seconds;
    parts.push(`${run.seconds} s × ${perSecond}/s`);
  }
  if (run.kind === 'image' && pricing.per_image !== undefined) {
    cost += pricing.per_image * run.images;
    parts.push(`${run.images} × ${pricing.per_image}/image`);
  }
  if (parts.length === 0) return undefined;
  // Micro-units, as the server rounds: no 0.30000000000000004.
  return { currency: pricing.currency, cost: Math.round(cost * 1e6) / 1e6, parts };
}

export const runPriceText = (price: RunPrice | undefined): string =>
  price === undefined ? 'not priced' : `${price.currency} ${amount(price.cost)} (${price.parts.join(' + ')})`;
