/**
 * MEDIAGATE_PRICING_FILE: what each model costs, read once at start and checked whole (every
 * fault reported with its JSON path; the entry prints them and exits 78, as for the channels
 * file). The file holds prices only, never a key.
 *
 *   {"currency": "USD", "models": {"<model id>" | "*": PRICE}}
 *   PRICE: any of per_task (number), per_second (number, or {"<resolution>" | "*": number}),
 *          per_image (number)
 */
import { readFileSync } from 'node:fs';
import { allModels, type ModelRow } from '../catalog/index.js';
import { parseAmount, type Micro } from './money.js';

/** `per_second` by the task's resolution; `other` is the `"*"` entry. */
export interface PerResolution {
  readonly byValue: ReadonlyMap<string, Micro>;
  readonly other?: Micro;
}

export interface Price {
  readonly perTask?: Micro;
  readonly perSecond?: Micro | PerResolution;
  readonly perImage?: Micro;
}

export interface Pricing {
  /** ISO 4217 style: three capital letters. */
  readonly currency: string;
  /** Prices by exact model id. */
  readonly models: ReadonlyMap<string, Price>;
  /** The `"*"` price: every model without an entry of its own. */
  readonly fallback?: Price;
}

export class PricingConfigError extends Error {
  override readonly name = 'PricingConfigError';
  readonly exitCode = 78;
  constructor(readonly faults: readonly string[]) {
    super(`invalid pricing file:\n  ${faults.join('\n  ')}`);
  }
}

