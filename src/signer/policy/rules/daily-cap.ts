/**
 * The daily lamport cap (`daily_lamport_cap`): what the key spent or reserved in 24 h, plus this transaction's
 * reservation, may reach the cap but not pass it. The ledger counts the usage as data; an entry no figure bounds
 * (an intent written without one, a final without its intent) counts here as a whole daily cap, so such an entry
 * alone refuses every spend (docs/policy.md, "Limits in detail").
 */
import type { KeyConfig } from '../../../config/types';
import type { KeyUsage } from '../../../ledger/types';
import { refusal, type Refusal } from '../../refusals';

/**
 * Lamports spent or reserved in 24 h, each unbounded entry counted as `wholeCap` (the key's cap; where several
 * policies are judged at once, the smallest of theirs, so such an entry counts least and still refuses).
 */
export function spentLamports(usage: Pick<KeyUsage, 'lamports' | 'unbounded'>, wholeCap: number): number {
  return usage.lamports + usage.unbounded * wholeCap;
}

/**
 * The cap against the usage, and once the simulation has said it, against the usage plus `reservation` (null:
 * before the simulation, only whether the cap is already used up). `spent` as spentLamports counts it.
 */
export function dailyCapRefusal(key: KeyConfig, spent: number, reservation: number | null): Refusal | null {
  const cap = key.daily_lamport_cap;
  if (spent >= cap) {
    return refusal('per_day_cap', `daily cap: ${spent} of ${cap} lamports spent or reserved in 24 h`, { spent, cap });
  }
  if (reservation === null || spent + reservation <= cap) return null;
  return refusal(
    'per_day_cap',
    `daily cap: ${spent} lamports spent or reserved in 24 h, plus ${reservation} for this transaction, exceeds ${cap}`,
    { spent, requested: reservation, cap },
  );
}

/** What is left of the daily cap once `spend` more counts (never below 0). */
export function remainingDaily(key: KeyConfig, spent: number, spend: number): number {
  return Math.max(0, key.daily_lamport_cap - spent - spend);
}
