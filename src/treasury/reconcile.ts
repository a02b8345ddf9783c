/**
 * Reconciliation of a treasury's allowances with the ledger (docs/treasury.md). Each pass reads every treasury
 * account's delegated amount. Between two passes the allowance may only fall by what the signer itself spent of
 * that mint: the sign intents written after the last pass, and those still without a final entry then (their
 * transactions may have landed after it); anything lower is a spend the signer did not make: the key's file or HSM
 * is being used elsewhere. The key is halted and a `treasury.mismatch` notification raised. A higher allowance is
 * the owner's refill and is taken as the new baseline.
 *
 * The last pass is the ledger's, not the process's: each pass stores, per account, the allowance it read and the
 * head of the chain it read the key's entries up to before it read the chain (a treasury baseline), and the next
 * pass, in this process, after a restart or in another replica, judges against that. "After the last pass" is then a
 * chain position, not a time: an intent is the signer's spend since the baseline when it comes after that position,
 * or comes before it without its final entry there. So a spend made while no signer ran is judged by the first
 * pass after, and the signer's own spends across a restart are counted as its own. Only an account with no baseline
 * (a new ledger, an account newly listed, a delegate approved again after a change) has its first pass taken as is.
 *
 * The comparison is per account: a sign entry's token figure says what the key spent as delegate from each account
 * (`delegated`). An intent without it (written before figures said so, or a spend from the key's own accounts of
 * the same mint) lowers the expectation by its mint's whole spend, so it can hide a foreign spend of that size but
 * never halt a key wrongly.
 *
 * The same read tells whether a refill is due (src/treasury/status.ts): an allowance below `refill_below_percent` of
 * the next period's plan raises `treasury.refill_due`, once per account and UTC day. Not for a halted-by-this-pass
 * or handed-over account: a refill then would give whoever holds the key more.
 */
import type { KeyConfig, PricesConfig } from '../config/types';
import type { AuditLog, HaltRecord, SequencedEntry, TreasuryBaseline, TreasuryBaselines } from '../ledger/types';
import type { NotificationEvent } from '../notify/events';
import type { Notifier } from '../notify/outbox';
import type { AccountsReader } from './read';
import { treasuryRefillDue } from './refill-due';
import { treasuryStatus } from './status';

/**
 * How far before the baseline's pass a pass reads the key's entries: an intent still in flight then (a blockhash
 * lives about 60 to 90 s) is within it.
 */
export const LANDING_MARGIN_SECONDS = 120;

/** What the last pass read of one account: what the next is judged against. */
export interface Observation {
  delegatedAmount: bigint;
}

export type AccountVerdict =
  | { kind: 'ok'; account: string; delegatedAmount: bigint }
  | { kind: 'first_seen'; account: string; delegatedAmount: bigint }
  | { kind: 'delegate_changed'; account: string; delegate: string | null }
  | { kind: 'mismatch'; account: string; mint: string; expected: bigint; actual: bigint };

/** One account: what the chain says against what the last pass and the signer's spends since predict. */
export function judgeAllowance(
  last: Observation | undefined,
  chain: { account: string; mint: string; delegate: string | null; delegatedAmount: bigint },
  keyPubkey: string,
  signerSpentSince: bigint,
): AccountVerdict {
  if (chain.delegate !== keyPubkey)
    return { kind: 'delegate_changed', account: chain.account, delegate: chain.delegate };
  if (last === undefined) return { kind: 'first_seen', account: chain.account, delegatedAmount: chain.delegatedAmount };
  const expected = last.delegatedAmount - signerSpentSince;
  if (chain.delegatedAmount < expected) {
    return { kind: 'mismatch', account: chain.account, mint: chain.mint, expected, actual: chain.delegatedAmount };
  }
  return { kind: 'ok', account: chain.account, delegatedAmount: chain.delegatedAmount };
}

export interface ReconcilerDeps {
  keys: () => readonly KeyConfig[];
  chain: AccountsReader;
  audit: Pick<AuditLog, 'sequencedSignEntries'>;
  /** Where the baselines live: the ledger, so restarts and replicas judge against the last pass of any of them. */
  baselines: TreasuryBaselines;
  /** Halts a key as an operator's `halt` does (the signer's halt book). */
  halts: { halt(record: HaltRecord): Promise<unknown> };
  notify: Notifier;
  now: () => number;
  /** The prices a dollar-sized plan needs (the config's `prices`); absent: plans are sized by per_day only. */
  prices?: () => PricesConfig | undefined;
}

export interface TreasuryReconciler {
  /** One pass over every treasury key; the verdicts, by key. */
  reconcile(): Promise<{ key: string; verdicts: AccountVerdict[] }[]>;
}

/**
 * The key's intents (by signature) that had a final entry at chain position `seq` (sign and sign_only both end in
 * a `sign` entry): their transactions had landed or ended when the baseline's pass read the ledger, so the allowance
 * it read then already showed them. Every other intent is a spend since.
 */
