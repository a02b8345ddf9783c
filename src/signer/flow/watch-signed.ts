/**
 * The end of a sign-only transaction. The signer handed the signed bytes to the caller and kept the reservation
 * (the intent has no final entry yet, so the caps count it); this watcher follows the signature until it lands
 * (`confirmed` or `failed`, with the landed balance change) or its blockhash has expired with no landed status
 * (`signed_expired`, which releases the reservation), and writes that as the sign's final audit entry.
 * Pending sign-only intents are picked up again from the ledger when the engine starts. docs/reports.md.
 *
 * With the cluster's WebSocket notices on, each sign-only signature is also subscribed to (signatureSubscribe), and
 * a notice that it reached the commitment brings the next poll forward, as it does for a sign the signer sends
 * (flow/send-confirm.ts). A notice is never taken as the landing: the poll's status read decides, so a notice the
 * read contradicts changes nothing, and with the socket down the timed polls alone find the outcome.
 *
 * It also ends sent transactions whose signer stopped before writing their final entry (the process was killed while
 * confirming, or the ledger refused the final: flow/audit.ts). At start, every intent of a sent transaction with no
 * final is picked up, and once it is older than any sign that wrote it could still be running (orphanAfterMs) it is
 * followed like a sign-only one: landed gives `confirmed` or `failed`; past its blockhash with no landed status gives
 * `unknown`, which keeps its reservation, as the sign itself would have.
 *
 * A transaction another account pays the fee for (x402: the facilitator signs and sends after the key) has the
 * fee payer's signature as its id, unknown when the key signed, so no status can be asked for the key's own
 * signature. The watcher finds it among the key's transactions instead (getSignaturesForAddress, then
 * getTransaction, looking for the key's signature among each one's signatures). Its final entry carries the key's
 * signature, as the intent does (the caps pair an intent with its final by that column), and names the landed
 * transaction's id and fee payer in its detail.
 */
import { meetsCommitment } from '../../rpc/commitment';
import type { SignatureNotices } from '../../rpc/notice-types';
import type { RpcClient, SignatureStatus, TransactionMeta } from '../../rpc/types';
import type { KeyConfig, Timings } from '../../config/types';
import { SPEND_WINDOW_S, spendOf } from '../../ledger/usage-book';
import type { AuditEntry, IntentWatch, Ledger, TokenFigure } from '../../ledger/types';
import { errorMessage } from '../../util/errors';
import { nowSeconds } from '../../util/time';
import type { EngineLogger } from '../engine-deps';
import { signEntry, type SignRecord } from './audit';
import {
  createKeyHistoryScan,
  SCAN_BUDGET_PER_POLL,
  type Found,
  type KeyHistoryScan,
  type ScanBudget,
  type ScanProgress,
} from './key-history';
import {
  landedSpend,
  landedTokenFigures,
  landedUsdToRecord,
  overspend,
  reservedUsdOf,
  trip,
  type TripwireDeps,
} from './tripwire';

export interface WatchDeps {
  chain: RpcClient;
  ledger: Ledger;
  timings: Timings;
  log: EngineLogger;
  /** Halts and alerts: what the watcher raises (an unresolved watch, a landed overspend). */
  tripwire: TripwireDeps;
  /** Pushed notices that a watched signature landed, each bringing the next poll forward; null: polling only. */
  notices: SignatureNotices | null;
}

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

/** The final outcome that releases a sign-only reservation: expired, never landed. */
export const SIGNED_EXPIRED = 'signed_expired';

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
 * Signatures subscribed to at once, at most: past that (a flood of sign-only transactions nobody sends) the others
 * are found by the timed polls alone, and a provider's limit of subscriptions per connection is not reached.
 */
const MAX_FOLLOWED = 256;

/** How long the watcher waits for a key's lock to write a final entry before trying again at the next poll. */
const FINAL_LOCK_WAIT_MS = 2_000;

