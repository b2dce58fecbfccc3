import type { ModelInfo, UsageBudget } from './api.js';
import { amount } from './chart.js';
import { h, replace } from './dom.js';
import { runPrice, runPriceText, type RunShape } from './pricing.js';
import { periodWords } from './usage.js';

/**
 * Beside Generate: the price of the run as configured (from the model's `pricing`, again at each
 * change of duration or resolution) and what the key's budget has left (`GET /v1/usage`).
 */

/** The run the form describes: the schema's defaults where the form leaves a field out. */
export function runShape(model: ModelInfo, body: Record<string, unknown>): RunShape {
  const properties = (model.schema['properties'] as Record<string, Record<string, unknown>> | undefined) ?? {};
  const value = (name: string): unknown => body[name] ?? properties[name]?.['default'];
  const duration = value('duration');
  const resolution = value('resolution');
  const n = value('n');
  return {
    kind: model.kind,
    seconds: typeof duration === 'number' && duration > 0 ? duration : 5,
    resolution: typeof resolution === 'string' ? resolution : undefined,
    images: typeof n === 'number' && n > 0 ? n : 1,
  };
}

export class RunEstimate {
  private readonly price = h('span', { class: 'run-price', 'data-price': '' });
  private readonly budget = h('span', { class: 'budget-left', hidden: true });
  readonly element = h('p', { class: 'estimate', 'aria-live': 'polite' }, 'This run: ', this.price, this.budget);

  update(model: ModelInfo, body: Record<string, unknown>): void {
    const price = runPrice(model.pricing, runShape(model, body));
    this.price.dataset['price'] = price === undefined ? '' : String(price.cost);
    replace(this.price, h('strong', {}, runPriceText(price)));
  }

  /** Undefined: the usage operation did not answer (an older server); nothing is said then. */
  setBudget(budget: UsageBudget | undefined, currency: string): void {
    this.budget.hidden = budget === undefined;
    if (budget === undefined) return;
    if (budget.budget === null) {
      replace(this.budget, ' · No budget on this key');
      this.budget.dataset['left'] = '';
      return;
    }
    const left = Math.max(0, Number((budget.budget - budget.spent - budget.reserved).toFixed(6)));
    this.budget.dataset['left'] = String(left);
    replace(
      this.budget,
      ' · Budget left: ',
      h('strong', {}, `${currency} ${amount(left)}`),
      ` of ${amount(budget.budget)} ${periodWords(budget.budget_period)}`,
    );
  }
}
