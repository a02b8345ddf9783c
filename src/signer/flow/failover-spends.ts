/**
 * The spends a failover may have taken out of the ledger. With asynchronous replication, the last commits the
 * former primary acknowledged can be missing from the promoted standby: a sign's intent among them whose transaction
 * was sent lands with no reservation left, so the key's usage lacks it and the caps no longer hold for that key
 * (docs/ledger.md, "Failover"). The tripwire sees a landed spend only against an intent it has; this check looks
 * from the chain's side instead.
 *
 * Once the ledger has moved to a newer timeline, each key's landed transactions are read newest first
 * (getSignaturesForAddress, then getTransaction), down to the slot seen by the newest of its intents certainly
 * committed before the failover (slotBound) and at most CHECK_DEPTH of them.
 * A transaction the key signed that no entry in the ledger names is a spend with no reservation: lost with the
 * former primary, or not made by this signer at all. Either way the key is halted with the reason, and an alert
 * raised; an operator compares the key's on-chain spend with `key_show` before resuming it. The check runs at once
 * and again once every sign in flight at the failover has ended (orphanAfterMs), as one lost at the kill can land
 * after the first look.
 */
import type { KeyConfig, Timings } from '../../config/types';
import type { AuditEntry, Ledger } from '../../ledger/types';
import type { RpcClient, TransactionMeta } from '../../rpc/types';
import { SPEND_WINDOW_S } from '../../ledger/usage-book';
import { errorMessage } from '../../util/errors';
import { nowSeconds } from '../../util/time';
import type { TripwireDeps } from './tripwire';
import { landedSpend } from './tripwire';
import { orphanAfterMs } from './intent-watch';

/** At most this many of a key's newest transactions are read per check: its RPC cost is bounded. */
export const CHECK_DEPTH = 300;
const PAGE = 100;
export interface FailoverSpendDeps {
  chain: RpcClient;
  ledger: Pick<Ledger, 'signEntriesForKey'>;
  tripwire: TripwireDeps;
  timings: Pick<Timings, 'confirm_deadline_ms'>;
}

/** A landed transaction the key signed that the ledger does not name. */
export interface UnrecordedSpend {
  key: string;
  signature: string;
  /** Lamports the key lost in it (null: the node did not list its balance). */
  lamports: number | null;
}

/** Whether the key is one of the transaction's signers (the first accounts, as many as it has signatures). */
function signedBy(meta: TransactionMeta, pubkey: string): boolean {
  const at = meta.accountKeys.indexOf(pubkey);
  return at >= 0 && at < meta.signatures.length;
}

/**
 * The slot below which nothing of the key can be missing, or null when no intent of the key bounds it. An intent
 * older than any sign could still be running at the failover (orphanAfterMs) was committed before it, and having
 * survived, it was committed before every lost one: a lost transaction was sent after its own intent's commit, so
 * it landed at or after the slot the surviving intent had seen. An entry's time is when its sign built it, which
 * can be well before its commit (a sign waiting out the failover commits on the new primary), hence the margin.
 */
function slotBound(entries: readonly AuditEntry[], beforeSec: number): number | null {
  let bound: number | null = null;
  for (const e of entries) {
    if (e.command !== 'sign-intent' || e.ts >= beforeSec) continue;
    const slot = e.watch?.from_slot ?? null;
    if (slot !== null && (bound === null || slot > bound)) bound = slot;
  }
  return bound;
}

/** One key's landed transactions that no ledger entry names, newest first. */
async function unrecordedFor(deps: FailoverSpendDeps, key: KeyConfig, failoverMs: number): Promise<UnrecordedSpend[]> {
  const list = (before: string | undefined, limit: number) =>
    deps.chain.getSignaturesForAddress(key.pubkey, { limit, ...(before === undefined ? {} : { before }) });
  // The chain first, the ledger after: a sign still going on has written its intent before its transaction was
  // sent, so every transaction listed here that the ledger kept is in what is read next.
  let listed = await list(undefined, Math.min(PAGE, CHECK_DEPTH));
  const recent = await deps.ledger.signEntriesForKey(key.name, nowSeconds() - SPEND_WINDOW_S);
  const bound = slotBound(recent, (failoverMs - orphanAfterMs(deps.timings)) / 1000);
  // No intent bounds the walk: every transaction read is compared with the key's whole history, so an old one
  // the signer did make is not taken for a lost one.
  const entries = bound === null ? await deps.ledger.signEntriesForKey(key.name, 0) : recent;
  const known = new Set(entries.map((e) => e.signature).filter((s): s is string => s !== null));
  const out: UnrecordedSpend[] = [];
  for (let read = listed.length; ; read += listed.length) {
    const page = bound === null ? listed : listed.filter((s) => s.slot >= bound);
    const unknown = page.filter((s) => !known.has(s.signature));
    // Read together: the client sends calls made in the same tick as one JSON-RPC batch.
    const metas = await Promise.all(unknown.map((s) => deps.chain.getTransaction(s.signature)));
    for (const [i, s] of unknown.entries()) {
      const meta = metas[i] ?? null;
      // A transaction another account paid for names the key's signature elsewhere than in its id.
      if (meta === null || !signedBy(meta, key.pubkey) || meta.signatures.some((sig) => known.has(sig))) continue;
      out.push({ key: key.name, signature: s.signature, lamports: landedSpend(meta, key.pubkey).lamports });
    }
    const last = listed.at(-1);
    if (last === undefined || listed.length < PAGE || page.length < listed.length || read >= CHECK_DEPTH) break;
    listed = await list(last.signature, Math.min(PAGE, CHECK_DEPTH - read));
  }
  return out;
}

