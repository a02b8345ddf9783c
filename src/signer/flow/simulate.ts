/**
 * Simulation of the exact transaction that would be sent, and the figures a report carries from it: compute
 * units, the fee the RPC quotes, the key's balance change, and every other writable account whose lamports the
 * transaction increases. A fee the RPC cannot quote stays unknown (null), never assumed to be 0.
 *
 * One HTTP request carries the simulation and what must be read with it (a JSON-RPC batch: one round trip to the
 * provider): the fee quote, the endpoint's genesis hash (the endpoint that simulated is the cluster's, see
 * rpc/cluster-genesis.ts), the validity of a payload's own blockhash, a background refresh of the kept blockhash,
 * and, unless the message calls a token program, the read of the balances before.
 *
 * The balances before must be those of the bank the simulation ran on, and never older than it (same-bank.ts;
 * docs/policy.md, "Spend and slots"). The read in the simulation's batch is pinned with `minContextSlot` to the
 * last simulation's slot this client saw, and used only when its context slot is at least this simulation's and
 * same-bank.ts finds it is the simulation's bank. Otherwise, and for a message that calls a token program (whose
 * mints must be read after the simulation anyway, which names them), the read follows the simulation pinned to its
 * slot, in one request with the mints. A read from a later bank (another transaction of the key landed in between)
 * is discarded and the simulation repeated, a few times at most, then the sign is refused. Token balances come
 * from the same two states: every writable token account's amount before and after.
 *
 * Accounts a caller needs from the same bank as the balances before (the Pyth price accounts of a key's dollar
 * caps and the Clock sysvar they are aged against, src/pricing/price-reads.ts) ride in that same read, after the
 * key's accounts: no extra request, and a price is never from another bank than the clock it is judged by.
 */
import { clusterGenesisOf } from '../../rpc/cluster-genesis';
import { recentBlockhashOf, type BlockhashLifetime } from '../../rpc/recent-blockhash';
import type { AccountData, AccountsAtSlot, RpcClient, SimulationResult } from '../../rpc/types';
import type { KeyConfig } from '../../config/types';
import { programError } from './program-error';
import type { Refusal } from '../refusals';
import type { Report } from '../report';
import { tokenMovements, type TokenMovements } from '../spl-tokens/movements';
import { readMint, readTokenAccount, type MintState } from '../../solana/token-state';
import { ASSOCIATED_TOKEN_PROGRAM, TOKEN_PROGRAMS } from '../../solana/programs';
import { writableAccounts } from '../writable-accounts';
import { feeBound } from '../rules/fee-bound';
import { simulationBankBefore } from './same-bank';
import { stop, type Step } from './step';
import type { BuiltTransaction } from '../sources/transaction';
import { blockhashExpiredRefusal, clusterChangedRefusal } from '../policy/rules/cluster';
import { spendUnknownRefusal } from '../policy/rules/spend-unknown';
import type { CompiledMessage } from '../compile';

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
  /** Set when the simulation's batch says the chain cannot be judged on (another cluster, an expired blockhash). */
  chainRefusal: Refusal | null;
  /**
   * The block height after which the transaction can no longer land. The signer's own blockhash brings its own;
   * for one the agent chose it is the latest blockhash's, read in the simulation's batch: the agent's is no
   * newer, so it expires no later. A held (reused) blockhash would not do: the agent's may be newer than it,
   * and a watch that ends before the transaction could still land would release a spend that happens.
   */
  validUntil: number;
  /**
   * The `extraReads` a caller asked for, in its order, from the same getMultipleAccounts as the balances before;
   * null when none were asked or nothing could be judged.
   */
  extraReads: (AccountData | null)[] | null;
}

/** Simulations (each with its read of the balances before) tried before a sign is refused as unjudgeable. */
export const SAME_BANK_ATTEMPTS = 3;

const NO_TOKENS: TokenMovements = { mints: [], authority: [] };

/** The highest simulation slot each client has seen: the floor of the read in the next simulation's batch. */
const slotFloor = new WeakMap<RpcClient, number>();

