/**
 * A key's usage computed from its audit entries: signs in the last minute and lamports spent or reserved in the
 * last 24 h. The engine compares these to the key's `rate_limit_per_minute` and `daily_lamport_cap`; this module
 * only counts.
 *
 * The rate counts `sign-intent` entries only, i.e. every attempt that was or may have been sent. Counting final
 * `sign` entries instead would count refusals too, so a retry storm (or a token refused for another key) would keep
 * a key locked out of its own budget. An intent is written for every send, and an orphan intent (the process
 * died) is itself an intent, so nothing that may have reached the chain escapes the count. A `sign-message` entry
 * with outcome `signed` is a signature handed out too (an off-chain message), so it counts like an intent; it
 * spends nothing.
 */
import type { AuditEntry } from './types';

export interface KeyUsage {
  signsLastMinute: number;
  spent24h: number;
}

export const RATE_WINDOW_S = 60;
export const SPEND_WINDOW_S = 86_400;

/** spend(delta): what a balance change cost the key; a gain costs nothing. */
export function spendOf(delta: number): number {
  return delta < 0 ? -delta : 0;
}

/**
 * `entries` are one key's entries (other commands are ignored), any order. `now` is unix seconds.
 *
 * Spent in 24 h:
 * - a final `confirmed`/`failed` counts the spend of its own balance_change when known, else the reservation of
 *   its intent (matched by signature), else the whole cap;
 * - a final `unknown` (or legacy `expired`) counts the reservation;
 * - any other final (refused, simulation_failed, …) was never sent and counts 0;
 * - an orphan intent (no signature, or no final with its signature) counts its reservation, or the whole cap
 *   when it has no figure.
 */
export function computeUsage(entries: AuditEntry[], now: number, dailyCap: number): KeyUsage {
  const rateSince = now - RATE_WINDOW_S;
  const spendSince = now - SPEND_WINDOW_S;

  const intentsBySignature = new Map<string, AuditEntry>();
  const finalSignatures = new Set<string>();
  for (const e of entries) {
    if (e.command === 'sign-intent' && e.signature !== null) intentsBySignature.set(e.signature, e);
    else if (e.command === 'sign' && e.signature !== null) finalSignatures.add(e.signature);
  }

  /** The intent's reservation, or the whole cap when there is no intent or it carries no figure. */
  const reservationFor = (intent: AuditEntry | undefined): number =>
    intent !== undefined && intent.balance_change !== null ? spendOf(intent.balance_change) : dailyCap;

  let signsLastMinute = 0;
  let spent24h = 0;
  for (const e of entries) {
    if (e.command === 'sign-message') {
      if (e.outcome === 'signed' && e.ts >= rateSince) signsLastMinute += 1;
    } else if (e.command === 'sign-intent') {
      if (e.ts >= rateSince) signsLastMinute += 1;
      const orphan = e.signature === null || !finalSignatures.has(e.signature);
      if (orphan && e.ts >= spendSince) spent24h += reservationFor(e);
    } else if (e.command === 'sign' && e.ts >= spendSince) {
      const intent = e.signature !== null ? intentsBySignature.get(e.signature) : undefined;
      switch (e.outcome) {
        case 'confirmed':
        case 'failed':
          spent24h += e.balance_change !== null ? spendOf(e.balance_change) : reservationFor(intent);
          break;
        case 'unknown':
        case 'expired':
          spent24h += reservationFor(intent);
          break;
        default:
          break; // never sent
      }
    }
  }
  return { signsLastMinute, spent24h };
}
