/**
 * A treasury's allowances (docs/treasury.md): the unsigned ApproveChecked the treasury owner signs elsewhere, one
 * per account, for the amount the key's policy allows in a period (the mint's per_day, or less when the key's
 * dollar cap converted at the mint's price is less); and the check a signed one passes before `treasury submit`
 * sends it: it approves exactly what was planned, and does nothing else.
 */
import {
  address,
  appendTransactionMessageInstructions,
  compileTransaction,
  createTransactionMessage,
  decompileTransactionMessage,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Blockhash,
} from '@solana/kit';
import {
  TOKEN_PROGRAM_ADDRESS,
  TokenInstruction,
  getApproveCheckedInstruction,
  identifyTokenInstruction,
  parseApproveCheckedInstruction,
} from '@solana-program/token';
import type { KeyConfig } from '../config/types';
import type { UsdPrice } from '../pricing/valuation';
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
    const policy = (key.tokens ?? []).find((p) => p.mint === f.mint);
    // Without a cap for the mint the key may not spend it at all: no allowance is the one that matches.
    if (policy === undefined) {
      return {
        ok: false,
        code: 'treasury_mint_unlisted',
        message: `token account ${account} holds mint ${f.mint}, which keys.${key.name}.tokens does not list; add it with its per_day`,
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

/**
 * The unsigned transaction (base64 wire format) approving every plan, paid by the owner, who signs it in their
 * own wallet. All plans must share one owner (a key's treasury has one).
 */
export function approveTransaction(
  plans: readonly AllowancePlan[],
  lifetime: { blockhash: Blockhash; lastValidBlockHeight: bigint },
): string {
  const owner = plans[0]?.owner;
  if (owner === undefined) throw new Error('approveTransaction: no plans');
  const instructions = plans.map((p) =>
    getApproveCheckedInstruction({
      source: address(p.account),
      mint: address(p.mint),
      delegate: address(p.delegate),
      owner: address(p.owner),
      amount: p.amount,
      decimals: p.decimals,
    }),
  );
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(address(owner), m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  return getBase64EncodedWireTransaction(compileTransaction(message));
}

export type SubmitCheck = { ok: true } | { ok: false; code: 'treasury_submit_mismatch'; message: string };

const mismatch = (message: string): SubmitCheck => ({ ok: false, code: 'treasury_submit_mismatch', message });

/**
 * Whether a signed transaction approves exactly the plans (each account once: delegate, amount, decimals, mint,
 * owner) and carries no other instruction. Anything else the owner signed is not what the operator reviewed.
 */
export function checkApproveTransaction(wireBase64: string, plans: readonly AllowancePlan[]): SubmitCheck {
  let instructions;
  try {
    const tx = getTransactionDecoder().decode(getBase64Encoder().encode(wireBase64));
    const compiled = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
    if ('addressTableLookups' in compiled && (compiled.addressTableLookups?.length ?? 0) > 0) {
      return mismatch('the transaction uses address lookup tables; the plan has none');
    }
    instructions = decompileTransactionMessage(compiled).instructions;
  } catch (e) {
    return mismatch(`not a Solana transaction in base64: ${(e as Error).message}`);
  }
  if (instructions.length !== plans.length) {
    return mismatch(`the transaction has ${instructions.length} instructions; the plan has ${plans.length} approvals`);
  }
  const seen = new Set<string>();
  for (const [i, ix] of instructions.entries()) {
    if (ix.programAddress !== TOKEN_PROGRAM_ADDRESS || ix.data === undefined || ix.accounts === undefined) {
      return mismatch(`instruction ${i} is not an SPL Token instruction`);
    }
    const withData = { ...ix, data: ix.data, accounts: ix.accounts };
    if (identifyTokenInstruction(withData) !== TokenInstruction.ApproveChecked) {
      return mismatch(`instruction ${i} is not ApproveChecked`);
    }
    const parsed = parseApproveCheckedInstruction(withData);
    const account = parsed.accounts.source.address;
    const plan = plans.find((p) => p.account === account);
    if (plan === undefined || seen.has(account)) {
      return mismatch(
        `instruction ${i} approves token account ${account}, which the plan does not list (or lists once)`,
      );
    }
    seen.add(account);
    const got = {
      mint: parsed.accounts.mint.address,
      owner: parsed.accounts.owner.address,
      delegate: parsed.accounts.delegate.address,
      amount: parsed.data.amount,
      decimals: parsed.data.decimals,
    };
    // A dollar-sized amount is recomputed at today's price, which may have moved since the plan: less than it is
    // never more spending power than the policy implies.
    if (plan.basis === 'usd.per_day' && got.amount > 0n && got.amount <= plan.amount) got.amount = plan.amount;
    for (const field of ['mint', 'owner', 'delegate', 'amount', 'decimals'] as const) {
      if (got[field] !== plan[field]) {
        return mismatch(
          `instruction ${i} approves ${field} ${String(got[field])}; the plan says ${String(plan[field])}`,
        );
      }
    }
  }
  return { ok: true };
}
