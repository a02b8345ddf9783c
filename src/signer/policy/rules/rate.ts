/** The rate limit: at `rate_limit_per_minute` signs in the last minute, the next one is refused. */
import type { KeyConfig } from '../../../config/types';
import type { KeyUsage } from '../../../ledger/types';
import { refusal, type Refusal } from '../../refusals';

export function rateRefusal(key: KeyConfig, usage: Pick<KeyUsage, 'signsLastMinute'>): Refusal | null {
  if (usage.signsLastMinute < key.rate_limit_per_minute) return null;
  return refusal('rate_limit', `rate limit: ${usage.signsLastMinute} signs in the last minute`, {
    signs_last_minute: usage.signsLastMinute,
    cap: key.rate_limit_per_minute,
  });
}
