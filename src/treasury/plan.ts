/**
 * A treasury's allowances (docs/treasury.md): for each account, the amount the key's policy allows in a period (the
 * mint's per_day, or less when the key's dollar cap converted at the mint's price is less). Plain arithmetic on
 * what the chain holds, so the console and the reconciliation can plan without loading a transaction builder.
 */
import type { KeyConfig } from '../config/types';
import type { UsdPrice } from '../pricing/valuation';
import type { TokenProgramName } from '../solana/token-state';
import { formatUsd } from '../util/usd-amounts';
import { unitsForUsd } from './usd-allowance';

/** One account's allowance: the owner lets `delegate` (the key) spend `amount` base units of `mint`. */
export interface AllowancePlan {
  account: string;
  mint: string;
  owner: string;
  delegate: string;
  amount: bigint;
  decimals: number;
  /** The token program that owns the account: the one the approval is addressed to. */
  program: TokenProgramName;
  /**
   * Which cap sized `amount`: the mint's `per_day`, or the key's `usd.per_day` converted at the mint's price
   * (when that gives fewer base units). A dollar-sized amount moves with the price, so `submit` accepts an
   * approval of at most it rather than exactly it.
   */
  basis: 'tokens.per_day' | 'usd.per_day';
  /** The basis in words, for the operator: the figures it came from. */
  why: string;
}

/** What the plan needs of a treasury account as the chain holds it. */
export interface TreasuryAccountFacts {
  account: string;
  mint: string;
  owner: string;
  decimals: number;
  program: TokenProgramName;
  /**
   * Why the signer cannot account for the mint (a Token-2022 extension it refuses, named: extensions.ts), or null.
   * The signer refuses to spend such a mint, and an allowance of it would not bound what the caps count.
   */
  mintRefusal: string | null;
}

export type PlanOutcome = { ok: true; plans: AllowancePlan[] } | { ok: false; code: string; message: string };

/**
 * The allowance each treasury account of `key` needs for the next period: its mint's per_day cap, or, when the key
 * has `usd.per_day`, the base units that cap buys at the mint's price if that is fewer. `prices` holds the checked
 * price of each mint (src/treasury/plan-prices.ts); a key with `usd.per_day` needs one for every account's mint.
 */
export function planAllowances(
  key: KeyConfig,
  facts: readonly TreasuryAccountFacts[],
  prices: ReadonlyMap<string, UsdPrice> = new Map(),
): PlanOutcome {
  const treasury = key.treasury;
  if (treasury === undefined) {
    return { ok: false, code: 'treasury_not_configured', message: `keys.${key.name}.treasury is not set` };
  }
  const plans: AllowancePlan[] = [];
  for (const account of treasury.accounts) {
    const f = facts.find((x) => x.account === account);
    if (f === undefined) {
      return {
        ok: false,
        code: 'treasury_account_missing',
        message: `token account ${account} was not found on chain`,
      };
    }
    if (f.owner !== treasury.owner) {
      return {
        ok: false,
        code: 'treasury_owner_differs',
        message: `token account ${account} is owned by ${f.owner}, not by keys.${key.name}.treasury.owner ${treasury.owner}`,
      };
    }
    if (f.mintRefusal !== null) {
      return {
        ok: false,
        code: 'treasury_mint_extension_refused',
        message: `token account ${account} holds Token-2022 mint ${f.mint}: ${f.mintRefusal}; the signer does not spend it, so it cannot back a treasury`,
      };
    }
    const policy = (key.tokens ?? []).find((p) => p.mint === f.mint);
    // Without a cap for the mint the key may not spend it at all: no allowance is the one that matches.
    if (policy === undefined) {
      return {
        ok: false,
        code: 'treasury_mint_unlisted',
        message: `token account ${account} holds mint ${f.mint}, which keys.${key.name}.tokens does not list; add it with its per_day`,
      };
    }
    // The signer refuses a spend of a mint under another program than its policy names: an allowance would be unusable.
    if (policy.program !== f.program) {
      return {
        ok: false,
        code: 'treasury_program_differs',
        message: `token account ${account} is a ${f.program} account; keys.${key.name}.tokens lists mint ${f.mint} with program ${policy.program}`,
      };
    }
    const sized = sizeAllowance(key, policy.per_day, f, prices.get(f.mint));
    if (!sized.ok) return sized;
    plans.push({
      account,
      mint: f.mint,
      owner: f.owner,
      delegate: key.pubkey,
      amount: sized.amount,
      decimals: f.decimals,
      program: f.program,
      basis: sized.basis,
      why: sized.why,
    });
  }
  return { ok: true, plans };
}

type Sized =
  | { ok: true; amount: bigint; basis: AllowancePlan['basis']; why: string }
  | { ok: false; code: string; message: string };

/** The smaller of the mint's per_day and the key's usd.per_day in the mint's base units, and which it was. */
function sizeAllowance(key: KeyConfig, perDay: bigint, f: TreasuryAccountFacts, price: UsdPrice | undefined): Sized {
  const byTokens = { ok: true as const, amount: perDay, basis: 'tokens.per_day' as const };
  const usdPerDay = key.usd?.per_day ?? null;
  if (usdPerDay === null) return { ...byTokens, why: `the mint's per_day, ${perDay} base units` };
  if (price === undefined) {
    return {
      ok: false,
      code: 'treasury_price_unavailable',
      message: `keys.${key.name}.usd.per_day needs the price of mint ${f.mint} to size the allowance of ${f.account}, and none was read`,
    };
  }
  const byUsd = unitsForUsd(usdPerDay, f.decimals, price);
  const dollars = `usd.per_day $${formatUsd(usdPerDay)} is ${byUsd} base units at the price plus its confidence`;
  return byUsd < perDay
    ? { ok: true, amount: byUsd, basis: 'usd.per_day', why: `${dollars}, below the mint's per_day ${perDay}` }
    : { ...byTokens, why: `the mint's per_day, ${perDay} base units (${dollars}, not below it)` };
}
