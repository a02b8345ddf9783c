/**
 * Prices for the dollar tests: dollars written as the config writes them, the price checks' usual bounds, SOL's
 * Pyth account as a key's only feed, and SOL priced on the embedded chain.
 */
import type { PricesConfig } from '../../src/config/types';
import type { Localnet } from '../../src/localnet/server';
import { KNOWN_FEEDS } from '../../src/pricing/feeds';
import { parseUsd } from '../../src/util/usd-amounts';

export const SOL_FEED = KNOWN_FEEDS['SOL/USD'];

/** The bounds a price is checked against unless a test says otherwise: 60 s old at most, 100 bps wide, Full only. */
export const PRICE_BOUNDS: PricesConfig['bounds'] = { maxAgeS: 60, maxConfidenceBps: 100, allowPartial: false };

/** SOL's Pyth account on the embedded chain as the only feed. */
export const SOL_PRICES: PricesConfig = {
  bounds: PRICE_BOUNDS,
  feeds: new Map([['SOL', { label: 'SOL', account: SOL_FEED.sponsoredAccount, feedId: SOL_FEED.feedId }]]),
};

/** Dollars as a config writes them (`"5.00"`), in micro-dollars; a malformed figure fails the test. */
export function dollars(text: string): bigint {
  const parsed = parseUsd(text);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.micros;
}

/** Prices SOL at `price` dollars with no confidence interval, published `ageS` seconds ago on the chain's clock. */
export function setSolPrice(chain: Pick<Localnet, 'setPrice'>, price: string, ageS = 0): void {
  chain.setPrice({ account: SOL_FEED.sponsoredAccount, feedId: SOL_FEED.feedId, price, conf: '0', ageS });
}
