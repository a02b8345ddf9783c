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
import type { IntentWatch, Ledger, ReserveDecision, ReserveView, Usage } from '../../ledger/types';
import { SignerError, errorMessage } from '../../util/errors';
import type { EngineLogger } from '../engine-deps';
import type { HaltBook } from '../halts';
import type { SignProgress } from '../types';
import type { Report } from '../report';
import { signEntry, type SignRecord } from './audit';
import { refusal as refusalOf } from '../refusals';
import { haltRefusal } from '../rules/halted';
import { stop, type StepWith } from './step';
import type { BuiltTransaction } from '../sources/transaction';
import { nowSeconds } from '../../util/time';
import type { TokenFigures } from './tokens';
import { tokenFigures } from '../spl-tokens/policy';
import { capReservation } from './judge';
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
  figures: TokenFigures;
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
}

type Gated = StepWith<{ reservation: number }>;

/** Usage, cap, halt, cancellation, then the intent. Once this returns ok the transaction may be sent. */
export async function passGate(deps: GateDeps, input: GateInput): Promise<Gated> {
  const key = input.rec.key;
  input.progress({ stage: 'lock' });
  const decide = gateDecision(input);
  // An entry no figure bounds counts as a whole daily cap: the smallest of the caps judged makes it count least,
  // and such an entry alone already refuses under that cap (docs/policy.md, "Spend and slots").
  const dailyCap = Math.min(...capKeysOf(input).map((k) => k.daily_lamport_cap));
  const request = { key: key.name, dailyCap, signature: input.built.signature };
  // A halt held in memory, not yet in the ledger, is offered to it first: that is the lock path's halts.current.
  if (deps.halts.held(key.name) === null) {
    const atOnce = await deps.ledger.reserveAtOnce({ ...request, now: nowSeconds() }, decide);
    if (atOnce !== null) return atOnce;
  }
  const lock = await deps.ledger.lockKey(key.name, input.signal);
  try {
    // Read under the lock: every reservation whose intent is durable is in it, whichever replica wrote it.
    const now = nowSeconds();
    const view: ReserveView = {
      usage: await deps.ledger.keyUsage(key.name, now, dailyCap),
      signatureInFlight:
        request.signature !== null && (await deps.ledger.signatureInFlight(key.name, request.signature)),
      halt: await deps.halts.current(key.name),
    };
    const { intent, result } = decide(view);
    if (intent) await deps.ledger.appendFenced(intent);
    return result;
  } finally {
    // The intent (if any) is durable: a lock that cannot be released is freed with its holder, and must not
    // stop a transaction the ledger already counts from being sent.
    await lock
      .release()
      .catch((e: unknown) => deps.log.error({ key: key.name, err: errorMessage(e) }, 'releasing a key lock failed'));
  }
}

/**
 * The gate's decision on what the ledger read: the same for both paths, and the same each time it is asked on
 * the same view (a transaction retried while the file is busy asks again), so it only sets report fields.
 */
function gateDecision(input: GateInput): (view: ReserveView) => ReserveDecision<Gated> {
  const { rec, built, report } = input;
  const refused = (stopped: Gated): ReserveDecision<Gated> => ({ intent: null, result: stopped });
  return (view) => {
    // Two requests for the same transfer at once compile to the same transaction (same blockhash, same bytes): the
    // chain runs it once, so the second must not be reported, or charged, as a second payment.
    if (built.signature !== null && view.signatureInFlight) {
      return refused(
        stop(
          report,
          refusalOf(
            'signature_in_flight',
            `this exact transaction (signature ${built.signature}) is already signed for another request and has no outcome yet: the chain runs a transaction once, so signing it again would move nothing more; for a second transfer sign again after the next block (a new blockhash), or make the two transactions differ`,
            { signature: built.signature },
          ),
        ),
      );
    }
    const cap = stricterCap(capKeysOf(input), report, view.usage, input.figures);
    if (!cap.ok) return refused(cap);
    if (!report.checks.includes('cap')) report.checks.push('cap');
    if (view.halt) return refused(stop(report, haltRefusal(view.halt)));
    if (input.signal?.aborted) throw new SignerError('cancelled', 'the request was cancelled before anything was sent');

    report.signature = built.signature;
    const tokens = tokenFigures(input.figures.tokens, input.figures.mints);
    const intent = signEntry(rec, {
      command: 'sign-intent',
      outcome: 'pending',
      detail: input.detail ?? null,
      watch: input.watch ?? null,
      signature: built.signature,
      slot: null,
      balance_change: -cap.reservation,
      // A sign that moves no tokens writes no token field: its entry reads exactly as entries always did.
      tokens: tokens.length > 0 ? tokens : null,
    });
    return { intent, result: { ok: true, reservation: cap.reservation } };
  };
}

const capKeysOf = (input: GateInput): CapKeys => input.capKeys ?? [input.rec.key];

/**
 * The cap of every policy given: the first refusal, else the reservation (the same figure under each), with the
 * report's allowance left the smallest of them.
 */
function stricterCap(keys: CapKeys, report: Report, usage: Usage, figures: TokenFigures): Gated {
  let result: Gated | null = null;
  let lamportsLeft: number | null = null;
  for (const key of keys) {
    result = capReservation(key, report, usage, figures);
    if (!result.ok) return result;
    const left = report.remaining_daily_lamports;
    if (left !== null) lamportsLeft = lamportsLeft === null ? left : Math.min(lamportsLeft, left);
  }
  if (result === null) throw new Error('the gate judges at least one key policy');
  report.remaining_daily_lamports = lamportsLeft;
  return result;
}
