/**
 * `policy replay`: the signs the audit log recorded, judged again under another policy from what the ledger holds
 * (no new simulation), by the engine's own rules: the key still configured, the top-level programs allowed, per
 * mint the token policy and its destinations on the recorded token figures, the rate and the SOL caps on the
 * recorded balance change, and the token caps. Rate and caps are counted over the replayed signs themselves (a
 * minute and a sliding 24 h), as the new policy would have let them happen: a sign it refuses adds nothing to what
 * the next one sees. The dollar caps judge each sign at the dollar value its intent recorded when it was signed (the
 * prices of that day, never re-priced); a sign whose intent recorded none (its key had no `usd` caps then) is not
 * judged in dollars, and its row says so. What the final entries do not hold is not judged: SOL destinations
 * (`transfer_to`) and their per-destination cap, the fee cap, token authority operations and the mints' state
 * (docs/policy.md, "Replay").
 */
import type { ClusterProfile, KeyConfig } from '../config/types';
import { spendOf, UsageBook } from '../ledger/usage-book';
import type { AuditEntry } from '../ledger/types';
import type { Refusal } from './refusals';
import { decide } from './policy/decide';
import type { Moves } from './policy/facts';
import { keyGoneRefusal } from './policy/rules/key';
import type { MintFlow } from './policy/rules/tokens';
import { formatUsd, type UsdMicros } from '../util/usd-amounts';

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
  /** The dollar value its intent recorded at sign time ("4.00"); null: it recorded none. */
  usd_value: string | null;
  /** null: the new policy allows it; else the engine's refusal (check, reason, message, figures). */
  refusal: Refusal | null;
}

/** One recorded sign as the rules see it: what it moved, the lamports it cost and its recorded dollars. */
interface Spend {
  lamports: number;
  moves: Moves;
  usd: UsdMicros | null;
}

function spendOfEntry(e: AuditEntry, usd: UsdMicros | null): Spend {
  const decimals = new Map<string, number | null>();
  const mints = (e.tokens ?? []).map((f): MintFlow => {
    decimals.set(f.mint, f.decimals);
    const credits = new Map<string, bigint>();
    for (const c of f.credits) credits.set(c.owner, (credits.get(c.owner) ?? 0n) + BigInt(c.amount));
    return { mint: f.mint, keyChange: BigInt(f.change), credits };
  });
  const lamports = e.balance_change === null ? 0 : spendOf(e.balance_change);
  return {
    lamports,
    // A sign recorded with no balance change is judged as costing nothing: what the ledger does not hold is not judged.
    moves: { balanceChange: -lamports, gains: [], mints, decimals: (mint) => decimals.get(mint) ?? null },
    usd,
  };
}

/** The dollar value an intent recorded, or null when it recorded none (or one the ledger would not hold). */
function recordedUsd(intent: AuditEntry | undefined): UsdMicros | null {
  const v = intent?.usd_micros ?? null;
  return v !== null && /^\d{1,30}$/.test(v) ? BigInt(v) : null;
}

/**
 * A sign the new policy allows, as the ledger's usage book counts it: an intent reserving what the sign moved from
 * its own time, for the whole window (replay has no finals to match it with), with the dollars it recorded at sign
 * time. It carries no lamport credits (the final entries replayed record none, so the SOL per-destination cap is not
 * replayed); a sign recorded with no balance change counts as costing nothing.
 */
function asIntent(e: AuditEntry, s: Spend): AuditEntry {
  return {
    ...e,
    command: 'sign-intent',
    signature: null,
    balance_change: -s.lamports,
    lamport_credits: [],
    usd_micros: s.usd === null ? null : s.usd.toString(),
  };
}

function judge(key: KeyConfig, cluster: ClusterProfile, e: AuditEntry, s: Spend, book: UsageBook): Refusal | null {
  const verdict = decide(key, {
    at: 'recorded',
    cluster,
    programs: e.programs,
    moves: s.moves,
    usd: s.usd,
    usage: book.usage(e.ts),
  });
  return verdict.outcome === 'refused' ? verdict.refusal : null;
}

/**
 * Judges the signed `entries` (final `sign` entries with their `sign-intent` entries, chain order, from
 * `since - 24 h` on so the first day's caps see what came before) under `keys`; returns a row for each final sign
 * at or after `since`. A final's dollar value is the one its intent (same key and signature) recorded.
 */
export function replaySigns(
  entries: readonly AuditEntry[],
  keys: readonly KeyConfig[],
  cluster: ClusterProfile,
  since: number,
): ReplayRow[] {
  // Per key, the signs the new policy allowed: the next one is judged on their usage, as the engine would read it.
  const books = new Map<string, UsageBook>();
  const intents = new Map<string, AuditEntry>();
  const rows: ReplayRow[] = [];
  for (const e of entries) {
    if (e.command === 'sign-intent' && e.signature !== null) intents.set(`${e.key} ${e.signature}`, e);
    if (e.command !== 'sign' || !SIGNED_OUTCOMES.has(e.outcome)) continue;
    const key = keys.find((k) => k.name === e.key);
    const usd = e.signature === null ? null : recordedUsd(intents.get(`${e.key} ${e.signature}`));
    const s = spendOfEntry(e, usd);
    const book = books.get(e.key) ?? new UsageBook();
    books.set(e.key, book);
    const refused = key ? judge(key, cluster, e, s, book) : keyGoneRefusal(e.key, 'is not in the new policy');
    if (refused === null) book.add(asIntent(e, s));
    if (e.ts >= since)
      rows.push({
        ts: e.ts,
        key: e.key,
        signature: e.signature,
        was: e.outcome,
        usd_value: usd === null ? null : formatUsd(usd),
        refusal: refused,
      });
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
