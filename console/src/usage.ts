import { ApiRefusal, type Api, type UsageBudget, type UsageReport, type UsageRow } from './api.js';
import { amount, barChart, budgetBar, daysOf } from './chart.js';
import { h, replace, uid } from './dom.js';

/**
 * The Usage view of a client key: its budget (spent and reserved against it, as a bar), the
 * totals of a range of UTC days, a bar per day, and a row per model. One `GET /v1/usage`
 * (grouped by model and day, the default) feeds all of it. The range defaults to what the server
 * chooses: the budget period, else the last 30 days.
 */

const DAY_S = 86_400;

/** A `YYYY-MM-DD` day of a date input -> its UTC midnight in unix seconds. */
export const dayStart = (day: string): number => Date.parse(`${day}T00:00:00Z`) / 1000;
export const dayOf = (seconds: number): string => new Date(seconds * 1000).toISOString().slice(0, 10);
const when = (seconds: number): string => new Date(seconds * 1000).toISOString().slice(0, 16).replace('T', ' ');

/** "a month", "a day", "in all": how a budget's period reads after its amount. */
export const periodWords = (period: 'day' | 'month' | null): string => (period === null ? 'in all' : `a ${period}`);

/** The budget as a line of text, and as a bar when there is one. */
export function budgetView(budget: UsageBudget, currency: string): HTMLElement {
  if (budget.budget === null) {
    return h(
      'div',
      { class: 'budget', 'data-budget': 'none' },
      h(
        'p',
        { class: 'budget-line' },
        // Nothing spent and nothing reserved reads as such: "0.00 USD" would say something was priced.
        budget.spent === 0 && budget.reserved === 0
          ? 'No budget. Nothing spent.'
          : [
              `No budget. Spent ${amount(budget.spent)} ${currency} in all`,
              budget.reserved > 0 ? `, ${amount(budget.reserved)} reserved by running tasks.` : '.',
            ].join(''),
      ),
    );
  }
  const used = budget.spent + budget.reserved;
  const left = Math.max(0, budget.budget - used);
  const share = budget.budget === 0 ? 100 : (used / budget.budget) * 100;
  const line = `${amount(budget.spent)} spent + ${amount(budget.reserved)} reserved of ${amount(budget.budget)} ${currency} ${periodWords(budget.budget_period)} (${share.toFixed(1)}%)`;
  return h(
    'div',
    { class: 'budget', 'data-budget': String(budget.budget) },
    budgetBar(budget.spent, budget.reserved, budget.budget, line),
    h(
      'p',
      { class: 'budget-line' },
      line,
      h('br', {}),
      h('span', { class: 'hint' }, `${amount(Number(left.toFixed(6)))} left`, budget.resets_at === null ? '' : ` · resets ${when(budget.resets_at)} UTC`),
    ),
    h(
      'p',
      { class: 'legend hint' },
      h('span', { class: 'swatch spent' }),
      ' spent ',
      h('span', { class: 'swatch reserved' }),
      ' reserved (the most the running tasks can cost)',
    ),
  );
}

/** Tasks, seconds, images and cost as four figures. */
export function totalsView(totals: UsageReport['totals'], currency: string): HTMLElement {
  const figure = (name: string, value: string): HTMLElement => h('div', { class: 'figure' }, h('dt', {}, name), h('dd', {}, value));
  return h(
    'dl',
    { class: 'totals' },
    figure('Tasks', String(totals.tasks)),
    figure('Video seconds', String(totals.seconds)),
    figure('Images', String(totals.images)),
    // A cost of 0 has no currency: on a server without prices every task costs 0.
    totals.cost === 0 ? figure('Cost', 'nothing charged') : figure(`Cost (${currency})`, amount(totals.cost)),
  );
}

/** The rows summed by one dimension, largest cost first (then most tasks). */
export function sumBy(
  rows: readonly UsageRow[],
  dimension: (row: UsageRow) => string,
): { name: string; tasks: number; seconds: number; images: number; cost: number }[] {
  const sums = new Map<string, { name: string; tasks: number; seconds: number; images: number; cost: number }>();
  for (const row of rows) {
    const name = dimension(row);
    const sum = sums.get(name) ?? { name, tasks: 0, seconds: 0, images: 0, cost: 0 };
    sum.tasks += row.tasks;
    sum.seconds += row.seconds;
    sum.images += row.images;
    // Micro-units, so that sums of 6-decimal amounts stay exact.
    sum.cost = Math.round(sum.cost * 1e6 + row.cost * 1e6) / 1e6;
    sums.set(name, sum);
  }
  return [...sums.values()].sort((a, b) => b.cost - a.cost || b.tasks - a.tasks || a.name.localeCompare(b.name));
}

