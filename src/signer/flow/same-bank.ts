/**
 * Whether the balances read before a simulation are those of the bank the simulation ran on. The caps judge the
 * difference between the simulation's after-state and that before-state: a read from a later bank, after another
 * transaction of the key landed, would subtract that transaction's spend from this one's (docs/policy.md, "Spend
 * and slots").
 *
 * Where the node reports the simulation's own pre-state (`preBalances`, `preTokenBalances`, current Agave and
 * the embedded chain), the read must show exactly those lamports and token amounts for every account judged: the
 * same state whatever slot it was read at. Where it does not, the read must come from the simulation's slot.
 */
import type { AccountsAtSlot, SimulationResult } from '../../chain/types';
import { readTokenAccount } from '../tokens/state';

/**
 * `accountKeys`: the transaction's full account list (static, then loaded writable, then loaded read-only), which
 * the pre-state is indexed by; `addresses`: the accounts read, in the read's order.
 */
export function readIsSimulationBank(
  sim: SimulationResult,
  accountKeys: readonly string[],
  addresses: readonly string[],
  before: AccountsAtSlot,
): boolean {
  const { preBalances, preTokenBalances } = sim;
  if (preBalances === null || preTokenBalances === null || preBalances.length !== accountKeys.length) {
    return before.slot === sim.slot;
  }
  const tokenAt = new Map(preTokenBalances.map((t) => [t.accountIndex, t]));
  return addresses.every((address, i) => {
    const index = accountKeys.indexOf(address);
    const read = before.accounts[i] ?? null;
    if (index < 0) return before.slot === sim.slot; // not in the transaction (cannot happen for what is judged)
    if ((read?.lamports ?? 0) !== preBalances[index]) return false;
    const token = readTokenAccount(read);
    const reported = tokenAt.get(index);
    if (token === null || reported === undefined) return token === null && reported === undefined;
    return token.amount === reported.amount && token.mint === reported.mint;
  });
}
