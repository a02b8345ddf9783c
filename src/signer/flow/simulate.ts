/**
 * Simulation of the exact transaction that would be sent, and the figures a report carries from it: compute
 * units, the fee the RPC quotes, the key's balance change, and every other writable account whose lamports the
 * transaction increases. A fee the RPC cannot quote stays unknown (null), never assumed to be 0.
 *
 * The balances before are read after the simulation, pinned with `minContextSlot` to the simulation's slot, so
 * they are never older than the state the simulation ran on, and checked to be that state (same-bank.ts): a read
 * from a later bank (another transaction of the key landed in between) is discarded and the simulation repeated,
 * a few times at most, then the sign is refused (docs/policy.md, "Spend and slots"). Token balances come from the
 * same two states: every writable token account's amount before and after.
 */
import type { AccountsAtSlot, ChainClient, SimulationResult } from '../../rpc/types';
import type { KeyConfig } from '../../config/types';
import { programError } from '../rules/structural';
import { refusal } from '../refusals';
import type { Report } from '../report';
import { tokenMovements, type TokenMovements } from '../spl-tokens/movements';
import { readMint, type MintState } from '../spl-tokens/state';
import { writableAccounts } from '../writable-accounts';
import { feeBound } from '../rules/fee-bound';
import { simulationBankBefore } from './same-bank';
import { stop, type Step } from './step';
import type { BuiltTransaction } from '../sources/transaction';

/** A writable account other than the key that ends the simulation with more lamports than it had. */
export interface LamportGain {
  address: string;
  lamports: number;
  /** It did not exist before the transaction. */
  created: boolean;
  /** Its owner after the simulation. */
  owner: string;
}

export interface Figures {
  sim: SimulationResult;
  fee: number | null;
  balanceChange: number | null;
  gains: LamportGain[];
  /** What the transaction does to token accounts, from the same before and after states. */
  tokens: TokenMovements;
  /** The mints it moves, read after the simulation (decimals, Token-2022 extensions); null where none exists. */
  mints: Map<string, MintState | null>;
  /** Set when no read of the balances before came from the simulation's bank: nothing here may be judged. */
  unjudgeable: string | null;
}

/** Simulations (each with its read of the balances before) tried before a sign is refused as unjudgeable. */
export const SAME_BANK_ATTEMPTS = 3;

const NO_TOKENS: TokenMovements = { mints: [], authority: [] };

export async function simulate(
  chain: ChainClient,
  built: BuiltTransaction,
  key: KeyConfig,
  mode: 'check' | 'sign',
): Promise<Figures> {
  const messageBase64 = Buffer.from(built.prepared.msg.bytes).toString('base64');
  const writable = writableAccounts(built.prepared.msg);
  const accounts = writable.includes(key.pubkey) ? writable : [key.pubkey, ...writable];
  const run = () =>
    Promise.all([
      chain.simulateTransaction(built.wireBase64, {
        // A foreign fee payer's slot may still be empty: the other signatures were verified when prepared.
        sigVerify: mode === 'sign' && built.complete,
        replaceRecentBlockhash: mode === 'check',
        accounts,
      }),
      chain.getFeeForMessage(messageBase64).catch(() => null),
    ]);
  let sim: SimulationResult;
  let fee: number | null;
  let before: AccountsAtSlot;
  let attempt = 0;
  for (;;) {
    attempt++;
    [sim, fee] = await run();
    if (sim.err !== null || sim.accounts.length !== accounts.length) {
      return { sim, fee, balanceChange: null, gains: [], tokens: NO_TOKENS, mints: new Map(), unjudgeable: null };
    }
    const read = await chain.getAccountsAtSlot(accounts, sim.slot);
    const same = simulationBankBefore(sim, built.prepared.msg.accountKeys, accounts, read);
    if (same !== null) {
      before = same;
      break;
    }
    if (attempt >= SAME_BANK_ATTEMPTS) {
      const unjudgeable = `the key's balances could not be read from the bank the simulation ran on (${SAME_BANK_ATTEMPTS} tries: the key's accounts changed in between each time), so the spend cannot be bounded; try again`;
      return { sim, fee, balanceChange: null, gains: [], tokens: NO_TOKENS, mints: new Map(), unjudgeable };
    }
  }
  let balanceChange: number | null = null;
  const gains: LamportGain[] = [];
  for (const [i, address] of accounts.entries()) {
    const post = sim.accounts[i] ?? null;
    const pre = before.accounts[i] ?? null;
    let delta = (post?.lamports ?? 0) - (pre?.lamports ?? 0);
    // Another fee payer's balance has its own fee taken off: what it receives is counted beyond that, so the
    // key cannot pay it up to its fee unseen (the fee the node quotes, else the message's upper bound).
    if (address === built.prepared.foreignFeePayer) delta += fee ?? feeBound(built.prepared.msg).total;
    if (address === key.pubkey) balanceChange = delta;
    else if (delta > 0 && post) gains.push({ address, lamports: delta, created: pre === null, owner: post.owner });
  }
  const tokens = tokenMovements(key.pubkey, accounts, before.accounts, sim.accounts);
  const mints = new Map<string, MintState | null>();
  const mintAddresses = tokens.mints.map((m) => m.mint);
  if (mintAddresses.length > 0) {
    const read = await chain.getAccountsData(mintAddresses);
    for (const [i, mint] of mintAddresses.entries()) mints.set(mint, readMint(read.accounts[i] ?? null));
  }
  return { sim, fee, balanceChange, gains, tokens, mints, unjudgeable: null };
}

/** Puts the figures on the report; a failed simulation stops the flow with outcome `simulation_failed`. */
export function recordSimulation(report: Report, f: Figures, prefix: string | null = null): Step {
  report.compute_units = f.sim.unitsConsumed;
  report.fee = f.fee;
  report.balance_change = f.balanceChange;
  if (f.unjudgeable !== null) return stop(report, refusal('spend_unknown', f.unjudgeable));
  if (f.sim.err === null) return { ok: true };
  report.outcome = 'simulation_failed';
  report.reason = 'simulation_failed';
  report.program_error = programError(f.sim.logs);
  const cause = report.program_error ?? `simulation error ${JSON.stringify(f.sim.err)}`;
  report.detail = prefix ? `${prefix}: ${cause}` : cause;
  report.error = f.sim.err;
  report.logs = f.sim.logs;
  return { ok: false, report };
}
