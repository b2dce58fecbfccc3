/**
 * Amounts of money are integers of micro-units (1 unit = 1,000,000 micro-units) everywhere
 * inside the gateway, so that sums are exact; they become JSON numbers with at most 6 decimals
 * only when shown. Both conversions go through decimal text, never through float arithmetic
 * (0.1 + 0.2 is not 0.3 in binary; 100,000 + 200,000 micro-units is 300,000).
 */

/** An integer number of micro-units of the pricing currency. */
export type Micro = number;

export const MICRO_PER_UNIT = 1_000_000;

/** The currency of usage figures without a pricing file. */
export const DEFAULT_CURRENCY = 'USD';
export const MAX_DECIMALS = 6;

export type AmountParse = { readonly ok: true; readonly micro: Micro } | { readonly ok: false; readonly reason: string };

/**
 * A JSON number as micro-units. The number is read back through its shortest decimal text
 * (`String(n)`: "0.1" for 0.1, "1e-7" for 0.0000001), which is what the file said for every
 * number a person writes with at most 15 significant digits.
 */
export function parseAmount(value: unknown): AmountParse {
  if (typeof value !== 'number') return { ok: false, reason: 'must be a number' };
  if (!Number.isFinite(value)) return { ok: false, reason: 'must be a finite number' };
  if (value < 0) return { ok: false, reason: 'must not be negative' };
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/.exec(String(value));
  if (!match) return { ok: false, reason: 'must be a plain decimal number' };
  const [, whole = '', fraction = '', exponentText] = match;
  const exponent = exponentText === undefined ? 0 : Number(exponentText);
  // digits x 10^(exponent - fraction.length): the decimals are what is left of the point.
  const digits = `${whole}${fraction}`.replace(/^0+(?=\d)/, '');
  const decimals = fraction.length - exponent;
  const significantDecimals = decimals - (/0*$/.exec(digits)?.[0].length ?? 0);
  if (significantDecimals > MAX_DECIMALS) return { ok: false, reason: `has more than ${MAX_DECIMALS} decimals` };
  const shift = MAX_DECIMALS - decimals;
  const microText = shift >= 0 ? `${digits}${'0'.repeat(shift)}` : digits.slice(0, digits.length + shift);
  const micro = Number(microText === '' ? '0' : microText);
  if (!Number.isSafeInteger(micro)) return { ok: false, reason: 'is too large' };
  return { ok: true, micro };
}

/** Micro-units as the decimal text of the amount: 1500000 -> "1.5", 7 -> "0.000007". */
export function amountText(micro: Micro): string {
  if (!Number.isSafeInteger(micro)) throw new RangeError(`not an integer amount of micro-units: ${micro}`);
  const sign = micro < 0 ? '-' : '';
  const abs = Math.abs(micro);
  const whole = Math.floor(abs / MICRO_PER_UNIT);
  const fraction = String(abs % MICRO_PER_UNIT)
    .padStart(MAX_DECIMALS, '0')
    .replace(/0+$/, '');
  return `${sign}${whole}${fraction === '' ? '' : `.${fraction}`}`;
}

/**
 * Micro-units as the JSON number shown to clients. The number is parsed from the exact decimal
 * text, so JSON.stringify writes that text back (a decimal of at most 15 significant digits
 * survives the round trip through a double: amounts below a billion units).
 */
export function formatAmount(micro: Micro): number {
  return Number(amountText(micro));
}

/** Micro-units times a count, refusing a product that would lose exactness. */
export function times(micro: Micro, count: number): Micro {
  const product = micro * count;
  if (!Number.isSafeInteger(product)) throw new RangeError(`amount out of range: ${micro} x ${count}`);
  return product;
}
