/**
 * The prices a dollar-sized allowance needs (docs/treasury.md): for a key with `usd.per_day`, each treasury mint's
 * price, read and checked exactly as a sign checks it (the configured feed, the Pyth receiver as owner, fresh on
 * the cluster's clock, narrow enough). A price that fails the check sizes nothing: the plan says why instead of
 * falling back to a bigger allowance.
 */
import type { KeyConfig, PricesConfig } from '../config/types';
import { checkedPrices, pricePlan } from '../pricing/price-reads';
import type { UsdPrice } from '../pricing/valuation';
import type { AccountsReader } from './read';

export type PlanPrices = { ok: true; prices: Map<string, UsdPrice> } | { ok: false; code: string; message: string };

export async function readPlanPrices(
  rpc: AccountsReader,
  key: KeyConfig,
  prices: PricesConfig | undefined,
  mints: readonly string[],
): Promise<PlanPrices> {
  if ((key.usd?.per_day ?? null) === null || mints.length === 0) return { ok: true, prices: new Map() };
  const plan = pricePlan(key, prices);
  if (plan === null || prices === undefined) {
    return {
      ok: false,
      code: 'treasury_price_unavailable',
      message: `keys.${key.name}.usd.per_day is set but no prices are configured (docs/pricing.md)`,
    };
  }
  const { accounts } = await rpc.getAccountsData([...plan.addresses]);
  const checked = checkedPrices(plan, prices.bounds, accounts, mints);
  if (!checked.ok) {
    return {
      ok: false,
      code: 'treasury_price_unavailable',
      message: `${checked.refusal.reason}: ${checked.refusal.message}`,
    };
  }
  return { ok: true, prices: new Map(checked.prices) };
}
