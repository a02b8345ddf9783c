/**
 * A credential block's daily budget (`check if per_day_lamports(N)`, docs/credentials.md): what the block's signs
 * spent or reserved in 24 h on every key together, plus this transaction's reservation, may reach the budget but not
 * pass it, for every budgeted block of the chain. The ledger keeps each block's usage as data (by its revocation id);
 * an entry no figure bounds counts as the whole budget, as it counts as a whole daily cap for a key.
 */
import type { KeyUsage } from '../../../ledger/types';
import { refusal, type Refusal } from '../../refusals';
import type { CredentialBudget } from '../../types';

/** A budget with the usage the gate read for its block under the block's lock. */
export interface BudgetFact extends CredentialBudget {
  usage: Pick<KeyUsage, 'lamports' | 'unbounded'>;
}

/** Lamports the block spent or reserved in 24 h, an unbounded entry counted as the whole budget. */
export function budgetSpent(b: BudgetFact): number {
  return b.usage.lamports + b.usage.unbounded * b.per_day_lamports;
}

/** The first budget (in block order) that `reservation` more would pass, as a refusal naming its block; or null. */
export function credentialBudgetRefusal(budgets: readonly BudgetFact[], reservation: number): Refusal | null {
  for (const b of budgets) {
    const spent = budgetSpent(b);
    if (spent + reservation <= b.per_day_lamports) continue;
    const which = b.block === 0 ? 'its root block' : `its block ${b.block}`;
    return refusal(
      'credential_budget',
      `the credential's daily budget: ${which} (revocation id ${b.revocation_id}) allows ${b.per_day_lamports} lamports in 24 h; ${spent} are spent or reserved, plus ${reservation} for this transaction would pass it`,
      { block: b.block, revocation_id: b.revocation_id, spent, requested: reservation, cap: b.per_day_lamports },
    );
  }
  return null;
}

/** The smallest of what is left of each budget once `spend` more counts (never below 0), or null with none. */
export function remainingBudget(budgets: readonly BudgetFact[], spend: number): number | null {
  let left: number | null = null;
  for (const b of budgets) {
    const l = Math.max(0, b.per_day_lamports - budgetSpent(b) - spend);
    left = left === null ? l : Math.min(left, l);
  }
  return left;
}
