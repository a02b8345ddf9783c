/**
 * The last gate before a transaction leaves, and the only part of a sign that excludes the key's other writers:
 * the key's usage read afresh, the binding cap check against the exact transaction about to be sent, a last look
 * at the key's halt, and the durable intent (the reservation). Everything before (checks, simulation, an
 * operator's approval) and after (send and confirm) runs without it, so one key signs many transactions at once
 * while every reservation counts from the moment its intent is written. The intent is in the ledger before the
 * transaction is sent; if it cannot be written, nothing is sent.
 *
 * Where the ledger can, the gate is one write transaction (Ledger.reserveAtOnce: SQLite's write lock excludes the
 * others). Otherwise it takes the key's lock, reads, decides, and appends the intent fenced on the lock, so a lock
 * lost meanwhile (its connection died, its lease was taken over) writes nothing. Both ask the same decision.
 * How the reservation is counted is in docs/policy.md.
 */
import type { IntentWatch, KeyLock, Ledger, ReserveDecision, ReserveView } from '../../ledger/types';
import { budgetLockNames } from '../../ledger/budget-lock';
import type { BudgetFact } from '../policy/rules/credential-budget';
import { SignerError, errorMessage } from '../../util/errors';
import type { EngineLogger } from '../engine-deps';
import type { HaltBook } from '../halts';
import type { CredentialBudget, SignProgress } from '../types';
import type { Report } from '../report';
import { signEntry, type SignRecord } from './audit';
import type { StepWith } from './step';
import type { BuiltTransaction } from '../sources/transaction';
import { nowSeconds } from '../../util/time';
import { tokenFigures } from '../policy/rules/tokens';
import { decide } from '../policy/decide';
import { lamportPayments } from '../policy/rules/destination-cap';
import type { SimulatedMoves } from '../policy/facts';
import type { UsdSpend } from '../../pricing/usd-spend';
import { recordedPrices } from '../../pricing/recorded-prices';
import { reservedUsdOf, type ReservedUsd } from './tripwire';
import { reportVerdict } from './verdict-report';
import type { CapKeys } from './after-approval';

export interface GateDeps {
  ledger: Ledger;
  halts: HaltBook;
  log: EngineLogger;
}

export interface GateInput {
  rec: SignRecord;
  /** The transaction about to be sent: the gate looks only at its signature. */
  built: Pick<BuiltTransaction, 'signature'>;
  figures: SimulatedMoves;
  /** What the transaction takes out of the key in dollars (flow/usd.ts); null: the key is not priced. */
  usd: UsdSpend | null;
  report: Report;
  signal: AbortSignal | undefined;
  progress: (p: SignProgress) => void;
  /** What the intent says beyond the figures (a sign-only intent carries how long it is watched). */
  detail?: string | null;
  /** How a restarted engine follows the transaction (ledger IntentWatch). */
  watch?: IntentWatch | null;
  /**
   * The key policies whose caps must all hold (after an approval, the one the sign began with and the one in
   * force now); absent: the sign's own, `rec.key`.
   */
  capKeys?: CapKeys;
  /** The daily budgets of the credential that asked (credentialBudgets): the sign must fit each block's too. */
  budgets?: readonly CredentialBudget[];
}

/** Once gated: the lamports reserved, and the dollar value and prices the intent recorded (null: not priced). */
type Gated = StepWith<{ reservation: number; usd: ReservedUsd | null }>;

