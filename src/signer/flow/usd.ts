/**
 * The dollar value of a sign, gathered for the policy: which price accounts a key's `usd` caps need read with the
 * simulation (none for a key without them, so its requests are exactly those of a key priced in base units only),
 * and what the simulation takes out of the key, valued at those prices once each is checked.
 */
import type { KeyConfig, PricesConfig } from '../../config/types';
import { pricePlan, type PricePlan } from '../../pricing/price-reads';
import { valueSpend, type UsdSpend } from '../../pricing/usd-spend';
import type { Figures } from './simulate';

/** The reads and bounds of one key's prices. */
export interface Pricing {
  plan: PricePlan;
  bounds: PricesConfig['bounds'];
}

/**
 * The key's pricing, or null when it has no `usd` caps (nothing extra is read, nothing valued) and `wanted` is false.
 * A credential that limits dollars wants every sign valued, on any key the configured feeds price.
 */
export function pricingFor(key: KeyConfig, prices: PricesConfig | undefined, wanted = false): Pricing | null {
  const plan = pricePlan(key, prices, wanted);
  return plan === null || prices === undefined ? null : { plan, bounds: prices.bounds };
}

/** The accounts simulate reads after the key's own for `pricing`. */
export const priceReads = (pricing: Pricing | null): readonly string[] => pricing?.plan.addresses ?? [];

/** What the simulation takes out of the key in dollars; null when the key is not priced. */
export function spendValue(pricing: Pricing | null, figures: Figures): UsdSpend | null {
  return pricing === null ? null : valueSpend(pricing.plan, pricing.bounds, figures);
}
