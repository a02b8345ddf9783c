/**
 * One key's usage kept up to date entry by entry: signs in the last minute, lamports and each mint's base units
 * spent or reserved in the last 24 h, and what each other account received of lamports and each other owner of
 * each mint. Reading it costs the same
 * however many entries the key wrote today: every entry is folded in once, when it is new, and taken out once,
 * when it leaves the window. This file is the rule of how entries count (limits.ts and token-usage.ts fold their
 * entries through it, so there is one rule):
 *
 * - every `sign-intent` (whatever became of it) and every `sign-message` with outcome `signed` counts towards the
 *   rate, from its own time;
 * - an intent reserves its balance change (or, when it has no figure, counts one unbounded spend, which the policy
 *   charges as a whole daily cap) and its token figures from its own time until its final entry (matched by signature) arrives; an intent that never gets one (the
 *   process died) keeps its reservation for the whole window;
 * - a final `confirmed`/`failed` counts, from its own time, its own balance change and token figures when it has
 *   them, else what its intent reserved; a final `unknown` (or `expired`) counts what its intent reserved; any other
 *   final was never sent and counts nothing;
 * - a final finds its intent only when the intent was written at most a day before it, and what it counts is fixed
 *   when it is written; without an intent, it counts as unbounded (its spend cannot be bounded otherwise);
 * - the lamports an intent pays other accounts (its `lamport_credits`) count like its token figures: reserved by the
 *   intent, then counted by a final `confirmed`, `unknown` or `expired` from the final's time; a final `failed`
 *   paid no one (a failed transaction moves nothing but its fee);
 * - an intent's dollar value (its `usd_micros`, valued at sign time) is reserved by the intent and counted by any
 *   final that counts its intent's reservation or figures (`confirmed`, `failed`, `unknown`, `expired`), from the
 *   final's time: the recorded value, never re-priced, and a failed sign's too (its fee was paid; the value is an
 *   upper bound); a final that records a value of its own (the tripwire found the landing worth more, at the
 *   intent's recorded prices: signer/flow/tripwire.ts) counts that instead. An entry without one counts no dollars.
 */
import type { AuditEntry, TokenFigure, TokenUsage, Usage } from './types';

export const RATE_WINDOW_S = 60;
export const SPEND_WINDOW_S = 86_400;
/** How long before its final an intent may have been written and still be matched to it. */
const INTENT_REACH_S = SPEND_WINDOW_S;
/** Entries older than this (before `now`) can no longer change a key's usage: a book is loaded from here. */
export const USAGE_HORIZON_S = SPEND_WINDOW_S + INTENT_REACH_S;

/** spend(delta): what a balance change cost the key; a gain costs nothing. */
export function spendOf(delta: number): number {
  return delta < 0 ? -delta : 0;
}

/** What one entry holds against the spend window: lamports, or one unbounded spend where no figure bounds it. */
interface Charge {
  ts: number;
  lamports: number;
  unbounded: number;
  tokens: TokenFigure[];
  credits: Credit[];
  usdMicros: bigint;
  /** False once it left the window, or its intent's final took its place. */
  live: boolean;
  /**
   * Finals of the same second share one charge (a final's charge is never taken back before it leaves the window),
   * so a busy key's day costs one charge a second, not one a sign.
   */
  shared: boolean;
}

type Credit = NonNullable<AuditEntry['lamport_credits']>[number];

interface MintTally {
  spent: bigint;
  /** Live charges that name the mint (it is listed while any does, as a fresh count would list it). */
  refs: number;
  received: Map<string, { amount: bigint; refs: number }>;
}

/** Items kept in order of time, taken off the front as the window moves; almost every insert is at the end. */
class ByTime<T extends { ts: number }> {
  private items: T[] = [];
  private head = 0;

  insert(item: T): void {
    let i = this.items.length;
    while (i > this.head && (this.items[i - 1]?.ts ?? -Infinity) > item.ts) i--;
    this.items.splice(i, 0, item);
  }

