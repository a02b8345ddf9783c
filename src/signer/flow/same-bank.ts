/**
 * The balances before a simulation, as they were in the bank the simulation ran on. The caps judge the difference
 * between the simulation's after-state and that before-state: a before-state from a later bank, after another
 * transaction of the key landed, would subtract that transaction's spend from this one's (docs/policy.md, "Spend
 * and slots").
 *
 * Where the node reports the simulation's own pre-state (`preBalances`, `preTokenBalances`, current Agave and
 * the embedded chain), the lamports are taken from it, so what the key's other transactions do to its SOL balance
 * between the simulation and the read does not matter; the read supplies the accounts' data, and is used only when
 * every token account in it shows exactly the amount and mint the simulation reports (and every other account is
 * no token account there either), and no account it has is one the simulation's bank did not have, or the other
 * way round. Where the node does not report the pre-state, the read must come from the simulation's slot.
 */
import type { AccountData, AccountsAtSlot, SimulationResult } from '../../rpc/types';
import { readTokenAccount } from '../../solana/token-state';

/**
 * `accountKeys`: the transaction's full account list (static, then loaded writable, then loaded read-only), which
 * the pre-state is indexed by; `addresses`: the accounts read, in the read's order. Null: the read is not of the
 * simulation's bank (simulate and read again).
 */
export function simulationBankBefore(
  sim: SimulationResult,
  accountKeys: readonly string[],
  addresses: readonly string[],
  read: AccountsAtSlot,
): AccountsAtSlot | null {
  const { preBalances, preTokenBalances } = sim;
  if (preBalances === null || preTokenBalances === null || preBalances.length !== accountKeys.length) {
    return read.slot === sim.slot ? read : null;
  }
  const tokenAt = new Map(preTokenBalances.map((t) => [t.accountIndex, t]));
  const accounts: (AccountData | null)[] = [];
  for (const [i, address] of addresses.entries()) {
    const index = accountKeys.indexOf(address);
    if (index < 0) return read.slot === sim.slot ? read : null; // not in the transaction (cannot happen)
    const account = read.accounts[i] ?? null;
    const lamports = preBalances[index] ?? 0;
    // An account exists in a bank when it holds lamports: one created or closed in between was read from another.
    if ((account === null) !== (lamports === 0)) return null;
    const token = readTokenAccount(account);
    const reported = tokenAt.get(index);
    if (token === null || reported === undefined) {
      if (token !== null || reported !== undefined) return null;
    } else if (token.amount !== reported.amount || token.mint !== reported.mint) return null;
    accounts.push(account === null ? null : { ...account, lamports });
  }
  return { slot: sim.slot, accounts };
}
