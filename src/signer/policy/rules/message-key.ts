/** A message is signed by the key it names, and only by a key whose config lets it sign messages. */
import type { KeyConfig } from '../../../config/types';
import { refusal, type Refusal } from '../../refusals';

/** `signer` null: the payload names no signer, the key was chosen by name. */
export function messageSignerRefusal(key: KeyConfig, signer: string | null): Refusal | null {
  if (signer === null || signer === key.pubkey) return null;
  return refusal('message_signer_not_key', `payload signer ${signer} is not key "${key.name}" (${key.pubkey})`, {
    account: signer,
  });
}

/** `when`: before the sign asks, or after its approval (a reload turned `sign_messages` off meanwhile). */
export function messagesOffRefusal(key: KeyConfig, when: 'before' | 'after approval'): Refusal | null {
  if (key.sign_messages === true) return null;
  return refusal(
    'messages_not_allowed',
    when === 'before'
      ? `key "${key.name}" does not sign messages (sign_messages is off in its config; an operator can turn it on)`
      : `key "${key.name}" no longer signs messages (a reload turned it off)`,
  );
}