function settledAt(entries: readonly SequencedEntry[], seq: number): Set<string> {
  const upTo = entries.filter((e) => e.seq <= seq).map((e) => e.entry);
  const finals = new Set(upTo.filter((e) => e.command === 'sign').map((e) => e.signature));
  return new Set(
    upTo
      .filter((e) => e.command === 'sign-intent' && e.signature !== null && finals.has(e.signature))
      .map((e) => e.signature as string),
  );
}

/**
 * What the key's intents not settled at the baseline reserved of token account `account` (base units, positive).
 * A figure that says which delegated accounts it spent from counts that account's part only; one that does not (an
 * entry written before figures said so, or a spend from the key's own accounts) counts its mint's whole spend, which
 * loosens the comparison and never halts wrongly.
 */
function spentSince(entries: readonly SequencedEntry[], baseline: TreasuryBaseline): bigint {
  const settled = settledAt(entries, baseline.seq);
  let spent = 0n;
  const out = (change: string): bigint => (BigInt(change) < 0n ? -BigInt(change) : 0n);
  for (const { entry: e } of entries) {
    if (e.command !== 'sign-intent' || e.signature === null || settled.has(e.signature)) continue;
    for (const t of e.tokens ?? []) {
      if (t.mint !== baseline.mint) continue;
      if (t.delegated === undefined) spent += out(t.change);
      else for (const d of t.delegated) if (d.account === baseline.account) spent += out(d.change);
    }
  }
  return spent;
}

export function treasuryMismatch(
  key: string,
  v: Extract<AccountVerdict, { kind: 'mismatch' }>,
  ts: number,
): NotificationEvent {
  return {
    type: 'treasury.mismatch',
    timestamp: new Date(ts * 1000).toISOString(),
    data: {
      key,
      account: v.account,
      mint: v.mint,
      expected_allowance: v.expected.toString(),
      chain_allowance: v.actual.toString(),
      unexplained: (v.expected - v.actual).toString(),
    },
  };
}

export function createTreasuryReconciler(deps: ReconcilerDeps): TreasuryReconciler {
  return {
    async reconcile() {
      const out: { key: string; verdicts: AccountVerdict[] }[] = [];
      for (const key of deps.keys()) {
        if (key.treasury === undefined) continue;
        const ts = deps.now();
        // A baseline read for another pubkey (the key's name now holds another key) says nothing of this one.
        const stored = new Map((await deps.baselines.treasuryBaselines(key.name)).map((b) => [b.account, b]));
        const judged = [...stored.values()].filter((b) => b.delegate === key.pubkey);
        // The ledger before the chain: an intent that lands between the two reads counts as a spend after this
        // pass, which loosens the next one by its amount and never halts wrongly.
        const oldest = Math.min(ts, ...judged.map((b) => b.ts));
        const { head, entries } = await deps.audit.sequencedSignEntries(key.name, oldest - LANDING_MARGIN_SECONDS);
        const status = await treasuryStatus(deps.chain, key, deps.prices?.());
        const verdicts: AccountVerdict[] = [];
        for (const a of status?.accounts ?? []) {
          const s = a.chain;
          if (s === null) continue;
          const prev = stored.get(s.account) ?? null;
          const last = prev !== null && prev.delegate === key.pubkey && prev.mint === s.mint ? prev : undefined;
          const spent = last === undefined ? 0n : spentSince(entries, last);
          const v = judgeAllowance(last && { delegatedAmount: last.amount }, s, key.pubkey, spent);
          verdicts.push(v);
          if (v.kind === 'delegate_changed') {
            if (prev !== null) await deps.baselines.dropTreasuryBaseline(prev);
            continue;
          }
          if (v.kind === 'mismatch') {
            const reason = `treasury: the allowance of token account ${v.account} fell to ${v.actual} base units of ${v.mint}, below the ${v.expected} the signer's own spends leave; a spend the signer did not make (the key may be in other hands)`;
            await deps.halts.halt({ key: key.name, reason, by: 'signer (treasury reconciliation)', ts });
            await deps.notify.emit(treasuryMismatch(key.name, v, ts));
          }
          // Only once the halt is written: a pass that fails before it leaves the baseline where the spend shows.
          // Another pass (a replica's) that moved the row since it was read wins: this verdict was judged against
          // the row as read, so it stands either way, and the stored row stays the newer pass's.
          await deps.baselines.moveTreasuryBaseline(prev, {
            key: key.name,
            account: s.account,
            mint: s.mint,
            delegate: key.pubkey,
            amount: s.delegatedAmount,
            ts,
            seq: head,
          });
          const due = v.kind === 'ok' || v.kind === 'first_seen' ? a.refillDue : false;
          const note = due ? treasuryRefillDue(key.name, { ...a, chain: s }, ts) : null;
          if (note !== null) await deps.notify.emit(note);
        }
        out.push({ key: key.name, verdicts });
      }
      return out;
    },
  };
}