/** Signature statuses asked for in one call (the RPC's limit). */
const STATUSES_PER_CALL = 256;

/** The longest delay a Node timer takes (about 24.8 days); a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * How long the watcher sleeps before its next poll: one poll interval while any watched sign is due, else until
 * the first one is (orphans wait minutes to be due, and a poll before then would look at nothing).
 */
export function nextPollIn(notBefores: readonly number[], now: number, pollIntervalMs: number): number {
  const firstDue = notBefores.reduce((first, t) => Math.min(first, t), Infinity);
  return Math.min(MAX_TIMER_MS, Math.max(pollIntervalMs, firstDue - now));
}

export interface SignedWatcher {
  watch(w: WatchedSign): void;
  /**
   * Picks up from the ledger (the last 24 h) every pending sign-only intent of these keys, and every intent of a
   * sent transaction with no final entry, each looked at once it is old enough to be an orphan. `orphansOnly`:
   * only intents already older than any sign could still be running (orphanAfterMs), sign-only ones included: a
   * running process's look for what another left, which never doubles the watches that process still keeps.
   */
  resume(keys: readonly KeyConfig[], opts?: { orphansOnly?: boolean }): Promise<number>;
  /** Signatures being watched now. */
  pending(): string[];
  close(): Promise<void>;
}

