/**
 * What a task costs: per_task + per_second(resolution) x seconds + per_image x images, in
 * micro-units. Pure functions of the price and the measured (or, for a reservation, requested)
 * quantities.
 */
import type { ModelRow, ResolvedParams } from '../catalog/index.js';
import { times, type Micro } from './money.js';
import type { Price, Pricing } from './pricing-file.js';

/** Seconds a video task asks for when `duration` is absent (the catalog's default). */
export const DEFAULT_DURATION_S = 5;

/** What a task delivered (or, for its maximum, would deliver). */
export interface Quantities {
  /** Billed seconds of video (0 for an image task). */
  readonly seconds: number;
  /** Delivered images (0 for a video task). */
  readonly images: number;
  /** The task's resolution: its `resolution` parameter or the model's default; none when the model has neither. */
  readonly resolution?: string | undefined;
}

/** The model's price: its own entry wins over "*"; none without a file or an entry. */
export function priceOf(pricing: Pricing | undefined, model: string): Price | undefined {
  if (pricing === undefined) return undefined;
  return pricing.models.get(model) ?? pricing.fallback;
}

/** The per-second price at this resolution: its own entry, else "*", else 0. */
export function perSecondAt(price: Price, resolution: string | undefined): Micro {
  const perSecond = price.perSecond;
  if (perSecond === undefined) return 0;
  if (typeof perSecond === 'number') return perSecond;
  return (resolution === undefined ? undefined : perSecond.byValue.get(resolution)) ?? perSecond.other ?? 0;
}

/** A model with no price costs 0. */
export function taskCost(price: Price | undefined, quantities: Quantities): Micro {
  if (price === undefined) return 0;
  return (price.perTask ?? 0) + times(perSecondAt(price, quantities.resolution), quantities.seconds) + times(price.perImage ?? 0, quantities.images);
}

/** The task's resolution: its parameter, or the model's default. */
export function resolutionOf(row: ModelRow, params: ResolvedParams): string | undefined {
  const value = params['resolution'];
  if (typeof value === 'string') return value;
  return row.kind === 'video' ? row.resolution?.default : undefined;
}

/**
 * What a task would deliver at most, from its resolved parameters: a video task its requested
 * duration (or the default); an image task one image (the image models take no count).
 */
export function requestedQuantities(row: ModelRow, params: ResolvedParams): Quantities {
  if (row.kind === 'image') return { seconds: 0, images: 1 };
  const duration = params['duration'];
  const seconds = typeof duration === 'number' && Number.isInteger(duration) && duration > 0 ? duration : DEFAULT_DURATION_S;
  return { seconds, images: 0, resolution: resolutionOf(row, params) };
}

/** The most a task of this model with these parameters costs before it runs (what a budget reserves). */
export function maxTaskCost(pricing: Pricing | undefined, row: ModelRow, params: ResolvedParams): Micro {
  return taskCost(priceOf(pricing, row.id), requestedQuantities(row, params));
}

/**
 * Billed seconds of a delivered video: its measured duration rounded to the nearest whole
 * second (halves up), at least 1.
 */
export function billedSeconds(measuredSeconds: number): number {
  if (!Number.isFinite(measuredSeconds) || measuredSeconds <= 0) return 1;
  return Math.max(1, Math.round(measuredSeconds));
}