export async function simulate(
  chain: RpcClient,
  built: BuiltTransaction,
  key: KeyConfig,
  mode: 'check' | 'sign',
  extraReads: readonly string[] = [],
): Promise<Figures> {
  const { msg, payloadBlockhash } = built.prepared;
  const messageBase64 = Buffer.from(msg.bytes).toString('base64');
  const writable = writableAccounts(msg);
  const accounts = writable.includes(key.pubkey) ? writable : [key.pubkey, ...writable];
  // What each read asks for: the key's accounts, then the caller's; split again by `ownPart`.
  const reads = [...accounts, ...extraReads];
  const ownPart = (read: AccountsAtSlot): AccountsAtSlot => ({
    slot: read.slot,
    accounts: read.accounts.slice(0, accounts.length),
  });
  const readInBatch = !callsTokenProgram(msg);
  const genesis = clusterGenesisOf(chain);
  const recent = recentBlockhashOf(chain);
  // The genesis the check before the simulation compared with the cluster's (kept: no request).
  const checkedGenesis = await genesis.current();
  const run = () => {
    const batch = Promise.all([
      chain.simulateTransaction(built.wireBase64, {
        // A foreign fee payer's slot may still be empty: the other signatures were verified when prepared.
        sigVerify: mode === 'sign' && built.complete,
        replaceRecentBlockhash: mode === 'check',
        accounts,
      }),
      chain.getFeeForMessage(messageBase64).catch(() => null),
      genesis.reread(),
      payloadBlockhash === null ? Promise.resolve(true) : chain.isBlockhashValid(payloadBlockhash),
      payloadBlockhash === null ? Promise.resolve(null) : chain.getLatestBlockhash(),
      readInBatch ? chain.getAccountsAtSlot(reads, slotFloor.get(chain) ?? 0) : Promise.resolve(null),
    ]);
    void recent.refreshIfStale();
    return batch;
  };
  const unjudged = (sim: SimulationResult, fee: number | null, why: Partial<Figures>): Figures => ({
    sim,
    fee,
    balanceChange: null,
    gains: [],
    tokens: NO_TOKENS,
    mints: new Map(),
    unjudgeable: null,
    chainRefusal: null,
    validUntil,
    extraReads: null,
    ...why,
  });
  let sim: SimulationResult;
  let fee: number | null;
  let before: AccountsAtSlot;
  let extra: (AccountData | null)[] = [];
  let mintsRead = new Map<string, AccountData | null>();
  let validUntil = built.prepared.lifetime.lastValidBlockHeight;
  let attempt = 0;
  for (;;) {
    attempt++;
    let answeredGenesis: string;
    let blockhashValid: boolean;
    let latest: BlockhashLifetime | null;
    let batchRead: AccountsAtSlot | null;
    [sim, fee, answeredGenesis, blockhashValid, latest, batchRead] = await run();
    validUntil = latest?.lastValidBlockHeight ?? built.prepared.lifetime.lastValidBlockHeight;
    slotFloor.set(chain, Math.max(slotFloor.get(chain) ?? 0, sim.slot));
    const chainRefusal = clusterChangedRefusal(checkedGenesis, answeredGenesis);
    if (chainRefusal) return unjudged(sim, fee, { chainRefusal });
    if (!blockhashValid && payloadBlockhash !== null) {
      return unjudged(sim, fee, { chainRefusal: blockhashExpiredRefusal(payloadBlockhash) });
    }
    if (sim.err === 'BlockhashNotFound') recent.forget(msg.recentBlockhash);
    if (sim.err !== null || sim.accounts.length !== accounts.length) return unjudged(sim, fee, {});
    let same =
      batchRead !== null && batchRead.slot >= sim.slot
        ? simulationBankBefore(sim, msg.accountKeys, accounts, ownPart(batchRead))
        : null;
    if (same !== null && batchRead !== null) extra = batchRead.accounts.slice(accounts.length);
    if (same === null) {
      const mints = mintsNamed(sim, accounts);
      const [read, mintRead] = await Promise.all([
        chain.getAccountsAtSlot(reads, sim.slot),
        mints.length > 0 ? chain.getAccountsData(mints) : Promise.resolve(null),
      ]);
      mintsRead = new Map(mints.map((m, i) => [m, mintRead?.accounts[i] ?? null]));
      same = simulationBankBefore(sim, msg.accountKeys, accounts, ownPart(read));
      extra = read.accounts.slice(accounts.length);
    }
    if (same !== null) {
      before = same;
      break;
    }
    if (attempt >= SAME_BANK_ATTEMPTS) {
      const unjudgeable = `the key's balances could not be read from the bank the simulation ran on (${SAME_BANK_ATTEMPTS} tries: the key's accounts changed in between each time), so the spend cannot be bounded; try again`;
      return unjudged(sim, fee, { unjudgeable });
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
    if (address === built.prepared.foreignFeePayer) delta += fee ?? feeBound(msg).total;
    if (address === key.pubkey) balanceChange = delta;
    else if (delta > 0 && post) gains.push({ address, lamports: delta, created: pre === null, owner: post.owner });
  }
  const tokens = tokenMovements(key.pubkey, accounts, before.accounts, sim.accounts);
  const mints = new Map<string, MintState | null>();
  const mintAddresses = tokens.mints.map((m) => m.mint);
  // Mints read with the balances before are used; one moved by a program the message does not call directly
  // (a token transfer inside another program) is read now.
  const unread = mintAddresses.filter((m) => !mintsRead.has(m));
  if (unread.length > 0) {
    const read = await chain.getAccountsData(unread);
    for (const [i, mint] of unread.entries()) mintsRead.set(mint, read.accounts[i] ?? null);
  }
  for (const mint of mintAddresses) mints.set(mint, readMint(mintsRead.get(mint) ?? null));
  return {
    sim,
    fee,
    balanceChange,
    gains,
    tokens,
    mints,
    unjudgeable: null,
    chainRefusal: null,
    validUntil,
    extraReads: extraReads.length > 0 ? extra : null,
  };
}

/** Whether an instruction of the message calls a token program or the associated-token program directly. */
function callsTokenProgram(msg: CompiledMessage): boolean {
  return msg.instructions.some((ix) => {
    const program = msg.accountKeys[ix.programIdIndex];
    return program !== undefined && (TOKEN_PROGRAMS.has(program) || program === ASSOCIATED_TOKEN_PROGRAM);
  });
}

/** The mints of the token accounts the simulation shows, before (its pre-state) and after. */
function mintsNamed(sim: SimulationResult, accounts: readonly string[]): string[] {
  const mints = new Set<string>();
  for (const t of sim.preTokenBalances ?? []) mints.add(t.mint);
  for (const [i] of accounts.entries()) {
    const token = readTokenAccount(sim.accounts[i] ?? null);
    if (token !== null) mints.add(token.mint);
  }
  return [...mints];
}

/** Puts the figures on the report; a failed simulation stops the flow with outcome `simulation_failed`. */
export function recordSimulation(report: Report, f: Figures, prefix: string | null = null): Step {
  report.compute_units = f.sim.unitsConsumed;
  report.fee = f.fee;
  report.balance_change = f.balanceChange;
  if (f.chainRefusal !== null) return stop(report, f.chainRefusal);
  if (f.unjudgeable !== null) return stop(report, spendUnknownRefusal(f.unjudgeable));
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
