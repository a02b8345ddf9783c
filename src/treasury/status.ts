/**
 * A treasury key as the chain holds it now, next to what the policy plans for the next period: per account, the
 * delegate and delegated amount read from the chain, the planned allowance and whether a refill is due. The one
 * reading that `treasury plan`, the console and the reconciliation's refill notice share.
 *
 * A refill is due when the key is still the delegate and the allowance left is below `refill_below_percent` of the
 * planned allowance (docs/treasury.md): the next period's spends would then meet the chain's bound before the caps'.
 */
import type { KeyConfig, PricesConfig } from '../config/types';
import { errorMessage } from '../util/errors';
import { planAllowances, type AllowancePlan } from './plan';
import { readPlanPrices } from './plan-prices';
import { readTreasuryAccounts, type AccountsReader, type TreasuryAccountState } from './read';

export interface TreasuryAccountStatus {
  account: string;
  /** null: the account is missing on chain or is not a token account. */
  chain: TreasuryAccountState | null;
  /** null when the plan could not be made (`problem` says why). */
  plan: AllowancePlan | null;
  /** The allowance below which a refill is due (base units); null without a plan. */
  refillBelow: bigint | null;
  refillDue: boolean;
}

export interface TreasuryStatus {
  key: string;
  /** The key's address: the delegate each account should name. */
  pubkey: string;
  owner: string;
  accounts: TreasuryAccountStatus[];
  /** Why there is no plan (an account missing, owned by another wallet, a mint unlisted, no price). */
  problem: { code: string; message: string } | null;
}

export type TreasuryPlan = { ok: true; plans: AllowancePlan[] } | { ok: false; code: string; message: string };

/** The plan of `key`'s treasury from chain state already read (`states`) and the prices read now. */
async function planFrom(
  rpc: AccountsReader,
  key: KeyConfig,
  prices: PricesConfig | undefined,
  states: readonly TreasuryAccountState[],
): Promise<TreasuryPlan> {
  const priced = await readPlanPrices(rpc, key, prices, [...new Set(states.map((s) => s.mint))]);
  if (!priced.ok) return priced;
  return planAllowances(key, states, priced.prices);
}

/** The allowances `key`'s policy implies for the next period, from the chain and prices as they are now. */
export async function planTreasury(
  rpc: AccountsReader,
  key: KeyConfig,
  prices: PricesConfig | undefined,
): Promise<TreasuryPlan> {
  return planFrom(rpc, key, prices, await readTreasuryAccounts(rpc, key.treasury?.accounts ?? []));
}

/** The allowance below which a refill of `plan` is due. */
export const refillThreshold = (plan: AllowancePlan, percent: number): bigint => (plan.amount * BigInt(percent)) / 100n;

/** `key`'s treasury now; null when the key has none. */
export async function treasuryStatus(
  rpc: AccountsReader,
  key: KeyConfig,
  prices: PricesConfig | undefined,
): Promise<TreasuryStatus | null> {
  const treasury = key.treasury;
  if (treasury === undefined) return null;
  const states = await readTreasuryAccounts(rpc, treasury.accounts);
  // The plan's own reads (the prices) failing must not stop what the accounts' state is needed for: the
  // reconciliation's comparison and the console's figures.
  const planned = await planFrom(rpc, key, prices, states).catch((e: unknown): TreasuryPlan => ({
    ok: false,
    code: 'treasury_price_unavailable',
    message: errorMessage(e),
  }));
  const plans = planned.ok ? planned.plans : [];
  return {
    key: key.name,
    pubkey: key.pubkey,
    owner: treasury.owner,
    problem: planned.ok ? null : { code: planned.code, message: planned.message },
    accounts: treasury.accounts.map((account) => {
      const chain = states.find((s) => s.account === account) ?? null;
      const plan = plans.find((p) => p.account === account) ?? null;
      const refillBelow = plan === null ? null : refillThreshold(plan, treasury.refill_below_percent);
      const refillDue =
        chain !== null && refillBelow !== null && chain.delegate === key.pubkey && chain.delegatedAmount < refillBelow;
      return { account, chain, plan, refillBelow, refillDue };
    }),
  };
}
