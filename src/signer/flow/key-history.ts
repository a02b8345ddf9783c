/**
 * A key's landed transactions, examined completely and at a bounded cost per poll: how the watcher finds a
 * sign-only transaction whose id is someone else's signature (a foreign fee payer), and how it proves one never
 * landed.
 *
 * The key's history is read newest first (getSignaturesForAddress) and each transaction once (getTransaction),
 * looking for the watched signatures among its signatures. A walk starts at the newest entry and goes down until
 * it meets the part already examined by an earlier walk, the oldest slot any watched sign can have landed in, or
 * the end of the history. A poll spends at most a fixed number of listings and transaction reads; a walk that
 * runs out of them stops where it is and goes on from there at the next poll (the cursor), so no number of
 * transactions naming the key can hide one below the part a poll reads. Only a completed walk extends the part
 * that counts as examined, and only a walk that began after a transaction's blockhash had expired can prove that
 * the transaction never landed (docs/reports.md, "Sign-only").
 */
import { meetsCommitment } from '../../rpc/commitment';
import type { AddressSignature, RpcClient, TransactionMeta } from '../../rpc/types';

/** Entries listed per getSignaturesForAddress call. */
export const HISTORY_PAGE = 100;

/** What one poll may spend on all keys' histories together. */
export interface ScanBudget {
  listings: number;
  reads: number;
}

/** Listings and transaction reads one poll may spend: the watcher's RPC cost per poll is bounded by these. */
export const SCAN_BUDGET_PER_POLL: Readonly<ScanBudget> = Object.freeze({ listings: 4, reads: 200 });

/** A watched signature found landed: its listing and its landed transaction. */
export interface Found {
  listed: AddressSignature;
  meta: TransactionMeta;
}

/** What one poll did for one key. */
export interface ScanProgress {
  /** Watched signatures found in the transactions examined now. */
  found: Map<string, Found>;
  /**
   * The poll number at which the last completed walk began, or -1: every transaction of the key that had landed
   * by then, from the oldest slot watched on, has been examined.
   */
  completeSince: number;
  /** The number of transactions this walk has examined so far (for the operator's log). */
  examined: number;
}

export interface KeyHistoryScan {
  /**
   * Goes on examining the key's history from where the last poll stopped, within `budget` (spent from it), and
   * reports the watched signatures found. `poll` is the watcher's poll number, increasing.
   */
  advance(wanted: ReadonlySet<string>, fromSlot: number, poll: number, budget: ScanBudget): Promise<ScanProgress>;
}

interface Walk {
  /** The newest entry this walk met: once it completes, everything from here down has been examined. */
  top: string | null;
  /** The last entry examined; the walk goes on with the entries older than it. Undefined: not started. */
  cursor: string | undefined;
  /** The poll at which `top` was read. */
  startedAt: number;
  examined: number;
}

export function createKeyHistoryScan(chain: RpcClient, keyPubkey: string): KeyHistoryScan {
  /** Every transaction from `coveredTop` down to `bottomSlot` has been examined (null: nothing yet). */
  let coveredTop: string | null = null;
  let bottomSlot = Number.POSITIVE_INFINITY;
  let completeSince = -1;
  let walk: Walk | null = null;

  const landed = (s: AddressSignature): boolean =>
    s.confirmationStatus !== null && meetsCommitment(s.confirmationStatus, chain.commitment);

  return {
    async advance(wanted, fromSlot, poll, budget) {
      const found = new Map<string, Found>();
      if (fromSlot < bottomSlot) {
        // A sign older than what was examined: what was examined does not reach down far enough, so start over.
        coveredTop = null;
        completeSince = -1;
        walk = null;
        bottomSlot = fromSlot;
      } else bottomSlot = fromSlot; // the older signs are settled: what lies below the oldest watched one is not read
      const current: Walk = walk ?? { top: null, cursor: undefined, startedAt: poll, examined: 0 };
      walk = current;
      const complete = (): ScanProgress => {
        if (current.top !== null) coveredTop = current.top;
        completeSince = current.startedAt;
        walk = null;
        return { found, completeSince, examined: current.examined };
      };
      const paused = (): ScanProgress => ({ found, completeSince, examined: current.examined });

      while (budget.listings > 0) {
        budget.listings--;
        const listed = await chain.getSignaturesForAddress(keyPubkey, {
          limit: HISTORY_PAGE,
          ...(current.cursor === undefined ? {} : { before: current.cursor }),
        });
        // A walk that has not examined anything yet starts at whatever is newest now.
        if (current.cursor === undefined) current.startedAt = poll;
        // The entries of this page to examine, in order, up to the part already examined or too old to matter.
        let end = listed.findIndex((e) => e.signature === coveredTop || e.slot < bottomSlot);
        const reachesExamined = end >= 0;
        if (!reachesExamined) end = listed.length;
        const page = listed.slice(0, end);
        if (current.cursor === undefined) current.top = page[0]?.signature ?? null;
        const toRead = page.slice(0, budget.reads);
        budget.reads -= toRead.length;
        // Read together: the client sends calls made in the same tick as one JSON-RPC batch.
        const metas = await Promise.all(
          toRead.map((e) => (landed(e) ? chain.getTransaction(e.signature) : Promise.resolve(null))),
        );
        for (const [i, entry] of toRead.entries()) {
          const meta = metas[i] ?? null;
          // Not readable yet at this commitment: the walk waits here and reads it again at the next poll.
          if (meta === null) return paused();
          for (const sig of meta.signatures) if (wanted.has(sig)) found.set(sig, { listed: entry, meta });
          current.cursor = entry.signature;
          current.examined++;
        }
        if (toRead.length < page.length) return paused(); // out of reads: the walk goes on next poll
        if (reachesExamined || listed.length < HISTORY_PAGE) return complete();
      }
      return paused();
    },
  };
}
