/**
 * A key's token spending in the last 24 h, per mint, from its sign entries' token figures: counted by the same
 * rules as lamports (limits.ts), so a reservation holds until a final entry says what happened:
 * - a final `confirmed`/`failed` counts its own figures when it has them (a failed transaction moved no tokens and
 *   says so with an empty list), else its intent's;
 * - a final `unknown` (or `expired`) counts its intent's figures;
 * - any other final (refused, simulation_failed, signed_expired, …) moved nothing;
 * - an intent with no final yet counts its figures.
 * What each other owner received is summed the same way, for the per-destination caps.
 */
import { SPEND_WINDOW_S } from './limits';
import type { AuditEntry, TokenFigure } from './types';

export interface MintUsage {
  /** Base units of the mint the key spent or reserved. */
  spent: bigint;
  /** Base units each other owner received or has reserved to receive. */
  received: Map<string, bigint>;
}

export type TokenUsage = Map<string, MintUsage>;

export function computeTokenUsage(entries: readonly AuditEntry[], now: number): TokenUsage {
  const since = now - SPEND_WINDOW_S;
  const intents = new Map<string, AuditEntry>();
  const finals = new Set<string>();
  for (const e of entries) {
    if (e.command === 'sign-intent' && e.signature !== null) intents.set(e.signature, e);
    else if (e.command === 'sign' && e.signature !== null) finals.add(e.signature);
  }
  const usage: TokenUsage = new Map();
  const add = (figures: readonly TokenFigure[] | null | undefined): void => {
    for (const f of figures ?? []) {
      const u = usage.get(f.mint) ?? { spent: 0n, received: new Map<string, bigint>() };
      const change = BigInt(f.change);
      if (change < 0n) u.spent += -change;
      for (const c of f.credits) u.received.set(c.owner, (u.received.get(c.owner) ?? 0n) + BigInt(c.amount));
      usage.set(f.mint, u);
    }
  };
  for (const e of entries) {
    if (e.ts < since) continue;
    if (e.command === 'sign-intent') {
      if (e.signature === null || !finals.has(e.signature)) add(e.tokens);
    } else if (e.command === 'sign') {
      const intent = e.signature !== null ? intents.get(e.signature) : undefined;
      if (e.outcome === 'confirmed' || e.outcome === 'failed') add(e.tokens ?? intent?.tokens);
      else if (e.outcome === 'unknown' || e.outcome === 'expired') add(intent?.tokens);
    }
  }
  return usage;
}
