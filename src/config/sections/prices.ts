/**
 * `prices`: where dollar caps get their prices — one Pyth `PriceUpdateV2` account per asset on the signer's own
 * cluster, the feed id it must carry, and how old or uncertain a price may be (docs/pricing.md). Nothing here is
 * read unless a key has `usd` caps.
 */
import { address, type Address } from '@solana/addresses';
import { normalizeFeedId } from '../../util/feed-id';
import { fail, validateEntry } from '../fail';
import type { KeyConfig } from './keys';
import { section, type Infer } from '../setting';

export const pricesSchema = section({
  prices: {
    max_age_s: {
      doc: "Oldest price accepted, in seconds, judged on the cluster's clock read with the price (not the host's); an older one refuses the sign (`price_stale`).",
      format: 'positive-int',
      default: 60,
      env: 'SIGNER_PRICES_MAX_AGE_S',
    },
    max_confidence_bps: {
      doc: 'Widest confidence interval accepted, in basis points of the price; a wider one refuses the sign (`price_uncertain`). Spends are counted at price + confidence either way.',
      format: 'positive-int',
      default: 100,
      env: 'SIGNER_PRICES_MAX_CONFIDENCE_BPS',
    },
    allow_partial_verification: {
      doc: 'Accept prices the Pyth receiver posted after checking fewer Wormhole guardian signatures than a quorum (`Partial`); false: only `Full` (`price_unverified`).',
      format: 'bool-strict',
      default: false,
      env: 'SIGNER_PRICES_ALLOW_PARTIAL',
    },
    feeds: {
      doc: 'The price of each asset a `usd` cap values, a list of {asset, account, feed_id}: asset `SOL` or a mint address.',
      format: 'object-list',
      default: [],
    },
  },
});

/** One entry of `prices.feeds:`. */
export const priceFeedEntrySchema = section({
  asset: { doc: '`SOL`, or the mint (base58) this price values.', format: 'price-asset', default: null },
  account: {
    doc: "The `PriceUpdateV2` account on the signer's cluster (for mainnet-beta, Pyth's sponsored feed account; docs/pricing.md says how to find it).",
    format: 'address',
    default: null,
  },
  feed_id: {
    doc: 'The Pyth feed id the account must carry (64 hex digits, `0x` optional): a different one refuses the sign (`price_unverified`).',
    format: 'feed-id',
    default: null,
  },
});

type Raw = Infer<typeof pricesSchema>['prices'];

/** One configured price: the account to read and the feed id it must carry. */
export interface PriceSource {
  /** How messages name it: `SOL`, or the mint it prices. */
  label: string;
  account: Address;
  /** 64 lowercase hex digits. */
  feedId: string;
}

/** How old or uncertain a price may be, and which verification it needs. */
export interface PriceBounds {
  maxAgeS: number;
  maxConfidenceBps: number;
  /** Accept `Partial` verification (fewer guardian signatures than a quorum). */
  allowPartial: boolean;
}

/** What prices the signer may use, resolved: bounds, and one source per asset (`SOL` or a mint). */
export interface PricesConfig {
  bounds: PriceBounds;
  /** By asset: `SOL` or the mint address. */
  feeds: ReadonlyMap<string, PriceSource>;
}

export function buildPrices(raw: Raw): PricesConfig {
  const feeds = new Map<string, PriceSource>();
  for (const [i, item] of raw.feeds.entries()) {
    const where = `prices.feeds[${i}]`;
    const e = validateEntry(priceFeedEntrySchema, item, where);
    const asset = e.asset === 'SOL' ? 'SOL' : address(e.asset);
    if (feeds.has(asset)) fail(`${where}.asset: ${asset} is priced twice; list each asset once`);
    // The format has checked it; normalizing cannot fail here.
    const feedId = normalizeFeedId(e.feed_id) ?? fail(`${where}.feed_id: not a feed id`);
    feeds.set(asset, { label: asset, account: address(e.account), feedId });
  }
  return {
    bounds: {
      maxAgeS: raw.max_age_s,
      maxConfidenceBps: raw.max_confidence_bps,
      allowPartial: raw.allow_partial_verification,
    },
    feeds,
  };
}

/**
 * A key with `usd` caps needs a price for everything it can spend: SOL (every transaction pays its fee in it) and
 * each mint of its `tokens`. Refused at load rather than at the first sign, so a cap is never silently unpriced.
 */
export function checkPricedKeys(keys: readonly KeyConfig[], prices: PricesConfig): void {
  for (const key of keys) {
    if (key.usd === undefined || key.usd === null) continue;
    const missing = ['SOL' as const, ...(key.tokens ?? []).map((t) => t.mint)].filter((a) => !prices.feeds.has(a));
    if (missing.length > 0)
      fail(
        `keys.${key.name}.usd: no price for ${missing.join(', ')}; add {asset, account, feed_id} under prices.feeds for each (docs/pricing.md)`,
      );
  }
}
