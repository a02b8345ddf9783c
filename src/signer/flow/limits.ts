/** The key's rate and daily cap compared with its usage (and, at the cap gate, this transaction's reservation). */
import type { KeyConfig } from '../../config/types';
import type { KeyUsage } from '../../ledger/limits';
import type { Refusal } from '../checks';

export function limitsRefusal(key: KeyConfig, usage: KeyUsage, reservation: number | null): Refusal | null {
  if (usage.signsLastMinute >= key.rate_limit_per_minute) {
    return { check: 'limits', message: `rate limit: ${usage.signsLastMinute} signs in the last minute` };
  }
  if (usage.spent24h >= key.daily_lamport_cap) {
    return {
      check: 'limits',
      message: `daily cap: ${usage.spent24h} of ${key.daily_lamport_cap} lamports spent or reserved in 24 h`,
    };
  }
  if (reservation !== null && usage.spent24h + reservation > key.daily_lamport_cap) {
    return {
      check: 'limits',
      message: `daily cap: ${usage.spent24h} lamports spent or reserved in 24 h, plus ${reservation} for this transaction, exceeds ${key.daily_lamport_cap}`,
    };
  }
  return null;
}
