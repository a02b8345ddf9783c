/**
 * The token policy applied to what the simulation moved (movements.ts): which mints the key may spend, which
 * authority operations it may perform, which mints the signer can account for, where the tokens may go, and the
 * per-transaction, daily and per-destination caps. docs/policy.md, "Tokens", describes each rule.
 */
import type { KeyConfig, TokenPolicy } from '../../../config/types';
import type { TokenUsage } from '../../../ledger/types';
import type { TokenFigure } from '../../../ledger/types';
import { refusal, type Refusal } from '../../refusals';
import { showAmount } from '../../../util/token-amounts';
import { uiDecimals, unaccountedExtension } from '../../spl-tokens/extensions';
import type { MintMovement, TokenMovements } from '../../spl-tokens/movements';
import type { MintState } from '../../../solana/token-state';

/** What the caps need of a mint's movement: the key's change and each other owner's credit (not the program). */
export type MintFlow = Pick<MintMovement, 'mint' | 'keyChange' | 'credits'>;

/** A mint the key spends in this transaction, with the mint's decimals (null: show base units). */
interface Spend<M extends MintFlow> {
  movement: M;
  amount: bigint;
  decimals: number | null;
}

/** The decimals amounts of a mint are shown in; null shows base units. */
export type DecimalsOf = (mint: string) => number | null;

/** Decimals from the mints as read from the chain. */
export const decimalsFrom =
  (mints: ReadonlyMap<string, MintState | null>): DecimalsOf =>
  (mint) =>
    uiDecimals(mints.get(mint));

const policyFor = (key: KeyConfig, mint: string): TokenPolicy | undefined =>
  (key.tokens ?? []).find((p) => p.mint === mint);

const spends = <M extends MintFlow>(movements: { mints: readonly M[] }, decimals: DecimalsOf): Spend<M>[] =>
  movements.mints
    .filter((m) => m.keyChange < 0n)
    .map((m) => ({ movement: m, amount: -m.keyChange, decimals: decimals(m.mint) }));

/** Authority operations, unlisted mints, mints the signer cannot account for, and destinations. */
export function tokenPolicyRefusal(
  key: KeyConfig,
  movements: TokenMovements,
  mints: ReadonlyMap<string, MintState | null>,
): Refusal | null {
  const allowed = new Set(key.allow_token_ops ?? []);
  const op = movements.authority.find((a) => !allowed.has(a.op));
  if (op) {
    return refusal(
      'token_op_not_allowed',
      `the transaction ${op.what}, which this key may not do (add "${op.op}" to its allow_token_ops to allow it)`,
      { token_op: op.op },
    );
  }
  for (const s of spends(movements, decimalsFrom(mints))) {
    const { mint, program } = s.movement;
    const policy = policyFor(key, mint);
    if (!policy) return unlistedMintRefusal(mint, s.amount, s.decimals);
    if (policy.program !== program) {
      return refusal(
        'mint_program_mismatch',
        `mint ${mint} is a ${program} mint, but the key's policy names ${policy.program}`,
        { mint },
      );
    }
    const state = mints.get(mint) ?? null;
    if (state === null) return refusal('mint_unreadable', `mint ${mint} could not be read from the chain`, { mint });
    const extension = unaccountedExtension(state);
    if (extension !== null) return refusal('mint_extension_not_accounted', `mint ${mint}: ${extension}`, { mint });
    const destination = tokenDestinationRefusal(key, policy, s.movement, s.decimals);
    if (destination) return destination;
  }
  return null;
}

/** A spend of a mint the key's policy does not list. */
export function unlistedMintRefusal(mint: string, amount: bigint, decimals: number | null): Refusal {
  return refusal(
    'mint_not_listed',
    `the transaction moves ${showAmount(amount, decimals)} of mint ${mint} out of the key's accounts, and the mint is not in the key's tokens`,
    { mint, requested: amount.toString() },
  );
}

/** The first owner other than the key that receives the mint and is not among the mint's destinations. */
export function tokenDestinationRefusal(
  key: KeyConfig,
  policy: TokenPolicy,
  movement: MintFlow,
  decimals: number | null,
): Refusal | null {
  if (policy.destinations === null) return null;
  const listed = new Set(policy.destinations);
  for (const [owner, credit] of movement.credits) {
    if (owner === key.pubkey || listed.has(owner)) continue;
    return refusal(
      'token_destination_not_allowed',
      `the transaction moves ${showAmount(credit, decimals)} of mint ${movement.mint} to ${owner}, which is not one of the mint's destinations`,
      { mint: movement.mint, destination: owner, requested: credit.toString() },
    );
  }
  return null;
}

