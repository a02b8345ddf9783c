/**
 * Reconciliation of a treasury's allowances with the ledger (docs/treasury.md). Each pass reads every treasury
 * account's delegated amount. Between two passes the allowance may only fall by what the signer itself spent of
 * that mint: the sign intents written after the last pass, and those still without a final entry then (their
 * transactions may have landed after it); anything lower is a spend the signer did not make: the key's file or HSM is being used elsewhere. The key is
 * halted and a `treasury.mismatch` notification raised. A higher allowance is the owner's refill and is taken as
 * the new baseline.
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
import type { AuditLog, HaltRecord } from '../ledger/types';
import type { NotificationEvent } from '../notify/events';
import type { Notifier } from '../notify/outbox';
import type { AccountsReader } from './read';
import { treasuryRefillDue } from './refill-due';
import { treasuryStatus } from './status';

/**
 * How far before the previous pass a pass reads the key's entries: an intent still in flight then (a blockhash
 * lives about 60 to 90 s) is within it.
 */
export const LANDING_MARGIN_SECONDS = 120;

export interface Observation {
  ts: number;
  delegatedAmount: bigint;
  /**
   * The key's intents (by signature) that had a final entry when the pass read the ledger: their transactions
   * had landed or ended, so the allowance read then already showed them. Every other intent is a spend since.
   */
  settled: ReadonlySet<string>;
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
  audit: Pick<AuditLog, 'signEntriesForKey'>;
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

type Entries = Awaited<ReturnType<AuditLog['signEntriesForKey']>>;

/** The key's intents that have a final entry (sign and sign_only both end in a `sign` entry). */
function settledIntents(entries: Entries): Set<string> {
  const finals = new Set(entries.filter((e) => e.command === 'sign').map((e) => e.signature));
  return new Set(
    entries
      .filter((e) => e.command === 'sign-intent' && e.signature !== null && finals.has(e.signature))
      .map((e) => e.signature as string),
  );
}

/**
 * What the key's intents not settled at the last pass reserved of token account `account` (base units, positive).
 * A figure that says which delegated accounts it spent from counts that account's part only; one that does not (an
 * entry written before figures said so, or a spend from the key's own accounts) counts its mint's whole spend, which
 * loosens the comparison and never halts wrongly.
 */
function spentSince(entries: Entries, last: Observation, account: string, mint: string): bigint {
  let spent = 0n;
  const out = (change: string): bigint => (BigInt(change) < 0n ? -BigInt(change) : 0n);
  for (const e of entries) {
    if (e.command !== 'sign-intent' || e.signature === null || last.settled.has(e.signature)) continue;
    for (const t of e.tokens ?? []) {
      if (t.mint !== mint) continue;
      if (t.delegated === undefined) spent += out(t.change);
      else for (const d of t.delegated) if (d.account === account) spent += out(d.change);
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
  // Per process: a restart starts a new baseline (its first pass judges nothing), which the docs say.
  const seen = new Map<string, Observation>();
  return {
    async reconcile() {
      const out: { key: string; verdicts: AccountVerdict[] }[] = [];
      for (const key of deps.keys()) {
        if (key.treasury === undefined) continue;
        const ts = deps.now();
        // The ledger before the chain: an intent that lands between the two reads counts as a spend after this
        // pass, which loosens the next one by its amount and never halts wrongly.
        const oldest = Math.min(ts, ...[...seen].filter(([id]) => id.startsWith(`${key.name}/`)).map(([, o]) => o.ts));
        const entries = await deps.audit.signEntriesForKey(key.name, oldest - LANDING_MARGIN_SECONDS);
        const settled = settledIntents(entries);
        const status = await treasuryStatus(deps.chain, key, deps.prices?.());
        const verdicts: AccountVerdict[] = [];
        for (const a of status?.accounts ?? []) {
          const s = a.chain;
          if (s === null) continue;
          const id = `${key.name}/${s.account}`;
          const last = seen.get(id);
          const spent = last === undefined ? 0n : spentSince(entries, last, s.account, s.mint);
          const v = judgeAllowance(last, s, key.pubkey, spent);
          verdicts.push(v);
          if (v.kind === 'delegate_changed') {
            seen.delete(id);
            continue;
          }
          seen.set(id, { ts, delegatedAmount: s.delegatedAmount, settled });
          if (v.kind !== 'mismatch') {
            const due = a.refillDue ? treasuryRefillDue(key.name, { ...a, chain: s }, ts) : null;
            if (due !== null) await deps.notify.emit(due);
            continue;
          }
          const reason = `treasury: the allowance of token account ${v.account} fell to ${v.actual} base units of ${v.mint}, below the ${v.expected} the signer's own spends leave; a spend the signer did not make (the key may be in other hands)`;
          await deps.halts.halt({ key: key.name, reason, by: 'signer (treasury reconciliation)', ts });
          await deps.notify.emit(treasuryMismatch(key.name, v, ts));
        }
        out.push({ key: key.name, verdicts });
      }
      return out;
    },
  };
}
