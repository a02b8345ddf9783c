/**
 * Writes a watched transaction's final entry once, whichever replica's watcher gets there first: under the key's
 * lock, and only if no final for the signature is in the ledger yet. A landed spend larger than the intent's
 * reservation is recorded at its real size (the tripwire); what it overspent is returned for the caller to halt on.
 */
import { SPEND_WINDOW_S, spendOf } from '../../ledger/usage-book';
import type { Ledger, TokenFigure } from '../../ledger/types';
import { nowSeconds } from '../../util/time';
import { signEntry } from './audit';
import type { WatchedSign } from './intent-watch';
import { landedSpend, landedTokenFigures, landedUsdToRecord, overspend, reservedUsdOf } from './tripwire';
import type { Final } from './watch-finals';

/** How long the watcher waits for a key's lock to write a final entry before trying again at the next poll. */
const FINAL_LOCK_WAIT_MS = 2_000;

/** Throws when the lock is not had in time or the ledger fails: the intent keeps its reservation meanwhile. */
export async function writeWatchedFinal(ledger: Ledger, w: WatchedSign, f: Final): Promise<string[]> {
  const key = w.rec.key.name;
  let over: string[] = [];
  const lock = await ledger.lockKey(key, AbortSignal.timeout(FINAL_LOCK_WAIT_MS));
  try {
    const entries = await ledger.signEntriesForKey(key, nowSeconds() - SPEND_WINDOW_S);
    const recorded = entries.some((e) => e.command === 'sign' && e.signature === w.signature);
    let tokens: TokenFigure[] | null = f.outcome === 'failed' && w.movedTokens ? [] : null;
    let usd: string | null = null;
    const { meta, ...final } = f;
    const intent = entries.find((e) => e.command === 'sign-intent' && e.signature === w.signature);
    if (!recorded && meta && intent && (f.outcome === 'confirmed' || f.outcome === 'failed')) {
      // The tripwire: a landed spend larger than the reservation is recorded at its real size.
      const landed = landedSpend(meta, w.rec.key.pubkey);
      const reserved = {
        lamports: spendOf(intent.balance_change ?? 0),
        tokens: intent.tokens ?? null,
        usd: reservedUsdOf(intent),
      };
      over = overspend(reserved, landed);
      if (over.length > 0) {
        tokens = landedTokenFigures(landed, reserved.tokens);
        usd = landedUsdToRecord(reserved, landed);
        final.detail = `${final.detail}; tripwire: it spent more than its reservation (${over.join('; ')}), the key is halted`;
      }
    }
    if (!recorded)
      await ledger.append(
        signEntry(w.rec, {
          command: 'sign',
          signature: w.signature,
          ...final,
          tokens,
          ...(usd === null ? {} : { usd_micros: usd }),
        }),
      );
  } finally {
    await lock.release();
  }
  return over;
}
