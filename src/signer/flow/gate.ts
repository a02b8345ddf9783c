/**
 * The last gate before a transaction leaves, and the only part of a sign that holds the key's lock: the key's
 * usage read afresh, the binding cap check against the exact transaction about to be sent, a last look at the
 * key's halt, and the durable intent (the reservation), then the lock is released. Everything before (checks,
 * simulation, an operator's approval) and after (send and confirm) runs without it, so one key signs many
 * transactions at once while every reservation counts from the moment its intent is written. The intent is in
 * the ledger before the transaction is sent; if it cannot be written, nothing is sent. The intent is appended
 * fenced on the lock, so a lock lost meanwhile (its connection died, its lease was taken over) writes nothing.
 * How the reservation is counted is in docs/policy.md.
 */
import type { Ledger } from '../../ledger/types';
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
import { keyUsage } from './preflight';
import type { Usage } from '../../ledger/types';
import type { TokenFigures } from './tokens';
import { tokenFigures } from '../spl-tokens/policy';
import { capReservation } from './judge';

export interface GateDeps {
  ledger: Ledger;
  halts: HaltBook;
  log: EngineLogger;
}

/**
 * Under the key's lock: usage, cap, halt, cancellation, then the intent. Once this returns ok the transaction may
 * be sent (the lock is already released).
 */
export async function passGate(
  deps: GateDeps,
  input: {
    rec: SignRecord;
    built: BuiltTransaction;
    figures: TokenFigures;
    report: Report;
    signal: AbortSignal | undefined;
    progress: (p: SignProgress) => void;
    /** What the intent says beyond the figures (a sign-only intent carries how long it is watched). */
    detail?: string | null;
  },
): Promise<StepWith<{ reservation: number }>> {
  const key = input.rec.key.name;
  input.progress({ stage: 'lock' });
  const lock = await deps.ledger.lockKey(key, input.signal);
  try {
    // Read under the lock: every reservation whose intent is durable is in it, whichever replica wrote it.
    const usage = await keyUsage(deps.ledger, input.rec.key);
    return await reserve(deps, { ...input, usage });
  } finally {
    // The intent (if any) is durable: a lock that cannot be released is freed with its holder, and must not
    // stop a transaction the ledger already counts from being sent.
    await lock
      .release()
      .catch((e: unknown) => deps.log.error({ key, err: errorMessage(e) }, 'releasing a key lock failed'));
  }
}

async function reserve(
  deps: GateDeps,
  input: {
    rec: SignRecord;
    built: BuiltTransaction;
    usage: Usage;
    figures: TokenFigures;
    report: Report;
    signal: AbortSignal | undefined;
    detail?: string | null;
  },
): Promise<StepWith<{ reservation: number }>> {
  const { rec, built, report } = input;
  // Two requests for the same transfer at once compile to the same transaction (same blockhash, same bytes): the
  // chain runs it once, so the second must not be reported, or charged, as a second payment.
  if (built.signature !== null && (await deps.ledger.signatureInFlight(rec.key.name, built.signature))) {
    return stop(
      report,
      refusalOf(
        'signature_in_flight',
        `this exact transaction (signature ${built.signature}) is already signed for another request and has no outcome yet: the chain runs a transaction once, so signing it again would move nothing more; for a second transfer sign again after the next block (a new blockhash), or make the two transactions differ`,
        { signature: built.signature },
      ),
    );
  }
  const cap = capReservation(rec.key, report, input.usage, input.figures);
  const tokens = tokenFigures(input.figures.tokens, input.figures.mints);
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
      // A sign that moves no tokens writes no token field: its entry reads exactly as entries always did.
      tokens: tokens.length > 0 ? tokens : null,
    }),
  );
  return { ok: true, reservation: cap.reservation };
}
