/**
 * What a transaction takes out of a key in dollars: SOL lost (fee included) and every mint whose balance falls,
 * from the same simulation as the other caps, so value moved through a swap or any CPI counts, valued with checked
 * prices at price + confidence, rounded up. What it receives is not netted off: a swap is judged by what leaves.
 * The caps on that value are the policy's (src/signer/policy/rules/usd-caps.ts).
 */
import { refusal, type Refusal } from '../signer/refusals';
import type { MintMovement } from '../signer/spl-tokens/movements';
import type { MintState } from '../solana/token-state';
import { formatUsd, type UsdMicros } from '../util/usd-amounts';
import type { PricesConfig } from '../config/types';
import type { Figures } from '../signer/flow/simulate';
import type { CheckedPrice } from './price-check';
import { checkedPrices, type PricePlan } from './price-reads';
import { SOL_DECIMALS, spendUsd } from './valuation';

/** One asset the transaction takes out of the key, in base units (lamports for `SOL`). */
export interface Outflow {
  /** `SOL`, or the mint. */
  asset: string;
  amount: bigint;
  decimals: number;
}

/** An outflow with its dollar value and the price it was valued at: what the ledger records of the sign. */
export interface ValuedOutflow extends Outflow {
  usd: UsdMicros;
  price: CheckedPrice;
}

/**
 * What a transaction takes out of the key in dollars, with what each asset was valued at (the facts the dollar caps
 * judge, src/signer/policy/rules/usd-caps.ts), or why it cannot be valued (a price refused, a mint unreadable).
 */
export type UsdSpend = { ok: true; usd: UsdMicros; valued: ValuedOutflow[] } | { ok: false; refusal: Refusal };

/**
 * What the simulation says leaves the key: the lamports it loses (`balanceChange` below 0) and each mint whose
 * accounts of the key fall, with the mint's decimals. A mint the simulation moves but no read found refuses, as
 * the token checks do, since it cannot be valued.
 */
export function outflowsOf(
  balanceChange: number,
  tokens: readonly MintMovement[],
  mints: ReadonlyMap<string, MintState | null>,
): { ok: true; outflows: Outflow[] } | { ok: false; refusal: Refusal } {
  const outflows: Outflow[] = [];
  if (balanceChange < 0) outflows.push({ asset: 'SOL', amount: BigInt(-balanceChange), decimals: SOL_DECIMALS });
  for (const m of tokens) {
    if (m.keyChange >= 0n) continue;
    const mint = mints.get(m.mint) ?? null;
    if (mint === null)
      return {
        ok: false,
        refusal: refusal('mint_unreadable', `the mint ${m.mint} could not be read, so its spend cannot be valued`, {
          mint: m.mint,
        }),
      };
    outflows.push({ asset: m.mint, amount: -m.keyChange, decimals: mint.decimals });
  }
  return { ok: true, outflows };
}

/**
 * What `outflows` are worth, each at its checked price (src/pricing/price-check.ts) at price + confidence, rounded
 * up. An asset without a price refuses: it is never valued at zero.
 */
export function valueOutflows(outflows: readonly Outflow[], prices: ReadonlyMap<string, CheckedPrice>): UsdSpend {
  const valued: ValuedOutflow[] = [];
  for (const o of outflows) {
    const price = prices.get(o.asset);
    if (price === undefined)
      return {
        ok: false,
        refusal: refusal(
          'price_unavailable',
          `no price is configured for ${o.asset}, which this transaction spends; the operator should add it under \`prices.feeds\``,
          {},
        ),
      };
    valued.push({ ...o, usd: spendUsd(o.amount, o.decimals, price), price });
  }
  return { ok: true, usd: valued.reduce((sum, v) => sum + v.usd, 0n), valued };
}

/** `1000000 lamports of SOL = $0.15, 5000000 of <mint> = $5.00`: how a refusal shows what it counted. */
export function describeValued(valued: readonly ValuedOutflow[]): string {
  return valued
    .map(
      (v) => `${v.amount} ${v.asset === 'SOL' ? 'lamports of SOL' : `base units of ${v.asset}`} = $${formatUsd(v.usd)}`,
    )
    .join(', ');
}

/**
 * The dollar value of one simulation: what leaves the key, valued at the prices of those assets from the read made
 * with its balances (`plan`'s accounts in simulate's `extraReads`), each price checked.
 */
export function valueSpend(
  plan: PricePlan,
  bounds: PricesConfig['bounds'],
  figures: Pick<Figures, 'balanceChange' | 'tokens' | 'mints' | 'extraReads'>,
): UsdSpend {
  if (figures.balanceChange === null)
    return {
      ok: false,
      refusal: refusal('spend_unknown', "the simulation did not give the key's balance change, so it cannot be valued"),
    };
  const out = outflowsOf(figures.balanceChange, figures.tokens.mints, figures.mints);
  if (!out.ok) return out;
  if (figures.extraReads === null)
    return {
      ok: false,
      refusal: refusal(
        'price_unavailable',
        'the prices were not read with the balances, so the spend cannot be valued',
        {},
      ),
    };
  const priced = checkedPrices(
    plan,
    bounds,
    figures.extraReads,
    out.outflows.map((o) => o.asset),
  );
  if (!priced.ok) return priced;
  return valueOutflows(out.outflows, priced.prices);
}
