import { InvalidArgumentError, type Command } from 'commander';
import type { AdminUsageReport, UsageBudget, UsageReport, UsageTotals } from '../../client/index.js';
import { action, addConnectionOptions, makeClient, usageExit, type ConnectionFlags } from './context.js';
import { registerUsageExportCommand } from './usage-export.js';

/**
 * `mediagate usage`: the calling key's usage and budget as a table (or the report as JSON), and
 * the formatting `mediagate admin usage` shares: times given as days, amounts with two decimals
 * at least (six at most, as the API keeps them).
 */

const DAY_S = 86_400;

export interface UsageFlags extends ConnectionFlags {
  readonly start?: number;
  readonly end?: number;
  readonly groupBy?: string;
  readonly json?: boolean;
}

/**
 * A time on the command line: `YYYY-MM-DD` (a UTC day), an ISO date-time, or unix seconds.
 * `inclusiveDay`: a bare day given as an end means through that day (its next midnight).
 */
export function timeArg(inclusiveDay: boolean): (value: string) => number {
  return (value) => {
    const text = value.trim();
    if (/^\d{1,11}$/.test(text)) return Number(text);
    if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
      const ms = Date.parse(`${text}T00:00:00Z`);
      if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== text) throw new InvalidArgumentError('not a calendar day (YYYY-MM-DD).');
      return ms / 1000 + (inclusiveDay ? DAY_S : 0);
    }
    const ms = Date.parse(text);
    if (Number.isNaN(ms) || !/^\d{4}-\d{2}-\d{2}T/.test(text)) throw new InvalidArgumentError('a day (YYYY-MM-DD), an ISO date-time or unix seconds.');
    return Math.floor(ms / 1000);
  };
}

/** `--group-by model,day`: names from `allowed`, each once. */
export function groupByArg(allowed: readonly string[]): (value: string) => string {
  return (value) => {
    const parts = value.split(',').map((part) => part.trim());
    if (parts.length === 0 || parts.some((part) => !allowed.includes(part)) || new Set(parts).size !== parts.length) {
      throw new InvalidArgumentError(`one or more of ${allowed.join(', ')}, separated by commas.`);
    }
    return parts.join(',');
  };
}

/** An amount with at least two decimals and at most six: 1 -> "1.00", 0.123 -> "0.123". */
export function amount(value: number): string {
  const six = value.toFixed(6).replace(/0+$/, '');
  const [whole = '0', decimals = ''] = six.split('.');
  return `${whole}.${decimals.padEnd(2, '0')}`;
}

const day = (seconds: number): string => new Date(seconds * 1000).toISOString().slice(0, 10);
const when = (seconds: number): string =>
  new Date(seconds * 1000)
    .toISOString()
    .replace(/:\d{2}\.\d{3}Z$/, ' UTC')
    .replace('T', ' ');

