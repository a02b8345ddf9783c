/**
 * A dollar cap in a mint's base units, for an allowance: the most base units whose value at the top of the price's
 * confidence interval (how the signer values a spend, src/pricing/valuation.ts) stays within the cap. The top is the
 * safe side: an allowance too large weakens the chain's bound, and the higher the price taken, the fewer base units;
 * so the allowance is worth at most the cap anywhere in the interval, and the chain never passes more than the
 * signer's own dollar cap would.
 */
import type { UsdPrice } from '../pricing/valuation';
import { MICROS_PER_USD, type UsdMicros } from '../util/usd-amounts';

const pow10 = (n: number): bigint => 10n ** BigInt(n);

/** The largest `amount` with `spendUsd(amount, decimals, price) <= usd`; 0 when the price is not positive. */
export function unitsForUsd(usd: UsdMicros, decimals: number, price: UsdPrice): bigint {
  const perUnit = price.price + price.conf;
  if (perUnit <= 0n || usd <= 0n) return 0n;
  // value(amount) = amount × perUnit × MICROS × 10^(exponent − decimals) micro-dollars; solved for amount, floored.
  const scale = price.exponent - decimals;
  return scale >= 0
    ? usd / (perUnit * MICROS_PER_USD * pow10(scale))
    : (usd * pow10(-scale)) / (perUnit * MICROS_PER_USD);
}
