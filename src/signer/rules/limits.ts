/**
 * The key's rate, per-transaction, fee and daily caps compared with its usage (and, at the cap gate, this
 * transaction's reservation: what the simulation says the key loses, fee included).
 */
import type { KeyConfig } from '../../config/types';
import type { KeyUsage } from '../../ledger/types';
import { refusal, type Refusal } from '../refusals';
import type { CompiledMessage } from '../compile';
import { feeBound } from './fee-bound';

export function limitsRefusal(key: KeyConfig, usage: KeyUsage, reservation: number | null): Refusal | null {
  if (usage.signsLastMinute >= key.rate_limit_per_minute) {
    return refusal('rate_limit', `rate limit: ${usage.signsLastMinute} signs in the last minute`, {
      signs_last_minute: usage.signsLastMinute,
      cap: key.rate_limit_per_minute,
    });
  }
  if (usage.spent24h >= key.daily_lamport_cap) {
    return refusal(
      'per_day_cap',
      `daily cap: ${usage.spent24h} of ${key.daily_lamport_cap} lamports spent or reserved in 24 h`,
      { spent: usage.spent24h, cap: key.daily_lamport_cap },
    );
  }
  if (reservation === null) return null;
  const perTx = key.per_tx_lamports ?? null;
  if (perTx !== null && reservation > perTx) {
    return refusal(
      'per_tx_cap',
      `per-transaction cap: this transaction costs the key ${reservation} lamports, fee included, more than ${perTx}`,
      { requested: reservation, cap: perTx },
    );
  }
  if (usage.spent24h + reservation > key.daily_lamport_cap) {
    return refusal(
      'per_day_cap',
      `daily cap: ${usage.spent24h} lamports spent or reserved in 24 h, plus ${reservation} for this transaction, exceeds ${key.daily_lamport_cap}`,
      { spent: usage.spent24h, requested: reservation, cap: key.daily_lamport_cap },
    );
  }
  return null;
}

/** The fee cap, from the message alone: checked before anything is simulated. */
export function feeRefusal(key: KeyConfig, msg: CompiledMessage): Refusal | null {
  const cap = key.max_fee_lamports ?? null;
  if (cap === null) return null;
  const fee = feeBound(msg);
  if (fee.total <= cap) return null;
  return refusal(
    'fee_cap',
    `fee cap: this transaction may pay ${fee.total} lamports in fees (${fee.base} base + ${fee.priority} priority from its ComputeBudget instructions), more than max_fee_lamports ${cap}; lower the compute unit price or limit`,
    { requested: fee.total, cap },
  );
}

/** What is left of the daily cap once `spend` is counted (never below 0). */
export function remainingDaily(key: KeyConfig, usage: KeyUsage, spend: number): number {
  return Math.max(0, key.daily_lamport_cap - usage.spent24h - spend);
}
