/**
 * The lock a credential block's `per_day` budget is judged under. A budget belongs to a chain of credentials that
 * may name several keys, so the key's lock alone does not keep two signs on two keys from both fitting it: the gate
 * takes each budgeted block's lock too, after the key's and in the order of their revocation ids, so two gates never
 * wait on each other. It is a key lock under a name no key can have (key names hold no colon), so both stores lock
 * it as they lock a key: across processes and replicas, freed with a dead holder, and checked by a fenced append.
 */
export function budgetLockName(revocationId: string): string {
  return `budget:${revocationId}`;
}

/** The lock names of a sign's budgeted blocks, each once, in the one order every gate takes them. */
export function budgetLockNames(revocationIds: readonly string[]): string[] {
  return [...new Set(revocationIds)].sort().map(budgetLockName);
}
