/**
 * What an intent records for its transaction to be followed to its end, and what a watcher follows from it: the
 * intent's detail for a reader, its watch (mode, last valid block height, a foreign fee payer and the slot before it
 * was signed), and, read back from the ledger, the intents with no final entry yet (watch-signed.ts follows them).
 */
import type { KeyConfig, Timings } from '../../config/types';
import type { AuditEntry, IntentWatch } from '../../ledger/types';
import type { SignRecord } from './audit';

export interface WatchedSign {
  rec: SignRecord;
  signature: string;
  /** The signer sent it itself (mode send) and stopped before its final entry; otherwise a sign-only one. */
  orphan: boolean;
  /** Not looked at before this time (ms): until then the sign that wrote the intent may still be running. */
  notBefore: number;
  /** Past this finalized block height the transaction can no longer land. */
  lastValidBlockHeight: number;
  /** The fee payer when it is not the key: it signs and sends, so `signature` (the key's) is not the id. */
  feePayer: string | null;
  /**
   * A slot the chain had reached before the key signed (the simulation's): the transaction cannot land before
   * it, so the key's older transactions are not read. 0 when unknown.
   */
  fromSlot: number;
  /** Its intent reserved tokens: a final `failed` entry then says it moved none (ledger/token-usage.ts). */
  movedTokens: boolean;
}

/** The intent's detail for a transaction the signer sends, for a reader (the watcher reads `intentWatch`). */
export function sentIntentDetail(lastValidBlockHeight: number): string {
  return `send: valid until block height ${lastValidBlockHeight}`;
}

/**
 * How old a sent transaction's intent must be before a watcher takes it for one whose sign stopped: a running sign
 * ends within the confirmation deadline (its look-ups included) and then writes its final entry, which may wait out
 * a busy ledger; twice the deadline and a minute leave room for all of that.
 */
export function orphanAfterMs(timings: Pick<Timings, 'confirm_deadline_ms'>): number {
  return 2 * timings.confirm_deadline_ms + 60_000;
}

/** The intent's detail for a sign-only transaction, for a reader (the watcher reads `intentWatch`). */
export function signOnlyIntentDetail(
  lastValidBlockHeight: number,
  foreign: { feePayer: string; fromSlot: number } | null = null,
): string {
  const watched = `sign_only: watched until block height ${lastValidBlockHeight}`;
  return foreign === null
    ? watched
    : `${watched}; fee payer ${foreign.feePayer} signs and sends it after slot ${foreign.fromSlot}`;
}

/** What an intent records for a restarted engine to follow its transaction: sign-only at once, sent once orphaned. */
export function intentWatch(
  mode: IntentWatch['mode'],
  lastValidBlockHeight: number,
  foreign: { feePayer: string; fromSlot: number } | null,
): IntentWatch {
  return {
    mode,
    last_valid_block_height: lastValidBlockHeight,
    fee_payer: foreign?.feePayer ?? null,
    from_slot: foreign?.fromSlot ?? null,
  };
}

/**
 * Intents of one key with no final entry yet, as the watcher needs them: sign-only ones, and sent ones (orphans once
 * they are old enough). An intent with no watch (a sent transaction's from before the signer recorded its last valid
 * height) is left as it is: without that height its expiry cannot be told.
 */
export function pendingIntents(
  entries: readonly AuditEntry[],
  key: KeyConfig,
  timings: Pick<Timings, 'confirm_deadline_ms'>,
  /** When set, only intents that are orphans by this time (ms), whichever their mode. */
  dueBy?: number,
): WatchedSign[] {
  const finals = new Set(entries.filter((e) => e.command === 'sign' && e.signature !== null).map((e) => e.signature));
  const out: WatchedSign[] = [];
  for (const e of entries) {
    if (e.command !== 'sign-intent' || e.signature === null || finals.has(e.signature)) continue;
    if (dueBy !== undefined && e.ts * 1000 + orphanAfterMs(timings) > dueBy) continue;
    const watch = watchOf(e, timings);
    if (watch === null) continue;
    out.push({
      ...watch,
      rec: { key, payloadHash: e.payload_hash, summary: e.summary, programs: e.programs, intent: e.intent },
      signature: e.signature,
      movedTokens: (e.tokens ?? []).length > 0,
    });
  }
  return out;
}

/** How a watcher follows an intent: a sign-only one at once, a sent one once it is an orphan; null: no watch. */
function watchOf(
  e: AuditEntry,
  timings: Pick<Timings, 'confirm_deadline_ms'>,
): Pick<WatchedSign, 'orphan' | 'notBefore' | 'lastValidBlockHeight' | 'feePayer' | 'fromSlot'> | null {
  if (!e.watch) return null;
  const orphan = e.watch.mode === 'send';
  return {
    orphan,
    notBefore: orphan ? e.ts * 1000 + orphanAfterMs(timings) : 0,
    lastValidBlockHeight: e.watch.last_valid_block_height,
    feePayer: e.watch.fee_payer,
    fromSlot: e.watch.from_slot ?? 0,
  };
}