/** The per-transaction, daily and per-destination caps of every mint the key spends. */
export function tokenCapRefusal(
  key: KeyConfig,
  movements: { mints: readonly MintFlow[] },
  decimals: DecimalsOf,
  usage: TokenUsage,
): Refusal | null {
  for (const s of spends(movements, decimals)) {
    const { mint, credits } = s.movement;
    const policy = policyFor(key, mint);
    if (!policy) continue; // refused by tokenPolicyRefusal already
    const show = (n: bigint) => showAmount(n, s.decimals);
    const used = usage.get(mint);
    if (policy.per_tx !== null && s.amount > policy.per_tx) {
      return refusal(
        'token_per_tx_cap',
        `per-transaction cap of mint ${mint}: this transaction spends ${show(s.amount)}, more than per_tx ${show(policy.per_tx)}`,
        { mint, requested: s.amount.toString(), cap: policy.per_tx.toString() },
      );
    }
    const spent = used?.spent ?? 0n;
    if (spent + s.amount > policy.per_day) {
      return refusal(
        'token_per_day_cap',
        `daily cap of mint ${mint}: ${show(spent)} spent or reserved in 24 h, plus ${show(s.amount)} for this transaction, exceeds per_day ${show(policy.per_day)}`,
        { mint, spent: spent.toString(), requested: s.amount.toString(), cap: policy.per_day.toString() },
      );
    }
    if (policy.per_destination_per_day === null) continue;
    for (const [owner, credit] of credits) {
      const received = used?.received.get(owner) ?? 0n;
      if (received + credit > policy.per_destination_per_day) {
        return refusal(
          'token_per_destination_cap',
          `per-destination daily cap of mint ${mint}: ${owner} received ${show(received)} in 24 h, plus ${show(credit)} now, exceeds per_destination_per_day ${show(policy.per_destination_per_day)}`,
          {
            mint,
            destination: owner,
            received: received.toString(),
            requested: credit.toString(),
            cap: policy.per_destination_per_day.toString(),
          },
        );
      }
    }
  }
  return null;
}

/** With approval `confirm`: whether any token spend is above its mint's threshold (or the mint has none). */
export function tokensNeedApproval(key: KeyConfig, movements: TokenMovements): boolean {
  return movements.mints.some((m) => {
    if (m.keyChange >= 0n) return false;
    const threshold = policyFor(key, m.mint)?.approve_above ?? null;
    return threshold === null || -m.keyChange > threshold;
  });
}

/** What is left of each spent mint's daily cap once this transaction counts. */
export function remainingTokens(
  key: KeyConfig,
  movements: { mints: readonly MintFlow[] },
  usage: TokenUsage,
): { mint: string; remaining: string }[] {
  return (key.tokens ?? []).map((p) => {
    const spend = -(movements.mints.find((m) => m.mint === p.mint && m.keyChange < 0n)?.keyChange ?? 0n);
    return { mint: p.mint, remaining: dailyLeft(p, usage, spend).toString() };
  });
}

/** What is left of a mint's `per_day` once `spend` more counts (never below 0). */
export function dailyLeft(policy: TokenPolicy, usage: TokenUsage, spend: bigint): bigint {
  const left = policy.per_day - (usage.get(policy.mint)?.spent ?? 0n) - spend;
  return left > 0n ? left : 0n;
}

/** The ledger's (and the report's) figures: the key's change and each owner's credit, per mint, base units. */
export function tokenFigures(movements: TokenMovements, mints: ReadonlyMap<string, MintState | null>): TokenFigure[] {
  return movements.mints.map((m) => ({
    mint: m.mint,
    decimals: uiDecimals(mints.get(m.mint)),
    change: m.keyChange.toString(),
    credits: [...m.credits].map(([owner, amount]) => ({ owner, amount: amount.toString() })),
    ...(m.delegated === undefined
      ? {}
      : { delegated: [...m.delegated].map(([account, change]) => ({ account, change: change.toString() })) }),
  }));
}
