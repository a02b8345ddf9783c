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
import type { RpcClient, SignatureStatus } from '../../rpc/types';
import type { KeyConfig, Timings } from '../../config/types';
import { SPEND_WINDOW_S } from '../../ledger/usage-book';
import type { Ledger } from '../../ledger/types';
import { errorMessage } from '../../util/errors';
import { nowSeconds } from '../../util/time';
import type { EngineLogger } from '../engine-deps';
import { pendingIntents, type WatchedSign } from './intent-watch';
import {
  createKeyHistoryScan,
  SCAN_BUDGET_PER_POLL,
  type Found,
  type KeyHistoryScan,
  type ScanBudget,
  type ScanProgress,
} from './key-history';
import { trip, type TripwireDeps } from './tripwire';
import {
  expiredFinal,
  foreignFinal,
  landedFinal,
  orphanUnknownFinal,
  unresolvedFinal,
  type Final,
} from './watch-finals';
import { createFollowing } from './watch-notices';
import { writeWatchedFinal } from './watch-final-write';
import { nextPollIn } from './watch-schedule';

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

/** Signature statuses asked for in one call (the RPC's limit). */
const STATUSES_PER_CALL = 256;

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

  const following = createFollowing(
    deps.notices,
    (signature) => watched.has(signature),
    () => {
      noticed = true;
      schedule();
    },
  );

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
          if (status && landed(status)) await finish(w, await landedFinal(chain, w, status));
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

  /**
   * Writes the final entry once, whichever replica's watcher gets there first: under the key's lock, and only if
   * no final for the signature is in the ledger yet. A lock it cannot get soon (a sign waiting for approval holds
   * it) leaves the signature watched for the next poll.
   */
  async function finish(w: WatchedSign, f: Final): Promise<void> {
    watched.delete(w.signature);
    following.unfollow(w.signature);
    const forget = (): void => {
      foundLanded.delete(w.signature);
      pastExpiry.delete(w.signature);
    };
    const key = w.rec.key.name;
    try {
      const over = await writeWatchedFinal(ledger, w, f);
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
      following.follow(w);
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
          following.follow(w);
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
      following.close();
      await tick;
    },
  };
}
