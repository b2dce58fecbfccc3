import { Readable } from 'node:stream';
import { amountText } from '../../billing/money.js';
import type { UsageExportCursor, UsageExportQuery, UsageExportRecord } from '../../store/records.js';

/**
 * The spend export in FinOps FOCUS form (docs/operations/observability.md, "Spend export"):
 * one CSV row per key x model x UTC day of the usage rollup, with the columns the FOCUS 1.2
 * specification requires of every dataset, the conditional ones that apply to a gateway that
 * bills by usage, and mediagate's own figures in `x_` columns (the specification reserves that
 * prefix for a provider's extensions).
 *
 * The rows come from the store a page at a time (keyset paging, `usageExportPage`) and go to the
 * response as they are formatted, so an export of any length holds one page of rows.
 */

/** Who runs the gateway, in the provider, publisher and invoice issuer columns. */
const PROVIDER = 'mediagate';

/** The columns, in order: FOCUS names, then mediagate's `x_` extensions. */
export const FOCUS_COLUMNS = [
  'BilledCost',
  'BillingAccountId',
  'BillingAccountName',
  'BillingCurrency',
  'BillingPeriodEnd',
  'BillingPeriodStart',
  'ChargeCategory',
  'ChargeClass',
  'ChargeDescription',
  'ChargeFrequency',
  'ChargePeriodEnd',
  'ChargePeriodStart',
  'ConsumedQuantity',
  'ConsumedUnit',
  'ContractedCost',
  'EffectiveCost',
  'InvoiceIssuerName',
  'ListCost',
  'PricingCategory',
  'PricingQuantity',
  'PricingUnit',
  'ProviderName',
  'PublisherName',
  'ServiceCategory',
  'ServiceName',
  'ServiceSubcategory',
  'SkuId',
  'SubAccountId',
  'SubAccountName',
  'x_ApiKeyId',
  'x_ApiKeyName',
  'x_Tasks',
  'x_BilledSeconds',
  'x_BilledImages',
] as const;

type Column = (typeof FOCUS_COLUMNS)[number];

/** A field as RFC 4180 writes it: quoted (quotes doubled) when it holds a comma, a quote or a line break. */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** One CSV record, CRLF-terminated as RFC 4180 has it. */
export function csvLine(fields: readonly string[]): string {
  return `${fields.map(csvField).join(',')}\r\n`;
}

const DAY_MS = 86_400_000;
const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

/** The UTC calendar month holding `day` ('YYYY-MM-DD'): [start, end) as FOCUS date-times. */
function billingPeriod(day: string): { start: string; end: string } {
  const year = Number(day.slice(0, 4));
  const month = Number(day.slice(5, 7)) - 1;
  return { start: iso(Date.UTC(year, month, 1)), end: iso(Date.UTC(year, month + 1, 1)) };
}

/** A usage row as the FOCUS columns. Amounts are exact decimal text of the micro-units; null columns are empty. */
export function focusRow(record: UsageExportRecord, currency: string): Record<Column, string> {
  const dayStart = Date.parse(`${record.day}T00:00:00Z`);
  const period = billingPeriod(record.day);
  const cost = amountText(record.cost);
  const what = [`${record.tasks} task${record.tasks === 1 ? '' : 's'}`];
  if (record.seconds > 0) what.push(`${record.seconds} s of video`);
  if (record.images > 0) what.push(`${record.images} image${record.images === 1 ? '' : 's'}`);
  return {
    // No discounts or commitments: what is billed is the list price, and the effective cost.
    BilledCost: cost,
    BillingAccountId: PROVIDER,
    BillingAccountName: PROVIDER,
    BillingCurrency: currency,
    BillingPeriodEnd: period.end,
    BillingPeriodStart: period.start,
    ChargeCategory: 'Usage',
    // Null unless the row corrects an earlier period's charge, which a rollup row never does.
    ChargeClass: '',
    ChargeDescription: `${what.join(', ')} of ${record.model} on ${record.day} (UTC)`,
    ChargeFrequency: 'Usage-Based',
    ChargePeriodEnd: iso(dayStart + DAY_MS),
    ChargePeriodStart: iso(dayStart),
    ConsumedQuantity: String(record.tasks),
    ConsumedUnit: 'Tasks',
    ContractedCost: cost,
    EffectiveCost: cost,
    InvoiceIssuerName: PROVIDER,
    ListCost: cost,
    PricingCategory: 'Standard',
    PricingQuantity: String(record.tasks),
    PricingUnit: 'Tasks',
    ProviderName: PROVIDER,
    PublisherName: PROVIDER,
    ServiceCategory: 'AI and Machine Learning',
    ServiceName: PROVIDER,
    ServiceSubcategory: 'Generative AI',
    SkuId: record.model,
    SubAccountId: record.keyId,
    SubAccountName: record.keyName,
    x_ApiKeyId: record.keyId,
    x_ApiKeyName: record.keyName,
    x_Tasks: String(record.tasks),
    x_BilledSeconds: String(record.seconds),
    x_BilledImages: String(record.images),
  };
}

/** The store's part of the export: a page of rows after a cursor (`Store.usageExportPage`). */
export type ExportPages = (query: UsageExportQuery, after: UsageExportCursor | undefined, limit: number) => Promise<readonly UsageExportRecord[]>;

/** How much an export held: a deterministic measure of its memory (rows, not bytes). */
export interface ExportStats {
  pages: number;
  rows: number;
  /** The most rows held at once: one page, whatever the range. */
  peakRowsHeld: number;
}

/** Rows per page: large enough that a year of a few hundred keys is a few hundred queries. */
export const EXPORT_PAGE_ROWS = 1000;

/**
 * The export as a byte stream: the header, then each page's rows as it is read. A page is read
 * only when the reader wants more (the response's backpressure), and dropped once written.
 */
export function focusCsv(pages: ExportPages, query: UsageExportQuery, currency: string, pageRows = EXPORT_PAGE_ROWS, stats?: ExportStats): Readable {
  async function* lines(): AsyncGenerator<string> {
    yield csvLine(FOCUS_COLUMNS);
    let after: UsageExportCursor | undefined;
    for (;;) {
      const page = await pages(query, after, pageRows);
      if (stats) {
        stats.pages += 1;
        stats.rows += page.length;
        stats.peakRowsHeld = Math.max(stats.peakRowsHeld, page.length);
      }
      if (page.length > 0) {
        let chunk = '';
        for (const record of page) {
          const row = focusRow(record, currency);
          chunk += csvLine(FOCUS_COLUMNS.map((column) => row[column]));
        }
        yield chunk;
      }
      const last = page.at(-1);
      if (last === undefined || page.length < pageRows) return;
      after = { day: last.day, keyId: last.keyId, model: last.model };
    }
  }
  return Readable.from(lines(), { objectMode: false });
}
