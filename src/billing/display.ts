/** The `pricing` object `GET /v1/models` shows for a model: the fields of its PRICE, as JSON numbers. */
import { allModels, findModel, type ModelRow } from '../catalog/index.js';
import { priceOf } from './cost.js';
import { formatAmount } from './money.js';
import { ANY, type Pricing } from './pricing-file.js';

export interface PricingView {
  readonly currency: string;
  readonly per_task?: number;
  readonly per_second?: number | Readonly<Record<string, number>>;
  readonly per_image?: number;
}

/** Undefined without a pricing file; `{currency}` alone for a model that costs 0. */
export function pricingView(pricing: Pricing | undefined, model: string): PricingView | undefined {
  if (pricing === undefined) return undefined;
  const price = priceOf(pricing, model);
  const view: { currency: string; per_task?: number; per_second?: number | Record<string, number>; per_image?: number } = {
    currency: pricing.currency,
  };
  if (price?.perTask !== undefined) view.per_task = formatAmount(price.perTask);
  // Only what the model's tasks are charged by: "*" may hold per_second and per_image both,
  // and an image model shown "0.1/s" would be shown a price it never pays.
  const kind = findModel(model)?.kind;
  const perSecond = kind === 'image' ? undefined : price?.perSecond;
  if (typeof perSecond === 'number') view.per_second = formatAmount(perSecond);
  else if (perSecond !== undefined) {
    const byValue: Record<string, number> = {};
    for (const [value, micro] of perSecond.byValue) byValue[value] = formatAmount(micro);
    if (perSecond.other !== undefined) byValue[ANY] = formatAmount(perSecond.other);
    view.per_second = byValue;
  }
  if (price?.perImage !== undefined && kind !== 'video') view.per_image = formatAmount(price.perImage);
  return view;
}

/** One line for a person (docs page, CLI): "USD 0.5/task + 0.08/s (720p) ...". */
export function describePrice(view: PricingView): string {
  const parts: string[] = [];
  if (view.per_task !== undefined) parts.push(`${view.per_task}/task`);
  if (typeof view.per_second === 'number') parts.push(`${view.per_second}/s`);
  else if (view.per_second !== undefined) {
    parts.push(
      `${Object.entries(view.per_second)
        .map(([value, amount]) => `${amount}/s (${value === ANY ? 'other' : value})`)
        .join(', ')}`,
    );
  }
  if (view.per_image !== undefined) parts.push(`${view.per_image}/image`);
  return parts.length === 0 ? `free (${view.currency})` : `${view.currency} ${parts.join(' + ')}`;
}

/** One catalog model's price, as `mediagate pricing check` lists it. */
export interface PriceListing {
  readonly model: string;
  readonly kind: 'video' | 'image';
  /** Where the price comes from: the model's own entry, `"*"`, or none (it costs 0). */
  readonly from: 'own' | 'any' | 'none';
  readonly view: PricingView;
}

/** Whether a shown price charges anything to the model's tasks (some field applies to its kind). */
export function chargeable(listing: PriceListing): boolean {
  const view = listing.view;
  return listing.from !== 'none' && (view.per_task !== undefined || view.per_second !== undefined || view.per_image !== undefined);
}

/** Every catalog model with its price. */
export function priceList(pricing: Pricing, models: readonly ModelRow[] = allModels()): PriceListing[] {
  return models.map((row) => ({
    model: row.id,
    kind: row.kind,
    from: pricing.models.has(row.id) ? 'own' : pricing.fallback ? 'any' : 'none',
    view: pricingView(pricing, row.id) ?? { currency: pricing.currency },
  }));
}