/**
 * Checks every key and halts each one with a spend the ledger does not name (a halted key stays halted with its
 * first reason). `failoverMs`: when the ledger was seen on the newer timeline.
 */
export async function checkSpendsAfterFailover(
  deps: FailoverSpendDeps,
  keys: readonly KeyConfig[],
  failoverMs: number,
): Promise<UnrecordedSpend[]> {
  const found: UnrecordedSpend[] = [];
  for (const key of keys) {
    const spends = await unrecordedFor(deps, key, failoverMs);
    if (spends.length === 0) continue;
    found.push(...spends);
    const lamports = spends.reduce((sum, s) => sum + (s.lamports ?? 0), 0);
    // The reason is bounded where it is stored (an audit summary): it counts them and names the newest; the log
    // names every one.
    const reason = `failover check: ${spends.length} landed transaction(s) of this key, ${lamports} lamports, have no entry in the ledger after a failover (newest ${spends[0]?.signature ?? '?'}; all in the log): reservations lost with the former primary's last commits, or spends this signer did not make; the key's usage lacks them, and it stays halted until an operator compares its on-chain spend with key_show and resumes it`;
    const written = await deps.tripwire.halts.halt({
      key: key.name,
      reason,
      by: 'signer (failover check)',
      ts: nowSeconds(),
    });
    deps.tripwire.log.error(
      {
        key: key.name,
        signatures: spends.map((s) => s.signature),
        lamports: spends.map((s) => s.lamports),
        halt_recorded: written.recorded,
      },
      'failover check: landed spends with no ledger entry; the key is halted',
    );
    deps.tripwire.observer?.alert({
      kind: 'spend_over_reservation',
      key: key.name,
      signature: spends[0]?.signature ?? null,
      detail: reason,
    });
  }
  return found;
}

export interface FailoverWatch {
  /** Stops the checks still due and waits for one running. */
  close(): Promise<void>;
}

/**
 * Runs the check each time the ledger reports a failover: at once, and again once every sign in flight at it has
 * ended (orphanAfterMs). Nothing runs for a ledger that has no failover (SQLite, one server).
 */
export function watchFailovers(
  deps: FailoverSpendDeps & {
    ledger: Pick<Ledger, 'signEntriesForKey' | 'onFailover'>;
    keys: () => readonly KeyConfig[];
  },
): FailoverWatch {
  const timers = new Set<NodeJS.Timeout>();
  let running: Promise<unknown> = Promise.resolve();
  let closed = false;
  const check = (timeline: number, failoverMs: number): void => {
    if (closed) return;
    running = running
      .then(() => checkSpendsAfterFailover(deps, deps.keys(), failoverMs))
      .then((found) =>
        deps.tripwire.log.info(
          { timeline, unrecorded: found.length, keys: [...new Set(found.map((f) => f.key))] },
          'failover check: landed transactions compared with the ledger',
        ),
      )
      .catch((e: unknown) =>
        deps.tripwire.log.error(
          { timeline, err: errorMessage(e) },
          'failover check could not read the chain or the ledger; compare the keys’ on-chain spend with key_show',
        ),
      );
  };
  deps.ledger.onFailover?.((timeline) => {
    const failoverMs = Date.now();
    check(timeline, failoverMs);
    const later = setTimeout(() => {
      timers.delete(later);
      check(timeline, failoverMs);
    }, orphanAfterMs(deps.timings));
    later.unref();
    timers.add(later);
  });
  return {
    async close() {
      closed = true;
      for (const t of timers) clearTimeout(t);
      await running;
    },
  };
}
