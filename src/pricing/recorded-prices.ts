/**
 * The prices a sign was valued at, as its intent records them (`usd_prices`), and what a later spend of the same
 * sign is worth at those prices. The tripwire values what a transaction really took out of the key once it landed
 * at the prices recorded when it was signed, never at today's: the comparison with the reserved value is then about
 * the amounts alone, and a price that moved meanwhile can neither hide an overspend nor invent one.
 */
import type { UsdPriceFigure } from '../ledger/types';
import { formatUsd, type UsdMicros } from '../util/usd-amounts';
import type { ValuedOutflow } from './usd-spend';
import { spendUsd } from './valuation';

/** What the ledger records of a valuation: each asset with its amount, value and the checked price it was read at. */
export function recordedPrices(valued: readonly ValuedOutflow[]): UsdPriceFigure[] {
  return valued.map((v) => ({
    asset: v.asset,
    decimals: v.decimals,
    amount: v.amount.toString(),
    usd_micros: v.usd.toString(),
    price: v.price.price.toString(),
    conf: v.price.conf.toString(),
    exponent: v.price.exponent,
    publish_time: Number(v.price.publishTime),
    account: v.price.account,
  }));
}

/** A landed spend valued at recorded prices: the total, and the assets spent that no recorded price covers. */
export interface RecordedValue {
  usd: UsdMicros;
  /** Assets the landing spent that the sign did not value (so had no price): the total is a lower bound. */
  unpriced: string[];
}

/**
 * What `spent` (base units per asset, `SOL` for lamports) is worth at the prices `recorded` with the sign, each at
 * price + confidence rounded up, as the sign itself was valued.
 */
export function valueAtRecorded(
  recorded: readonly UsdPriceFigure[],
  spent: ReadonlyMap<string, bigint>,
): RecordedValue {
  let usd = 0n;
  const unpriced: string[] = [];
  for (const [asset, amount] of spent) {
    if (amount <= 0n) continue;
    const p = recorded.find((r) => r.asset === asset);
    if (p === undefined) {
      unpriced.push(asset);
      continue;
    }
    usd += spendUsd(amount, p.decimals, { price: BigInt(p.price), conf: BigInt(p.conf), exponent: p.exponent });
  }
  return { usd, unpriced };
}

/**
 * The tripwire's sentence for a landing worth more than the sign reserved, with both figures, or null when it is
 * worth no more. `reserved` is the intent's `usd_micros`.
 */
export function usdOverspend(reserved: UsdMicros, landed: RecordedValue): string | null {
  if (landed.usd <= reserved) return null;
  const beyond = landed.unpriced.length > 0 ? `, plus ${landed.unpriced.join(', ')} which it had no price for` : '';
  return `$${formatUsd(landed.usd)} spent at the prices recorded at the sign${beyond}, $${formatUsd(reserved)} reserved`;
}
