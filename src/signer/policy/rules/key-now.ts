/**
 * A reload while the operators decided applies to what they decided: the key must still be configured and not set
 * to deny, and a message's key must still sign messages.
 */
import type { KeyConfig } from '../../../config/types';
import { refusal, type Refusal } from '../../refusals';
import { messagesOffRefusal } from './message-key';

/** What every sign (a transaction or a message) needs of its key in the policy in force after the decision. */
export function keyNowRefusal(began: KeyConfig, current: KeyConfig | null): Refusal | null {
  if (current === null) {
    return refusal(
      'key_not_authorized',
      `key "${began.name}" was removed from the policy (a reload) while its operators decided: nothing was signed`,
    );
  }
  if (current.approval === 'deny') {
    return refusal('key_set_to_deny', `key "${current.name}" was set to deny (a reload) while its operators decided`);
  }
  return null;
}

/** A message's key after the decision: as keyNowRefusal, and it must still sign messages. */
export function messageKeyNowRefusal(began: KeyConfig, current: KeyConfig | null): Refusal | null {
  return keyNowRefusal(began, current) ?? messagesOffRefusal(current ?? began, 'after approval');
}
