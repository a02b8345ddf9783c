/**
 * Which accounts a key's dollar caps need read with its balances (src/signer/flow/simulate.ts `extraReads`), and
 * the checked prices those reads give: the price account of every asset the key may spend, then the Clock
 * sysvar, all from one getMultipleAccounts, so each price is aged against the clock of the bank it was read in.
 */
import { address } from '@solana/addresses';
import { getSysvarClockDecoder, SYSVAR_CLOCK_ADDRESS } from '@solana/sysvars';
import type { KeyConfig, PricesConfig } from '../config/types';
import type { PriceSource } from '../config/sections/prices';
import type { AccountData } from '../rpc/types';
import { refusal, type Refusal } from '../signer/refusals';
import { checkPrice, type CheckedPrice } from './price-check';

/** The reads for one key: `addresses` is what simulate reads after the key's accounts, the clock last. */
export interface PricePlan {
  /** By asset (`SOL` or a mint): its source and the index of its account in `addresses`. */
  sources: ReadonlyMap<string, { source: PriceSource; index: number }>;
  addresses: readonly string[];
}

/** The plan for `key`, or null when it has no dollar caps and none are `wanted` (nothing extra is read). */
export function pricePlan(key: KeyConfig, prices: PricesConfig | undefined, wanted = false): PricePlan | null {
  if (prices === undefined || (!wanted && (key.usd === undefined || key.usd === null))) return null;
  const assets = ['SOL', ...(key.tokens ?? []).map((t) => t.mint)];
  const addresses: string[] = [];
  const sources = new Map<string, { source: PriceSource; index: number }>();
  for (const asset of assets) {
    const source = prices.feeds.get(asset);
    if (source === undefined) continue; // the loader refuses such a config; judged price_unavailable if met
    let index = addresses.indexOf(source.account);
    if (index < 0) index = addresses.push(source.account) - 1;
    sources.set(asset, { source, index });
  }
  addresses.push(SYSVAR_CLOCK_ADDRESS);
  return { sources, addresses };
}

const clockDecoder = getSysvarClockDecoder();

/**
 * The checked price of each of `assets` from `reads` (simulate's `extraReads` for `plan.addresses`), or the first
 * refusal. Only the assets a transaction spends are judged: a stale price of a mint it does not touch refuses
 * nothing.
 */
export function checkedPrices(
  plan: PricePlan,
  bounds: PricesConfig['bounds'],
  reads: readonly (AccountData | null)[],
  assets: readonly string[],
): { ok: true; prices: Map<string, CheckedPrice> } | { ok: false; refusal: Refusal } {
  const clock = reads[plan.addresses.length - 1] ?? null;
  if (reads.length !== plan.addresses.length || clock === null || clock.data.length < clockDecoder.fixedSize)
    return {
      ok: false,
      refusal: refusal(
        'price_unavailable',
        'the Clock sysvar was not read with the prices, so no price can be aged',
        {},
      ),
    };
  const clockTime = clockDecoder.decode(clock.data).unixTimestamp;
  const prices = new Map<string, CheckedPrice>();
  for (const asset of assets) {
    const planned = plan.sources.get(asset);
    if (planned === undefined) continue; // judgeUsdCaps refuses an asset without a price
    const read = reads[planned.index] ?? null;
    const checked = checkPrice(
      planned.source,
      bounds,
      read === null ? null : { owner: address(read.owner), data: read.data },
      clockTime,
    );
    if (!checked.ok) return checked;
    prices.set(asset, checked.price);
  }
  return { ok: true, prices };
}
