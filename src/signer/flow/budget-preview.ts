/**
 * A credential's daily budgets with each block's usage now, for the preview after a simulation (`check`, and a
 * sign before it asks an operator): an agent learns from `check` that a spend would pass a budget, and no operator
 * is asked to approve a sign the gate would refuse. The binding decision is the gate's, under the blocks' locks.
 */
import type { Ledger } from '../../ledger/types';
import { nowSeconds } from '../../util/time';
import type { BudgetFact } from '../policy/rules/credential-budget';
import type { CredentialBudget } from '../types';

/** Undefined (no preview) without budgets, or when the ledger cannot be read: the gate judges them all the same. */
export async function budgetPreview(
  ledger: Pick<Ledger, 'blockUsage'>,
  budgets: readonly CredentialBudget[],
): Promise<BudgetFact[] | undefined> {
  if (budgets.length === 0) return undefined;
  const now = nowSeconds();
  try {
    return await Promise.all(
      budgets.map(async (b) => ({ ...b, usage: await ledger.blockUsage(b.revocation_id, now) })),
    );
  } catch {
    return undefined;
  }
}