const ROOT_FIELDS = new Set(['currency', 'models']);
const PRICE_FIELDS = new Set(['per_task', 'per_second', 'per_image']);
const SECRET_FIELDS = new Set(['api_key', 'apikey', 'key', 'token', 'secret', 'password', 'authorization']);
const CURRENCY = /^[A-Z]{3}$/;
export const ANY = '*';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A JSON path segment as written (`models.vendora/famw-2.7-t2v.per_task`); quoted when empty or holding spaces, quotes or brackets. */
function segment(key: string): string {
  return /^[^\s"'[\]]+$/.test(key) ? key : JSON.stringify(key);
}

function amount(value: unknown, at: string, faults: string[]): Micro | undefined {
  const parsed = parseAmount(value);
  if (parsed.ok) return parsed.micro;
  faults.push(`${at}: ${parsed.reason}`);
  return undefined;
}

/** Resolution values a PRICE may name: the model's own, or for "*" those of every model. */
function resolutionValues(rows: readonly ModelRow[]): Set<string> | 'any' {
  const values = new Set<string>();
  for (const row of rows) {
    if (row.kind !== 'video') continue;
    if (row.resolution === null) {
      if (rows.length === 1) return 'any'; // the model takes any string: any key may be its value
      continue;
    }
    for (const value of row.resolution.values) values.add(value);
  }
  return values;
}

/** `named`: the models whose resolution values a key may name; `rows`: the models it prices. */
function perSecond(raw: unknown, at: string, named: readonly ModelRow[], rows: readonly ModelRow[], faults: string[]): Micro | PerResolution | undefined {
  if (!isObject(raw)) return amount(raw, at, faults);
  const allowed = resolutionValues(named);
  const byValue = new Map<string, Micro>();
  let other: Micro | undefined;
  if (Object.keys(raw).length === 0) faults.push(`${at}: must name at least one resolution (or "*")`);
  for (const [key, value] of Object.entries(raw)) {
    const keyAt = `${at}.${segment(key)}`;
    const micro = amount(value, keyAt, faults);
    if (key === ANY) {
      other = micro;
    } else if (allowed !== 'any' && !allowed.has(key)) {
      const which = named.length === 1 ? `${named[0]?.id ?? ''} has no` : 'no model has a';
      faults.push(`${keyAt}: ${which} resolution "${key}"${allowed.size > 0 ? ` (one of ${[...allowed].join(', ')})` : ''}`);
    } else if (micro !== undefined) {
      byValue.set(key, micro);
    }
  }
  // A task of a priced model always finds its per-second price: every value, or a "*".
  if (other === undefined) {
    for (const row of rows) {
      if (row.kind !== 'video') continue;
      const missing = row.resolution === null ? ['(any)'] : row.resolution.values.filter((v) => !(v in raw));
      if (missing.length > 0) faults.push(`${at}: no price for resolution ${missing.join(', ')} of ${row.id}; add it or "*"`);
    }
  }
  return other === undefined ? { byValue } : { byValue, other };
}

/** Up to three model ids, then how many more. */
function someIds(rows: readonly ModelRow[]): string {
  const shown = rows.slice(0, 3).map((row) => row.id);
  return rows.length > 3 ? `${shown.join(', ')} and ${rows.length - 3} more` : shown.join(', ');
}

/**
 * `"*"` prices every model without an entry, video and image alike: each of them must find in
 * it a field its tasks are charged by (per_task, or per_second for a video, per_image for an
 * image). `{"per_second": 0.1}` alone would show a price on the image models and charge them 0.
 */
function neverCharged(raw: Record<string, unknown>, at: string, rows: readonly ModelRow[], faults: string[]): void {
  if (raw.per_task !== undefined) return;
  const images = rows.filter((row) => row.kind === 'image');
  const videos = rows.filter((row) => row.kind === 'video');
  if (raw.per_image === undefined && raw.per_second !== undefined && images.length > 0) {
    faults.push(
      `${at}: prices ${images.length} image model(s) (${someIds(images)}) by per_second only; an image task has no seconds, so they would never be charged: add per_image (or per_task), or give them entries of their own`,
    );
  }
  if (raw.per_second === undefined && raw.per_image !== undefined && videos.length > 0) {
    faults.push(
      `${at}: prices ${videos.length} video model(s) (${someIds(videos)}) by per_image only; a video task delivers no images, so they would never be charged: add per_second (or per_task), or give them entries of their own`,
    );
  }
}

/** One PRICE; `rows` are the models it prices (one for an exact id, the rest for "*"). */
function parsePrice(raw: unknown, at: string, rows: readonly ModelRow[], exact: boolean, all: readonly ModelRow[], faults: string[]): Price | undefined {
  if (!isObject(raw)) {
    faults.push(`${at}: must be an object with any of per_task, per_second, per_image`);
    return undefined;
  }
  const keys = Object.keys(raw);
  if (keys.length === 0) faults.push(`${at}: is empty; give any of per_task, per_second, per_image (or remove the entry)`);
  for (const key of keys) {
    if (SECRET_FIELDS.has(key.toLowerCase())) faults.push(`${at}.${segment(key)}: the pricing file holds prices, never a key`);
    else if (!PRICE_FIELDS.has(key)) faults.push(`${at}.${segment(key)}: unknown field (per_task, per_second, per_image)`);
  }
  const row = exact ? rows[0] : undefined;
  // A price that can never apply is a mistake in the file, not a no-op.
  if (row?.kind === 'video' && raw.per_image !== undefined) faults.push(`${at}.per_image: ${row.id} is a video model; it delivers no images`);
  if (row?.kind === 'image' && raw.per_second !== undefined) faults.push(`${at}.per_second: ${row.id} is an image model; it has no seconds`);
  if (!exact) neverCharged(raw, at, rows, faults);
  const price: { perTask?: Micro; perSecond?: Micro | PerResolution; perImage?: Micro } = {};
  if (raw.per_task !== undefined) price.perTask = amount(raw.per_task, `${at}.per_task`, faults);
  if (raw.per_second !== undefined && row?.kind !== 'image') price.perSecond = perSecond(raw.per_second, `${at}.per_second`, exact ? rows : all, rows, faults);
  if (raw.per_image !== undefined && row?.kind !== 'video') price.perImage = amount(raw.per_image, `${at}.per_image`, faults);
  return price;
}

/** Checks the file's text against the catalog. Throws PricingConfigError with every fault. */
export function parsePricing(text: string, models: readonly ModelRow[] = allModels()): Pricing {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new PricingConfigError([`(file): not valid JSON: ${err instanceof Error ? err.message : String(err)}`]);
  }
  if (!isObject(doc)) throw new PricingConfigError(['(root): must be an object with "currency" and "models"']);
  const faults: string[] = [];
  for (const key of Object.keys(doc)) {
    if (SECRET_FIELDS.has(key.toLowerCase())) faults.push(`${segment(key)}: the pricing file holds prices, never a key`);
    else if (!ROOT_FIELDS.has(key)) faults.push(`${segment(key)}: unknown field (currency, models)`);
  }
  const currency = doc.currency;
  if (typeof currency !== 'string' || !CURRENCY.test(currency)) faults.push('currency: must be three capital letters, e.g. "USD"');
  const prices = new Map<string, Price>();
  let fallback: Price | undefined;
  if (!isObject(doc.models)) {
    faults.push('models: must be an object of model id (or "*") -> price');
  } else {
    const byId = new Map(models.map((row) => [row.id, row]));
    const unpriced = models.filter((row) => !(row.id in (doc.models as Record<string, unknown>)));
    for (const [id, raw] of Object.entries(doc.models)) {
      const at = `models.${segment(id)}`;
      if (id === ANY) {
        fallback = parsePrice(raw, at, unpriced, false, models, faults);
        continue;
      }
      const row = byId.get(id);
      if (!row) {
        faults.push(`${at}: unknown model id (see GET /v1/models)`);
        continue;
      }
      const price = parsePrice(raw, at, [row], true, models, faults);
      if (price) prices.set(id, price);
    }
  }
  if (faults.length > 0) throw new PricingConfigError(faults);
  return { currency: currency as string, models: prices, ...(fallback === undefined ? {} : { fallback }) };
}

/** Reads and checks the file; no path: nothing is priced (undefined). */
export function loadPricing(path: string | undefined, models: readonly ModelRow[] = allModels()): Pricing | undefined {
  if (path === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));
    throw new PricingConfigError([`(file): cannot read ${path}: ${code}`]);
  }
  return parsePricing(text, models);
}
