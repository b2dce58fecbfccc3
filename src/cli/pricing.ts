import { resolve } from 'node:path';
import { chargeable, describePrice, priceList, type Pricing } from '../billing/index.js';
import { formatTable } from './keys.js';
import { readConfig, readPricing } from './serve.js';

const FROM = { own: 'own entry', any: '"*"', none: '-' } as const;

function priceRows(pricing: Pricing): string[][] {
  const rows = [['MODEL', 'KIND', 'PRICE', 'FROM']];
  for (const listing of priceList(pricing)) {
    rows.push([listing.model, listing.kind, listing.from === 'none' ? '0 (no price)' : describePrice(listing.view), FROM[listing.from]]);
  }
  return rows;
}

/**
 * `mediagate pricing check [file]`: the file (or MEDIAGATE_PRICING_FILE) is checked exactly as
 * at start; a fault exits 78 with one line per JSON path. Valid: every model's price is printed.
 */
export function pricingCheck(file: string | undefined): number {
  const config = readConfig({ workers: false });
  const path = file === undefined ? config.pricingFile : resolve(file);
  const out = (text: string): void => void process.stdout.write(`${text}\n`);
  if (path === undefined) {
    out('MEDIAGATE_PRICING_FILE is not set (and no file was given): nothing is priced; usage still counts seconds and images.');
    return 0;
  }
  const pricing = readPricing(config, path);
  if (pricing === undefined) return 0;
  const list = priceList(pricing);
  out(`${path}: OK (currency ${pricing.currency}).\n`);
  out(formatTable(priceRows(pricing)));
  out(`\n${list.filter(chargeable).length} of ${list.length} model(s) priced; a model without a price costs 0.`);
  return 0;
}
