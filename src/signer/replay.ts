/**
 * `policy replay`: the signs the audit log recorded, judged again under another policy from what the ledger holds
 * (no new simulation): the key still configured, the top-level programs allowed, the SOL caps on the recorded
 * balance change, and per mint the token policy, its caps and destinations on the recorded token figures. Caps
 * are counted over the replayed signs themselves in a sliding 24 h, as the new policy would have let them happen: a
 * sign it refuses adds nothing to what the next one sees. SOL destinations (`transfer_to`) are not in the ledger, so
 * they are not judged (docs/policy.md, "Replay").
 */
import type { ClusterProfile, KeyConfig } from '../config/types';
import { SPEND_WINDOW_S, spendOf } from '../ledger/usage-book';
import type { AuditEntry } from '../ledger/types';
import { allowedPrograms } from './rules/structural';

/** Final outcomes of signs that were signed: the ones a stricter policy could have stopped. */
export const SIGNED_OUTCOMES: ReadonlySet<string> = new Set([
  'confirmed',
  'failed',
  'unknown',
  'signed',
  'signed_expired',
]);

export interface ReplayRow {
  ts: number;
  key: string;
  signature: string | null;
  was: string;
  /** null: the new policy allows it; else the check and why. */
  refusal: { check: string; message: string } | null;
}

interface Spend {
  ts: number;
  lamports: number;
  /** mint → base units spent; mint → owner → base units received. */
  tokens: Map<string, bigint>;
  credits: Map<string, Map<string, bigint>>;
}

function spendOfEntry(e: AuditEntry): Spend {
  const tokens = new Map<string, bigint>();
  const credits = new Map<string, Map<string, bigint>>();
  for (const f of e.tokens ?? []) {
    const change = BigInt(f.change);
    if (change < 0n) tokens.set(f.mint, -change);
    const byOwner = new Map<string, bigint>();
    for (const c of f.credits) byOwner.set(c.owner, (byOwner.get(c.owner) ?? 0n) + BigInt(c.amount));
    credits.set(f.mint, byOwner);
  }
  return { ts: e.ts, lamports: e.balance_change === null ? 0 : spendOf(e.balance_change), tokens, credits };
}

function judge(
  key: KeyConfig,
  cluster: ClusterProfile,
  e: AuditEntry,
  s: Spend,
  before: readonly Spend[],
): ReplayRow['refusal'] {
  const allowed = new Set(allowedPrograms(cluster, key));
  const program = e.programs.find((p) => !allowed.has(p));
  if (program !== undefined)
    return { check: 'programs', message: `calls ${program}, which the new policy does not allow` };
  const perTx = key.per_tx_lamports ?? null;
  if (perTx !== null && s.lamports > perTx)
    return {
      check: 'limits',
      message: `costs ${String(s.lamports)} lamports, more than per_tx_lamports ${String(perTx)}`,
    };
  const day = before.reduce((n, b) => n + b.lamports, 0);
  if (day + s.lamports > key.daily_lamport_cap)
    return {
      check: 'limits',
      message: `${String(day)} lamports in the 24 h before plus ${String(s.lamports)} exceeds daily_lamport_cap ${String(key.daily_lamport_cap)}`,
    };
  for (const [mint, amount] of s.tokens) {
    const policy = (key.tokens ?? []).find((t) => t.mint === mint);
    if (!policy)
      return {
        check: 'tokens',
        message: `spends ${amount.toString()} of mint ${mint}, which the new policy does not list`,
      };
    if (policy.per_tx !== null && amount > policy.per_tx)
      return {
        check: 'limits',
        message: `spends ${amount.toString()} of ${mint}, more than per_tx ${policy.per_tx.toString()}`,
      };
    const spent = before.reduce((n, b) => n + (b.tokens.get(mint) ?? 0n), 0n);
    if (spent + amount > policy.per_day)
      return {
        check: 'limits',
        message: `${spent.toString()} of ${mint} in the 24 h before plus ${amount.toString()} exceeds per_day ${policy.per_day.toString()}`,
      };
    for (const [owner, received] of s.credits.get(mint) ?? []) {
      if (owner === key.pubkey) continue;
      if (policy.destinations !== null && !policy.destinations.includes(owner))
        return { check: 'destinations', message: `pays ${owner} in ${mint}, not among the new policy's destinations` };
      const cap = policy.per_destination_per_day;
      const got = before.reduce((n, b) => n + (b.credits.get(mint)?.get(owner) ?? 0n), 0n);
      if (cap !== null && got + received > cap)
        return {
          check: 'limits',
          message: `${owner} received ${got.toString()} of ${mint} in the 24 h before plus ${received.toString()} exceeds per_destination_per_day ${cap.toString()}`,
        };
    }
  }
  return null;
}

/**
 * Judges the signed `entries` (final `sign` entries, chain order, from `since - 24 h` on so the first day's caps
 * see what came before) under `keys`; returns a row for each one at or after `since`.
 */
export function replaySigns(
  entries: readonly AuditEntry[],
  keys: readonly KeyConfig[],
  cluster: ClusterProfile,
  since: number,
): ReplayRow[] {
  const allowed = new Map<string, Spend[]>();
  const rows: ReplayRow[] = [];
  for (const e of entries) {
    if (e.command !== 'sign' || !SIGNED_OUTCOMES.has(e.outcome)) continue;
    const key = keys.find((k) => k.name === e.key);
    const s = spendOfEntry(e);
    const history = allowed.get(e.key) ?? [];
    const before = history.filter((b) => b.ts > e.ts - SPEND_WINDOW_S);
    const refusal: ReplayRow['refusal'] = key
      ? judge(key, cluster, e, s, before)
      : { check: 'authorized', message: `key ${e.key} is not in the new policy` };
    if (refusal === null) allowed.set(e.key, [...before, s]);
    if (e.ts >= since) rows.push({ ts: e.ts, key: e.key, signature: e.signature, was: e.outcome, refusal });
  }
  return rows;
}

/** `7d`, `24h`, `30m` or an ISO date → unix seconds; null when unreadable. */
export function parseSince(text: string, now: number): number | null {
  const m = /^(\d+)([dhm])$/.exec(text);
  if (m) return now - Number(m[1]) * ({ d: 86_400, h: 3_600, m: 60 } as const)[m[2] as 'd' | 'h' | 'm'];
  const t = Date.parse(text);
  return Number.isNaN(t) ? null : Math.floor(t / 1000);
}
