/**
 * A credential block's daily budgets (`check if per_day_lamports(N)`, `check if per_day_usd_micros(N)`,
 * docs/credentials.md): what the block's signs spent or reserved in 24 h on every key together, plus this
 * transaction's reservation, may reach the budget but not pass it, for every budgeted block of the chain. The ledger
 * keeps each block's usage as data (by its revocation id): lamports, and the micro-dollars each intent recorded when
 * it was valued (never re-priced). An entry no figure bounds counts as the whole budget, as it counts as a whole
 * daily cap for a key.
 */
import type { Usage } from '../../../ledger/types';
import { formatUsd, type UsdMicros } from '../../../util/usd-amounts';
import { refusal, type Refusal } from '../../refusals';
import type { CredentialBudget } from '../../types';

/** A budget with the usage the gate read for its block under the block's lock. */
export interface BudgetFact extends CredentialBudget {
  usage: Pick<Usage, 'lamports' | 'unbounded' | 'usdMicros'>;
}

/** Lamports the block spent or reserved in 24 h, an unbounded entry counted as the whole budget (0 without one). */
export function budgetSpent(b: BudgetFact): number {
  return b.usage.lamports + b.usage.unbounded * (b.per_day_lamports ?? 0);
}

/** Micro-dollars the block's intents recorded in 24 h, an unbounded entry counted as the whole dollar budget. */
export function budgetSpentUsd(b: BudgetFact): UsdMicros {
  return b.usage.usdMicros + BigInt(b.usage.unbounded) * (b.per_day_usd_micros ?? 0n);
}

const which = (b: BudgetFact): string => (b.block === 0 ? 'its root block' : `its block ${b.block}`);

/**
 * The first budget (in block order) that this transaction would pass, as a refusal naming its block; or null.
 * `reservation` is its lamports (fee included); `usd` what it takes out of the key in micro-dollars, null when it
 * could not be valued: a dollar budget then refuses (an unpriced spend is never let through a dollar limit).
 */
export function credentialBudgetRefusal(
  budgets: readonly BudgetFact[],
  reservation: number,
  usd: UsdMicros | null,
): Refusal | null {
  for (const b of budgets) {
    if (b.per_day_lamports !== null) {
      const spent = budgetSpent(b);
      if (spent + reservation > b.per_day_lamports)
        return refusal(
          'credential_budget',
          `the credential's daily budget: ${which(b)} (revocation id ${b.revocation_id}) allows ${b.per_day_lamports} lamports in 24 h; ${spent} are spent or reserved, plus ${reservation} for this transaction would pass it`,
          { block: b.block, revocation_id: b.revocation_id, spent, requested: reservation, cap: b.per_day_lamports },
        );
    }
    if (b.per_day_usd_micros === null) continue;
    if (usd === null) return unpricedRefusal(b.block, reservation);
    const spent = budgetSpentUsd(b);
    if (spent + usd > b.per_day_usd_micros)
      return refusal(
        'credential_usd_budget',
        `the credential's daily dollar budget: ${which(b)} (revocation id ${b.revocation_id}) allows $${formatUsd(b.per_day_usd_micros)} in 24 h; $${formatUsd(spent)} are spent or reserved, plus $${formatUsd(usd)} for this transaction would pass it`,
        {
          block: b.block,
          revocation_id: b.revocation_id,
          usd_spent: formatUsd(spent),
          usd_requested: formatUsd(usd),
          usd_cap: formatUsd(b.per_day_usd_micros),
        },
      );
  }
  return null;
}

/** A credential that limits dollars (from `block` on) met a spend that was not valued: refused, never let through. */
export function unpricedRefusal(block: number, requested: number, why: string | null = null): Refusal {
  const where = block === 0 ? 'its root block' : `its block ${block}`;
  const because = why === null ? 'no price is configured for this key' : why;
  return refusal(
    'credential_unpriced',
    `the credential limits dollars (${where}) but this transaction's spend (${requested} lamports, and any tokens) could not be valued (${because}), so it cannot be judged in dollars; use a priced key or a credential without dollar limits`,
    { block, requested },
  );
}

/** What is left of a block's dollar budget (never below 0), or null without one. */
export function remainingUsdBudget(b: BudgetFact): UsdMicros | null {
  if (b.per_day_usd_micros === null) return null;
  const left = b.per_day_usd_micros - budgetSpentUsd(b);
  return left > 0n ? left : 0n;
}