export function createSignedWatcher(deps: WatchDeps): SignedWatcher {
  const { chain, ledger, timings, log } = deps;
  const watched = new Map<string, WatchedSign>();
  let timer: NodeJS.Timeout | null = null;
  let tick: Promise<void> | null = null;
  let closed = false;
  /** Each key's history as examined so far; dropped once none of its foreign-fee-payer signs is watched. */
  const histories = new Map<string, KeyHistoryScan>();
  /** Foreign-fee-payer transactions found landed whose final entry is not written yet. */
  const foundLanded = new Map<string, Found>();
  /** When each watched transaction was first seen past its last valid height: poll number and time. */
  const pastExpiry = new Map<string, { poll: number; at: number }>();
  let polls = 0;

  /** Subscriptions to watched signatures' notices, by signature; each ended once its signature is no longer watched. */
  const following = new Map<string, AbortController>();
  /** A notice came: the next poll runs at once instead of after its interval. */
  let noticed = false;

  /** When the pending timer fires (epoch ms), so a newly watched sign due sooner can bring it forward. */
  let timerAt = 0;
  const schedule = (): void => {
    if (closed || tick !== null || watched.size === 0) return;
    const now = Date.now();
    const delay = noticed
      ? 0
      : nextPollIn(
          [...watched.values()].map((w) => w.notBefore),
          now,
          timings.poll_interval_ms,
        );
    if (timer !== null) {
      if (now + delay >= timerAt) return;
      clearTimeout(timer);
    }
    timerAt = now + delay;
    timer = setTimeout(() => {
      timer = null;
      noticed = false;
      tick = poll()
        .catch((e: unknown) => log.warn({ err: errorMessage(e) }, 'watching sign-only transactions: a poll failed'))
        .finally(() => {
          tick = null;
          schedule();
        });
    }, delay);
  };

  /**
   * Subscribes to `w`'s notices where a notice can name it: its id is the key's own signature (not a foreign fee
   * payer's), and it was signed just now (an orphan may have landed long ago, which a node sends no notice of).
   */
  const follow = (w: WatchedSign): void => {
    const notices = deps.notices;
    if (notices === null || closed || w.orphan || w.feePayer !== null) return;
    if (following.has(w.signature) || following.size >= MAX_FOLLOWED) return;
    const stop = new AbortController();
    following.set(w.signature, stop);
    void notices.landed(w.signature, stop.signal).then((landed) => {
      if (following.get(w.signature) === stop) following.delete(w.signature);
      if (!landed || !watched.has(w.signature)) return;
      noticed = true;
      schedule();
    });
  };
  const unfollow = (signature: string): void => {
    following.get(signature)?.abort();
    following.delete(signature);
  };

  async function poll(): Promise<void> {
    const pollNumber = ++polls;
    const now = Date.now();
    const everything = [...watched.values()].filter((w) => w.notBefore <= now);
    if (everything.length === 0) return;
    const all = everything.filter((w) => w.feePayer === null);
    const foreign = everything.filter((w) => w.feePayer !== null);
    // The height is read before any look-up: a transaction not found after it cannot land later if it is past.
    const height = await chain.getBlockHeight('finalized');
    for (const w of everything) {
      if (height > w.lastValidBlockHeight && !pastExpiry.has(w.signature))
        pastExpiry.set(w.signature, { poll: pollNumber, at: Date.now() });
    }
    const budget: ScanBudget = { ...SCAN_BUDGET_PER_POLL };
    // A node that cannot list the key's history fails only these: nothing is expired, the reservations stay.
    await pollForeign(foreign, height, pollNumber, budget).catch((e: unknown) =>
      log.warn({ err: errorMessage(e) }, 'watching sign-only transactions paid by another account: a poll failed'),
    );
    if (foreign.length > 0)
      deps.tripwire.observer?.watchPoll({
        listings: SCAN_BUDGET_PER_POLL.listings - budget.listings,
        reads: SCAN_BUDGET_PER_POLL.reads - budget.reads,
      });
    // An orphan may have landed long before anyone looked: its status is asked of the node's history at once.
    const groups = [
      { group: all.filter((w) => !w.orphan), searchTransactionHistory: false },
      { group: all.filter((w) => w.orphan), searchTransactionHistory: true },
    ];
    for (const { group, searchTransactionHistory } of groups) {
      for (let at = 0; at < group.length; at += STATUSES_PER_CALL) {
        const batch = group.slice(at, at + STATUSES_PER_CALL);
        const statuses = await chain.getSignatureStatuses(
          batch.map((w) => w.signature),
          { searchTransactionHistory },
        );
        for (const [i, w] of batch.entries()) {
          if (closed) return;
          let status = statuses[i] ?? null;
          if (!landed(status) && height > w.lastValidBlockHeight) {
            // Past its last valid height: the chain answers for the signature itself; only a landed status in
            // history keeps it from having expired (asked again unless the look-up above already searched it).
            if (!searchTransactionHistory) {
              const [history] = await chain.getSignatureStatuses([w.signature], { searchTransactionHistory: true });
              status = history ?? null;
            }
            if (!landed(status)) {
              await finish(w, w.orphan ? orphanUnknownFinal(height, w) : expiredFinal(height, w));
              continue;
            }
          }
          if (status && landed(status)) await finish(w, await landedFinal(w, status));
        }
      }
    }
  }

  /**
   * Finds each foreign-fee-payer transaction among its key's transactions. One is expired only once a walk of the
   * key's history that began after its blockhash had expired has examined every transaction down to its slot; one
   * that stays undecided past the confirmation deadline ends `unknown`, keeping its reservation.
   */
  async function pollForeign(
    foreign: WatchedSign[],
    height: number,
    pollNumber: number,
    budget: ScanBudget,
  ): Promise<void> {
    const byKey = new Map<string, WatchedSign[]>();
    for (const w of foreign) byKey.set(w.rec.key.pubkey, [...(byKey.get(w.rec.key.pubkey) ?? []), w]);
    for (const keyPubkey of [...histories.keys()]) if (!byKey.has(keyPubkey)) histories.delete(keyPubkey);
    // The budget is shared: each poll starts with the next key, so a flood naming one key cannot starve the others.
    const keys = [...byKey];
    const first = keys.length === 0 ? 0 : pollNumber % keys.length;
    for (const [keyPubkey, ws] of [...keys.slice(first), ...keys.slice(0, first)]) {
      let history = histories.get(keyPubkey);
      if (!history) histories.set(keyPubkey, (history = createKeyHistoryScan(chain, keyPubkey)));
      // A simulation's slot is a bank the node had already frozen: the transaction signed after it lands later.
      const fromSlot = Math.min(...ws.map((w) => w.fromSlot));
      const wanted = new Set(ws.filter((w) => !foundLanded.has(w.signature)).map((w) => w.signature));
      let progress: ScanProgress | null = null;
      let failure: string | null = null;
      try {
        progress = await history.advance(wanted, fromSlot, pollNumber, budget);
        for (const [sig, hit] of progress.found) foundLanded.set(sig, hit);
      } catch (e) {
        failure = errorMessage(e);
      }
      for (const w of ws) {
        if (closed) return;
        const hit = foundLanded.get(w.signature);
        const expiredAt = pastExpiry.get(w.signature);
        if (hit) await finish(w, foreignFinal(w, hit));
        else if (expiredAt && progress && progress.completeSince >= expiredAt.poll) {
          const expired = expiredFinal(height, w);
          await finish(w, {
            ...expired,
            detail: `${expired.detail}; every transaction of the key since slot ${w.fromSlot} was examined`,
          });
        } else if (expiredAt && Date.now() - expiredAt.at > timings.confirm_deadline_ms) {
          const why = failure ?? `${progress?.examined ?? 0} transactions of the key examined in the walk under way`;
          await finish(w, unresolvedFinal(w, height, timings.confirm_deadline_ms, why));
        }
      }
      if (failure !== null)
        log.warn({ key: ws[0]?.rec.key.name, err: failure }, 'the key history could not be read this poll');
    }
  }

  const landed = (s: SignatureStatus | null): s is SignatureStatus =>
    s?.confirmationStatus != null && meetsCommitment(s.confirmationStatus, chain.commitment);

  async function landedFinal(w: WatchedSign, s: SignatureStatus): Promise<Final> {
    const failed = s.err !== null && s.err !== undefined;
    const meta = await chain.getTransaction(w.signature).catch(() => null);
    const change =
      meta && meta.preBalance0 !== null && meta.postBalance0 !== null ? meta.postBalance0 - meta.preBalance0 : null;
    return {
      outcome: failed ? 'failed' : 'confirmed',
      slot: s.slot,
      // Unknown stays null: the caps then keep counting the intent's reservation.
      balance_change: change,
      detail: w.orphan
        ? `${ORPHAN_NOTE}; it landed${failed ? ` and failed: ${JSON.stringify(s.err)}` : ''}`
        : failed
          ? `the caller sent it and it failed: ${JSON.stringify(s.err)}`
          : 'sign_only: landed',
      meta,
    };
  }

  /**
   * Writes the final entry once, whichever replica's watcher gets there first: under the key's lock, and only if
   * no final for the signature is in the ledger yet. A lock it cannot get soon (a sign waiting for approval holds
   * it) leaves the signature watched for the next poll.
   */
  async function finish(w: WatchedSign, f: Final): Promise<void> {
    watched.delete(w.signature);
    unfollow(w.signature);
    const forget = (): void => {
      foundLanded.delete(w.signature);
      pastExpiry.delete(w.signature);
    };
    const key = w.rec.key.name;
    let over: string[] = [];
    try {
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
      if (over.length > 0) await trip(deps.tripwire, { key, signature: w.signature, over });
      forget();
      if (f.outcome === 'unknown') {
        const what = w.orphan ? 'sent transaction of a stopped sign' : 'sign-only transaction';
        log.error({ key, signature: w.signature, detail: f.detail }, `${what} left unresolved`);
        deps.tripwire.observer?.alert({ kind: 'watch_unresolved', key, signature: w.signature, detail: f.detail });
      }
    } catch (e) {
      // The intent keeps the reservation charged; the signature is watched again (and resumed on the next start).
      if (!closed) watched.set(w.signature, w);
      else forget();
      log.error({ key, signature: w.signature, err: errorMessage(e) }, 'sign-only final not written yet');
    }
  }

  return {
    watch(w) {
      if (closed) return;
      watched.set(w.signature, w);
      follow(w);
      schedule();
    },

    async resume(keys, opts) {
      let resumed = 0;
      const dueBy = opts?.orphansOnly === true ? Date.now() : undefined;
      for (const key of keys) {
        const entries = await ledger.signEntriesForKey(key.name, nowSeconds() - SPEND_WINDOW_S);
        for (const w of pendingIntents(entries, key, timings, dueBy)) {
          if (closed || watched.has(w.signature)) continue;
          watched.set(w.signature, w);
          follow(w);
          resumed++;
        }
      }
      schedule();
      return resumed;
    },

    pending: () => [...watched.keys()],

    async close() {
      closed = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      for (const signature of [...following.keys()]) unfollow(signature);
      await tick;
    },
  };
}

