/**
 * What an amount is worth in dollars, exactly: base units × price × 10^exponent, in micro-dollars, rounded once at
 * the end. A spend is valued at the top of the price's confidence interval and rounded up, what is received at the
 * bottom and rounded down, so the price's uncertainty and the rounding both count against the key, never for it.
 */
import { uiAmount } from '../util/token-amounts';
import { MICROS_PER_USD, type UsdMicros } from '../util/usd-amounts';

/** A checked price (src/pricing/price-check.ts): the dollar price is `price × 10^exponent`, ± `conf` on that scale. */
export interface UsdPrice {
  price: bigint;
  conf: bigint;
  exponent: number;
}

/** SOL's decimals: lamports per SOL is 10^9. */
export const SOL_DECIMALS = 9;

const pow10 = (n: number): bigint => 10n ** BigInt(n);

/** `amount × perUnit × 10^exponent / 10^decimals` dollars in micro-dollars, rounded up or down. */
function micros(amount: bigint, decimals: number, perUnit: bigint, exponent: number, up: boolean): UsdMicros {
  if (amount < 0n) throw new RangeError(`an amount to value is never negative (${amount})`);
  if (perUnit <= 0n || amount === 0n) return 0n;
  const scale = exponent - decimals; // micro-dollars = amount × perUnit × MICROS × 10^scale
  const numerator = amount * perUnit * MICROS_PER_USD;
  if (scale >= 0) return numerator * pow10(scale);
  const denominator = pow10(-scale);
  const quotient = numerator / denominator;
  return up && quotient * denominator !== numerator ? quotient + 1n : quotient;
}

/** What spending `amount` base units (lamports for SOL) costs, at price + confidence, rounded up. */
export function spendUsd(amount: bigint, decimals: number, p: UsdPrice): UsdMicros {
  return micros(amount, decimals, p.price + p.conf, p.exponent, true);
}

/** What receiving `amount` base units is worth, at price − confidence (never below zero), rounded down. */
export function receiptUsd(amount: bigint, decimals: number, p: UsdPrice): UsdMicros {
  return micros(amount, decimals, p.price - p.conf, p.exponent, false);
}

/**
 * `"150.25"` at exponent -8 → `15025000000n`: a decimal as Pyth would carry it at that exponent; null when it is not
 * a plain non-negative decimal or has more digits after the point than the exponent keeps.
 */
export function parsePythDecimal(text: string, exponent: number): bigint | null {
  const m = /^(\d{1,19})(?:\.(\d+))?$/.exec(text.trim());
  if (m === null) return null;
  const [, whole = '0', fraction = ''] = m;
  const places = exponent < 0 ? -exponent : 0;
  if (fraction.replace(/0+$/, '').length > places) return null;
  const scaled = BigInt(whole + fraction.padEnd(places, '0').slice(0, places));
  if (exponent <= 0) return scaled;
  const unit = pow10(exponent);
  return scaled % unit === 0n ? scaled / unit : null;
}

/** `15025000000` at exponent -8 → `"150.25"`: a Pyth figure as an exact decimal, for refusals and records. */
export function pythDecimal(mantissa: bigint, exponent: number): string {
  return exponent >= 0 ? (mantissa * pow10(exponent)).toString() : uiAmount(mantissa, -exponent);
}