  /** Takes off every item older than `cutoff`, oldest first, handing each to `each`. */
  expire(cutoff: number, each: (item: T) => void = () => undefined): void {
    for (let item = this.items[this.head]; item !== undefined && item.ts < cutoff; item = this.items[this.head]) {
      this.head++;
      each(item);
    }
    // Drop the consumed front now and then, so the array does not grow for ever.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }

  get last(): T | undefined {
    return this.items.length > this.head ? this.items[this.items.length - 1] : undefined;
  }

  get size(): number {
    return this.items.length - this.head;
  }
}

export class UsageBook {
  private readonly rate = new ByTime<{ ts: number }>();
  private readonly charges = new ByTime<Charge>();
  /** Intents with no final yet, by signature: their charge, until the final replaces it. */
  private readonly open = new Map<string, { intent: AuditEntry; charge: Charge }>();
  private lamports = 0;
  private unbounded = 0;
  private usdMicros = 0n;
  private readonly mints = new Map<string, MintTally>();
  /** Lamports each other account received, with the live charges that name it. */
  private readonly received = new Map<string, { lamports: number; refs: number }>();
  private rateCutoff = -Infinity;
  private spendCutoff = -Infinity;

  /** Folds in the key's next entry (chain order); entries of other commands are ignored. */
  add(e: AuditEntry): void {
    if (e.command === 'sign-message') {
      if (e.outcome === 'signed') this.countRate(e.ts);
    } else if (e.command === 'sign-intent') {
      this.countRate(e.ts);
      const charge = this.charge(e.ts, reservation(e), e.tokens ?? [], e.lamport_credits ?? [], usdOf(e), false);
      if (e.signature !== null) this.open.set(e.signature, { intent: e, charge });
    } else if (e.command === 'sign') {
      const opened = e.signature === null ? undefined : this.open.get(e.signature);
      if (opened && e.signature !== null) {
        this.open.delete(e.signature);
        this.drop(opened.charge);
      }
      const intent = opened && opened.intent.ts >= e.ts - INTENT_REACH_S ? opened.intent : undefined;
      const counted = finalCharge(e, intent);
      // A final records a dollar value of its own only when its landing was worth more than its intent reserved.
      const usd = typeof e.usd_micros === 'string' ? usdOf(e) : usdOf(intent);
      if (counted) this.charge(e.ts, counted.amount, counted.tokens, counted.credits, usd, true);
    }
  }

  /** True while an intent with this signature has no final entry: the same transaction is in flight. */
  inFlight(signature: string): boolean {
    return this.open.has(signature);
  }

  /** The usage at `now` (unix seconds). Entries that left the window stay out: ask a new book about an earlier time. */
  usage(now: number): Usage {
    this.advance(now);
    const tokens: TokenUsage = new Map();
    for (const [mint, t] of this.mints) {
      const received = new Map<string, bigint>();
      for (const [owner, r] of t.received) received.set(owner, r.amount);
      tokens.set(mint, { spent: t.spent, received });
    }
    const received = new Map<string, number>();
    for (const [address, r] of this.received) received.set(address, r.lamports);
    return {
      signsLastMinute: this.rate.size,
      lamports: this.lamports,
      unbounded: this.unbounded,
      received,
      tokens,
      usdMicros: this.usdMicros,
    };
  }

  private advance(now: number): void {
    this.rateCutoff = Math.max(this.rateCutoff, now - RATE_WINDOW_S);
    this.spendCutoff = Math.max(this.spendCutoff, now - SPEND_WINDOW_S);
    this.rate.expire(this.rateCutoff);
    this.charges.expire(this.spendCutoff, (c) => this.drop(c));
    // An intent this old can no longer be matched by a final that still counts.
    for (const [signature, { intent }] of this.open) if (intent.ts < now - USAGE_HORIZON_S) this.open.delete(signature);
  }

  private countRate(ts: number): void {
    if (ts >= this.rateCutoff) this.rate.insert({ ts });
  }