/** The final entry of a foreign-fee-payer transaction found landed: the key's own balance change, the id named. */
function foreignFinal(w: WatchedSign, { listed, meta }: Found): Final {
  const at = meta.accountKeys.indexOf(w.rec.key.pubkey);
  const pre = meta.preBalances[at];
  const post = meta.postBalances[at];
  const change = at >= 0 && pre !== undefined && post !== undefined ? post - pre : null;
  const err = meta.err ?? listed.err;
  const failed = err !== null && err !== undefined;
  const payer = meta.accountKeys[0] ?? w.feePayer ?? 'unknown';
  const fee = meta.fee === null ? '' : ` (${meta.fee} lamports)`;
  const landedAs = `landed as ${listed.signature}, fee paid by ${payer}${fee}`;
  return {
    outcome: failed ? 'failed' : 'confirmed',
    slot: meta.slot,
    balance_change: change,
    detail: failed ? `sign_only: ${landedAs}; it failed: ${JSON.stringify(err)}` : `sign_only: ${landedAs}`,
    meta,
  };
}

interface Final {
  outcome: string;
  slot: number | null;
  balance_change: number | null;
  detail: string;
  /** The landed transaction's metadata, for the tripwire; absent when it did not land or was not returned. */
  meta?: TransactionMeta | null;
}

