/**
 * Two holders of one key racing a sign while the first one's lock is lost at a chosen step: the ledger side of
 * what the engine does (lock, usage, cap decision, fenced intent, send, final entry), with the "send" counted
 * in the test. Whatever the step, the lamports sent must stay within the cap and the chain must verify.
 */
import type { Ledger } from '../../src/ledger/types';
import { SignerError } from '../../src/util/errors';
import { intentInput, signInput } from './helpers';
import { spentLamports } from '../../src/signer/policy/rules/daily-cap';

export const RACE_KEY = 'race';
export const RACE_AMOUNT = 600;
/** Room for one sign, not two. */
export const RACE_CAP = 1_000;

export const SIGN_STEPS = ['locked', 'usage read', 'cap passed', 'intent written', 'sent'] as const;
export type SignStep = (typeof SIGN_STEPS)[number];

export type SignResult = 'sent' | 'refused' | 'lock lost';

/**
 * One sign as the engine runs it. `at(step)` is awaited after each step, with the lock held: the test loses the
 * lock there and lets the other holder run.
 */
export async function raceSign(
  ledger: Ledger,
  tag: string,
  sent: string[],
  at: (step: SignStep) => Promise<void> = () => Promise.resolve(),
): Promise<SignResult> {
  const now = 1_700_000_000;
  const lock = await ledger.lockKey(RACE_KEY);
  try {
    await at('locked');
    const usage = await ledger.keyUsage(RACE_KEY, now);
    await at('usage read');
    if (spentLamports(usage, RACE_CAP) + RACE_AMOUNT > RACE_CAP) {
      await ledger.append(signInput({ ts: now, key: RACE_KEY, outcome: 'refused', summary: tag }));
      return 'refused';
    }
    await at('cap passed');
    try {
      await ledger.appendFenced(
        intentInput({ ts: now, key: RACE_KEY, signature: tag, summary: tag, balance_change: -RACE_AMOUNT }),
      );
    } catch (e) {
      if (e instanceof SignerError && e.code === 'ledger') return 'lock lost';
      throw e;
    }
    await at('intent written');
    sent.push(tag);
    await at('sent');
    await ledger.append(
      signInput({ ts: now, key: RACE_KEY, signature: tag, summary: tag, balance_change: -RACE_AMOUNT }),
    );
    return 'sent';
  } finally {
    await lock.release();
  }
}

/**
 * A signs and, at `step`, loses its lock (`loseLock`); B, already waiting for the lock, then signs to the end
 * before A goes on. Returns both results and what was sent.
 */
export async function raceWithLostLock(
  a: Ledger,
  b: Ledger,
  step: SignStep,
  loseLock: () => Promise<void>,
): Promise<{ a: SignResult; b: SignResult; sent: string[] }> {
  const sent: string[] = [];
  let bDone: Promise<SignResult> | undefined;
  const aDone = raceSign(a, 'A', sent, async (s) => {
    if (s !== step) return;
    bDone = raceSign(b, 'B', sent);
    await new Promise((r) => setTimeout(r, 50)); // B is queued on the lock
    await loseLock();
    await bDone.catch(() => undefined);
  });
  const aResult = await aDone;
  const bResult = await (bDone ?? raceSign(b, 'B', sent));
  return { a: aResult, b: bResult, sent };
}