/** Columns padded to the widest cell; numeric columns (from `firstNumeric` on) aligned right. */
export function alignedTable(rows: ReadonlyArray<readonly string[]>, firstNumeric: number): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, index) => (widths[index] = Math.max(widths[index] ?? 0, cell.length)));
  return rows
    .map((row) =>
      row
        .map((cell, index) => (index >= firstNumeric ? cell.padStart(widths[index] ?? 0) : cell.padEnd(widths[index] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

type Report = Pick<UsageReport | AdminUsageReport, 'currency' | 'start' | 'end' | 'totals'> & {
  readonly data: ReadonlyArray<UsageTotals & { readonly key_id?: string | null; readonly model: string | null; readonly day: string | null }>;
};

/** The report as a table: one column per dimension it was grouped by, the counts, the cost, a total line. */
export function formatUsage(report: Report, withKey: boolean): string {
  // Nothing cost anything (no pricing file, or only free models): no cost column and no currency,
  // where "0.00 USD" on every line would say the tasks were priced.
  const priced = report.totals.cost > 0;
  const header = `Usage ${day(report.start)} to ${day(report.end - DAY_S)} (UTC days)${priced ? `, amounts in ${report.currency}` : ', nothing priced'}`;
  if (report.data.length === 0) return `${header}\n\nNo finished tasks in this range.`;
  const first = report.data[0];
  const dimensions: { title: string; cell: (row: Report['data'][number]) => string }[] = [];
  if (withKey && first?.key_id !== null) dimensions.push({ title: 'KEY', cell: (row) => row.key_id ?? '' });
  if (first?.model !== null) dimensions.push({ title: 'MODEL', cell: (row) => row.model ?? '' });
  if (first?.day !== null) dimensions.push({ title: 'DAY', cell: (row) => row.day ?? '' });
  const counts = (row: UsageTotals): string[] => [String(row.tasks), String(row.seconds), String(row.images), ...(priced ? [amount(row.cost)] : [])];
  const rows = [
    [...dimensions.map((dimension) => dimension.title), 'TASKS', 'SECONDS', 'IMAGES', ...(priced ? ['COST'] : [])],
    ...report.data.map((row) => [...dimensions.map((dimension) => dimension.cell(row)), ...counts(row)]),
    [...dimensions.map((_, index) => (index === 0 ? 'TOTAL' : '')), ...counts(report.totals)],
  ];
  return `${header}\n\n${alignedTable(rows, dimensions.length)}`;
}

/** "Budget: 0.75 spent + 0.25 reserved of 1.50 a month (66.7%), resets 2026-12-01 00:00 UTC". */
export function formatBudget(budget: UsageBudget, currency: string): string {
  if (budget.budget === null) {
    const held = budget.reserved > 0 ? ` (${amount(budget.reserved)} reserved by running tasks)` : '';
    if (budget.spent === 0 && budget.reserved === 0) return 'Budget: none.';
    return `Budget: none. Spent ${amount(budget.spent)} ${currency} in all${held}.`;
  }
  const period = budget.budget_period === null ? 'in all (lifetime)' : `a ${budget.budget_period}`;
  const used = budget.budget === 0 ? 100 : ((budget.spent + budget.reserved) / budget.budget) * 100;
  const resets = budget.resets_at === null ? '' : `, resets ${when(budget.resets_at)}`;
  const left = Math.max(0, budget.budget - budget.spent - budget.reserved);
  return (
    `Budget: ${amount(budget.spent)} spent + ${amount(budget.reserved)} reserved of ${amount(budget.budget)} ${currency} ${period} ` +
    `(${used.toFixed(1)}%), ${amount(Number(left.toFixed(6)))} left${resets}.`
  );
}

/** `mediagate usage` */
export function registerUsageCommand(program: Command): void {
  const usage = program.command('usage');
  registerUsageExportCommand(usage);
  addConnectionOptions(usage.description('show this API key’s usage (finished tasks by model and day, their cost) and its budget'))
    .option(
      '--start <time>',
      'from this UTC day (YYYY-MM-DD), ISO date-time or unix seconds (default: the budget period’s start, else 30 days ago)',
      timeArg(false),
    )
    .option('--end <time>', 'through this UTC day (YYYY-MM-DD), or until this date-time or unix seconds (default: today, or the period’s end)', timeArg(true))
    .option('--group-by <dims>', 'model, day or model,day (default)', groupByArg(['model', 'day']))
    .option('--json', 'print the report as the API answers it')
    .exitOverride(usageExit)
    .action(
      action(async (flags: UsageFlags) => {
        const report = await makeClient(flags).usage.retrieve({
          ...(flags.start !== undefined ? { start: flags.start } : {}),
          ...(flags.end !== undefined ? { end: flags.end } : {}),
          ...(flags.groupBy !== undefined ? { groupBy: flags.groupBy.split(',') as ('model' | 'day')[] } : {}),
        });
        if (flags.json) {
          process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
          return;
        }
        process.stdout.write(`${formatUsage(report, false)}\n\n${formatBudget(report.budget, report.currency)}\n`);
      }),
    );
}
