/**
 * The last gate before a transaction leaves: the binding cap check against the exact transaction about to be
 * sent, a last look at the key's halt, and the durable intent. The intent is in the ledger before the transaction
 * is sent; if it cannot be written, nothing is sent. How the reservation is counted is in docs/policy.md.
 */
import type { KeyConfig } from '../../config/types';
import type { KeyUsage } from '../../ledger/limits';
import { spendOf } from '../../ledger/limits';
import type { Ledger } from '../../ledger/types';
import { SignerError } from '../../util/errors';
import type { HaltBook } from '../halts';
import type { Report } from '../report';
import { signEntry, type SignRecord } from './audit';
import { haltRefusal } from './halted';
import { limitsRefusal } from './limits';
import { stop, type StepWith } from './step';
import type { BuiltTransaction } from './transaction';

export interface GateDeps {
  ledger: Ledger;
  halts: HaltBook;
}

/** What the cap holds for a transaction: its spend plus its fee (an over-estimate by one fee, never under). */
export function capReservation(key: KeyConfig, report: Report, usage: KeyUsage): StepWith<{ reservation: number }> {
  if (report.balance_change === null || report.fee === null) {
    return stop(report, {
      check: 'limits',
      message:
        "the simulation did not report this key's balance, or the RPC gave no fee estimate, so the spend cannot be bounded",
    });
  }
  const reservation = spendOf(report.balance_change) + report.fee;
  const refusal = limitsRefusal(key, usage, reservation);
  if (refusal) return stop(report, refusal);
  return { ok: true, reservation };
}

/** Cap, halt, cancellation, then the intent: once this returns ok the transaction may be sent. */
export async function passGate(
  deps: GateDeps,
  input: {
    rec: SignRecord;
    built: BuiltTransaction;
    usage: KeyUsage;
    report: Report;
    signal: AbortSignal | undefined;
    /** What the intent says beyond the figures (a sign-only intent carries how long it is watched). */
    detail?: string | null;
  },
): Promise<StepWith<{ reservation: number }>> {
  const { rec, built, report } = input;
  const cap = capReservation(rec.key, report, input.usage);
  if (!cap.ok) return cap;
  report.checks.push('cap');

  const halt = await deps.halts.current(rec.key.name);
  if (halt) return stop(report, haltRefusal(halt));
  if (input.signal?.aborted) throw new SignerError('cancelled', 'the request was cancelled before anything was sent');

  report.signature = built.signature;
  await deps.ledger.appendFenced(
    signEntry(rec, {
      command: 'sign-intent',
      outcome: 'pending',
      detail: input.detail ?? null,
      signature: built.signature,
      slot: null,
      balance_change: -cap.reservation,
    }),
  );
  return { ok: true, reservation: cap.reservation };
}