/** Usage, cap, halt, cancellation, then the intent. Once this returns ok the transaction may be sent. */
export async function passGate(deps: GateDeps, input: GateInput): Promise<Gated> {
  const key = input.rec.key;
  input.progress({ stage: 'lock' });
  const budgets = input.budgets ?? [];
  const request = { key: key.name, signature: input.built.signature };
  // A halt held in memory, not yet in the ledger, is offered to it first: that is the lock path's halts.current.
  // A credential's budgets span keys: they are judged under their blocks' locks, on the lock path only.
  if (deps.halts.held(key.name) === null && budgets.length === 0) {
    const atOnce = await deps.ledger.reserveAtOnce({ ...request, now: nowSeconds() }, gateDecision(input, []));
    if (atOnce !== null) return atOnce;
  }
  const locks: KeyLock[] = [];
  const names = budgetLockNames(budgets.map((b) => b.revocation_id));
  try {
    // The key's lock first, then each budgeted block's in one order (budget-lock.ts): no two gates wait on each other.
    locks.push(await deps.ledger.lockKey(key.name, input.signal));
    for (const name of names) locks.push(await deps.ledger.lockKey(name, input.signal));
    // Read under the locks: every reservation whose intent is durable is in them, whichever replica wrote it.
    const now = nowSeconds();
    const view: ReserveView = {
      usage: await deps.ledger.keyUsage(key.name, now),
      signatureInFlight:
        request.signature !== null && (await deps.ledger.signatureInFlight(key.name, request.signature)),
      halt: await deps.halts.current(key.name),
    };
    const facts: BudgetFact[] = [];
    for (const b of budgets) facts.push({ ...b, usage: await deps.ledger.blockUsage(b.revocation_id, now) });
    const { intent, result } = gateDecision(input, facts)(view);
    if (intent) await deps.ledger.appendFenced(intent, names);
    return result;
  } finally {
    // The intent (if any) is durable: a lock that cannot be released is freed with its holder, and must not
    // stop a transaction the ledger already counts from being sent.
    for (const lock of locks.reverse())
      await lock
        .release()
        .catch((e: unknown) => deps.log.error({ key: key.name, err: errorMessage(e) }, 'releasing a key lock failed'));
  }
}

/**
 * The gate's decision on what the ledger read: the same for both paths, and the same each time it is asked on
 * the same view (a transaction retried while the file is busy asks again), so it only sets report fields.
 */
function gateDecision(input: GateInput, budgets: readonly BudgetFact[]): (view: ReserveView) => ReserveDecision<Gated> {
  const { rec, built, report } = input;
  return (view) => {
    const verdict = decide(input.capKeys ?? rec.key, {
      at: 'gate',
      moves: input.figures,
      usd: input.usd,
      usage: view.usage,
      halt: view.halt,
      signature: built.signature,
      signatureInFlight: view.signatureInFlight,
      budgets,
    });
    if (reportVerdict(report, verdict)) return { intent: null, result: { ok: false, report } };
    const reservation = verdict.figures.reservation;
    if (reservation === undefined) throw new Error('the policy core allowed a sign at the gate with no reservation');
    if (input.signal?.aborted) throw new SignerError('cancelled', 'the request was cancelled before anything was sent');

    report.signature = built.signature;
    const tokens = tokenFigures(input.figures.tokens, input.figures.mints);
    const credits = lamportPayments(input.figures.gains);
    const intent = signEntry(rec, {
      command: 'sign-intent',
      outcome: 'pending',
      detail: input.detail ?? null,
      watch: input.watch ?? null,
      signature: built.signature,
      slot: null,
      balance_change: -reservation,
      // A sign that moves no tokens (pays no one) writes no such field: its entry reads exactly as entries always did.
      tokens: tokens.length > 0 ? tokens : null,
      lamport_credits: credits.length > 0 ? credits : null,
      // The dollar value the daily dollar cap counts for this sign, recorded once at its valuation, with the prices
      // it was reached at (the tripwire values the landing at them).
      usd_micros: input.usd?.ok === true ? input.usd.usd.toString() : null,
      usd_prices: input.usd?.ok === true ? recordedPrices(input.usd.valued) : null,
      // The credential blocks whose budgets this sign counts against, until its final says what it spent.
      budget_blocks: budgets.length > 0 ? budgets.map((b) => b.revocation_id) : null,
    });
    return { intent, result: { ok: true, reservation, usd: reservedUsdOf(intent) } };
  };
}