function expiredFinal(height: number, w: WatchedSign): Final {
  return {
    outcome: SIGNED_EXPIRED,
    slot: null,
    balance_change: null,
    detail: `sign_only: the blockhash expired (finalized height ${height} is past ${w.lastValidBlockHeight}) and the signature never landed; its reservation is released`,
  };
}

const ORPHAN_NOTE = 'the signer stopped before writing the final entry; a restarted signer looked it up';

/** A sent orphan past its blockhash with no landed status: `unknown`, as the sign would have ended (send-confirm.ts). */
function orphanUnknownFinal(height: number, w: WatchedSign): Final {
  return {
    outcome: 'unknown',
    slot: null,
    balance_change: null,
    detail: `${ORPHAN_NOTE}: the blockhash expired (finalized height ${height} is past ${w.lastValidBlockHeight}) and the RPC reports no landed status; that does not prove it never landed, so its reservation stays: look up the signature and check the on-chain state before retrying`,
  };
}

/**
 * The final entry of a foreign-fee-payer transaction the watcher could not settle: past its blockhash, the key's
 * history not examined completely in time. `unknown` keeps its reservation (ledger/limits.ts).
 */
function unresolvedFinal(w: WatchedSign, height: number, deadlineMs: number, why: string): Final {
  return {
    outcome: 'unknown',
    slot: null,
    balance_change: null,
    detail: `sign_only: the blockhash expired (finalized height ${height} is past ${w.lastValidBlockHeight}) but the key's transactions since slot ${w.fromSlot} could not all be examined within ${Math.round(deadlineMs / 1000)} s (${why}); whether it landed is not proven, so its reservation stays: look up the key's transactions before signing again`,
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