/** A table in a box that scrolls sideways on a narrow screen. */
export function usageTable(
  caption: string,
  first: string,
  rows: ReturnType<typeof sumBy>,
  totalCost: number,
  label: (name: string) => Node | string = (name) => name,
): HTMLElement {
  const head = h(
    'tr',
    {},
    ...[first, 'Tasks', 'Seconds', 'Images', 'Cost', 'Share'].map((name, index) => h('th', { scope: 'col', class: index === 0 ? '' : 'num' }, name)),
  );
  const body = rows.map((row) =>
    h(
      'tr',
      { 'data-row': row.name },
      h('th', { scope: 'row' }, label(row.name)),
      h('td', { class: 'num' }, String(row.tasks)),
      h('td', { class: 'num' }, String(row.seconds)),
      h('td', { class: 'num' }, String(row.images)),
      // No amount where nothing was charged (a cost of 0 names no price); the share says the rest.
      h('td', { class: 'num' }, totalCost > 0 ? amount(row.cost) : '–'),
      h('td', { class: 'num' }, totalCost > 0 ? `${((row.cost / totalCost) * 100).toFixed(1)}%` : '–'),
    ),
  );
  return h('div', { class: 'table-scroll' }, h('table', { class: 'usage-table' }, h('caption', {}, caption), h('thead', {}, head), h('tbody', {}, ...body)));
}

/** A bar per day of the range: cost when anything cost something, else tasks. */
export function dailyChart(report: UsageReport, rows: readonly UsageRow[]): HTMLElement {
  const byDay = new Map(sumBy(rows, (row) => row.day ?? '').map((sum) => [sum.name, sum]));
  const priced = report.totals.cost > 0;
  const bars = daysOf(report.start, report.end).map((day) => {
    const sum = byDay.get(day);
    const value = (priced ? sum?.cost : sum?.tasks) ?? 0;
    return { label: day, value, text: `${day}: ${sum?.tasks ?? 0} tasks${priced ? `, ${amount(sum?.cost ?? 0)} ${report.currency}` : ''}` };
  });
  return barChart(bars, {
    label: priced ? `Cost per day (${report.currency}), UTC` : 'Finished tasks per day, UTC',
    unit: (value) => (priced ? `${amount(value)} ${report.currency}` : `${value} tasks`),
  });
}

export class UsagePanel {
  readonly element: HTMLElement;
  private readonly from: HTMLInputElement;
  private readonly to: HTMLInputElement;
  private readonly status = h('p', { class: 'hint', role: 'status', 'aria-live': 'polite' });
  private readonly body = h('div', { class: 'usage-body' });
  private range: { start?: number; end?: number } = {};

  constructor(private readonly api: Api) {
    const fromId = uid('usage-from');
    const toId = uid('usage-to');
    this.from = h('input', { id: fromId, type: 'date' });
    this.to = h('input', { id: toId, type: 'date' });
    const show = h('button', { type: 'submit' }, 'Show');
    const current = h('button', { type: 'button', class: 'secondary' }, 'Current period');
    const form = h(
      'form',
      { class: 'range', novalidate: true },
      h('span', {}, h('label', { for: fromId }, 'From'), this.from),
      h('span', {}, h('label', { for: toId }, 'To'), this.to),
      h('span', { class: 'range-actions' }, show, current),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.range = {
        ...(this.from.value ? { start: dayStart(this.from.value) } : {}),
        ...(this.to.value ? { end: dayStart(this.to.value) + DAY_S } : {}),
      };
      void this.load();
    });
    current.addEventListener('click', () => {
      this.range = {};
      void this.load();
    });
    this.element = h('section', { class: 'panel usage-panel', 'aria-label': 'Usage' }, h('h2', {}, 'Usage'), form, this.status, this.body);
  }

  async load(): Promise<void> {
    replace(this.status, 'Loading…');
    let report: UsageReport;
    try {
      report = await this.api.usage(this.range);
    } catch (error) {
      replace(
        this.status,
        error instanceof ApiRefusal ? `The server refused the report (HTTP ${error.status} ${error.code}).` : `The report failed: ${String(error)}`,
      );
      return;
    }
    this.from.value = dayOf(report.start);
    this.to.value = dayOf(report.end - DAY_S);
    const charged = report.totals.cost > 0 || (report.budget !== null && report.budget !== undefined && report.budget.budget !== null);
    replace(
      this.status,
      `${dayOf(report.start)} to ${dayOf(report.end - DAY_S)} (UTC days) · finished tasks only${charged ? ` · amounts in ${report.currency}` : ''}`,
    );
    const models = sumBy(report.data, (row) => row.model ?? '');
    replace(
      this.body,
      report.budget ? h('div', { class: 'usage-block' }, h('h3', {}, 'Budget'), budgetView(report.budget, report.currency)) : null,
      h('div', { class: 'usage-block' }, h('h3', {}, 'Totals'), totalsView(report.totals, report.currency)),
      h('div', { class: 'usage-block' }, h('h3', {}, 'By day'), dailyChart(report, report.data)),
      h(
        'div',
        { class: 'usage-block' },
        h('h3', {}, 'By model'),
        models.length === 0 ? h('p', { class: 'hint' }, 'No finished tasks in this range.') : usageTable('Usage by model', 'Model', models, report.totals.cost),
      ),
    );
  }
}
