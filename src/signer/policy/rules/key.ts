/** The key itself: one the policy no longer (or never) names, and one set to deny, sign nothing. */
import type { KeyConfig } from '../../../config/types';
import { refusal, type Refusal } from '../../refusals';

export function keyGoneRefusal(name: string, why = 'is no longer in the policy'): Refusal {
  return refusal('key_not_authorized', `key "${name}" ${why}`);
}

export function denyRefusal(key: KeyConfig): Refusal | null {
  return key.approval === 'deny' ? refusal('key_set_to_deny', `key "${key.name}" is set to deny`) : null;
}