  private charge(
    ts: number,
    amount: Amount,
    tokens: readonly TokenFigure[],
    credits: readonly Credit[],
    usdMicros: bigint,
    shared: boolean,
  ): Charge {
    const c: Charge = {
      ts,
      ...amount,
      tokens: [...tokens],
      credits: [...credits],
      usdMicros,
      live: ts >= this.spendCutoff,
      shared,
    };
    if (!c.live) return c;
    this.tally(c, 1);
    const last = this.charges.last;
    if (shared && last?.shared === true && last.live && last.ts === ts) {
      last.lamports += c.lamports;
      last.unbounded += c.unbounded;
      last.tokens.push(...c.tokens);
      last.credits.push(...c.credits);
      last.usdMicros += c.usdMicros;
      return last;
    }
    this.charges.insert(c);
    return c;
  }

  private drop(c: Charge): void {
    if (!c.live) return;
    c.live = false;
    this.tally(c, -1);
  }

  private tally(c: Charge, sign: 1 | -1): void {
    this.lamports += sign * c.lamports;
    this.unbounded += sign * c.unbounded;
    const s = BigInt(sign);
    this.usdMicros += s * c.usdMicros;
    for (const credit of c.credits) {
      const r = this.received.get(credit.address) ?? { lamports: 0, refs: 0 };
      r.lamports += sign * credit.lamports;
      r.refs += sign;
      if (r.refs === 0) this.received.delete(credit.address);
      else this.received.set(credit.address, r);
    }
    for (const f of c.tokens) {
      const t: MintTally = this.mints.get(f.mint) ?? { spent: 0n, refs: 0, received: new Map() };
      const change = BigInt(f.change);
      if (change < 0n) t.spent -= s * change;
      t.refs += sign;
      for (const credit of f.credits) {
        const r = t.received.get(credit.owner) ?? { amount: 0n, refs: 0 };
        r.amount += s * BigInt(credit.amount);
        r.refs += sign;
        if (r.refs === 0) t.received.delete(credit.owner);
        else t.received.set(credit.owner, r);
      }
      if (t.refs === 0) this.mints.delete(f.mint);
      else this.mints.set(f.mint, t);
    }
  }
}

interface Amount {
  lamports: number;
  unbounded: number;
}

/** An entry's recorded dollar value (micro-dollars), 0 where it has none. */
function usdOf(e: AuditEntry | undefined): bigint {
  const v = e?.usd_micros ?? null;
  return v !== null && /^\d+$/.test(v) ? BigInt(v) : 0n;
}

/** What an intent holds: its figure, or one unbounded spend when it carries none. */
function reservation(intent: AuditEntry | undefined): Amount {
  if (intent === undefined || intent.balance_change === null) return { lamports: 0, unbounded: 1 };
  return { lamports: spendOf(intent.balance_change), unbounded: 0 };
}

function finalCharge(
  e: AuditEntry,
  intent: AuditEntry | undefined,
): { amount: Amount; tokens: readonly TokenFigure[]; credits: readonly Credit[] } | null {
  switch (e.outcome) {
    case 'confirmed':
    case 'failed':
      return {
        amount: e.balance_change !== null ? { lamports: spendOf(e.balance_change), unbounded: 0 } : reservation(intent),
        tokens: e.tokens ?? intent?.tokens ?? [],
        credits: e.outcome === 'confirmed' ? (intent?.lamport_credits ?? []) : [],
      };
    case 'unknown':
    case 'expired':
      return { amount: reservation(intent), tokens: intent?.tokens ?? [], credits: intent?.lamport_credits ?? [] };
    default:
      return null; // never sent
  }
}

/** The usage of `entries` (one key's, in chain order) at `now`, folded into a fresh book. */
export function usageOf(entries: readonly AuditEntry[], now: number): Usage {
  const book = new UsageBook();
  for (const e of entries) book.add(e);
  return book.usage(now);
}
