/**
 * The fee payer is the key: the payload's (before it is prepared; payload v2 may name another when the key is one
 * of its signers, the source says so) and the prepared message's first account.
 */
import type { KeyConfig } from '../../../config/types';
import type { CompiledMessage } from '../../compile';
import { refusal, type Refusal } from '../../refusals';

export function payloadFeePayerRefusal(key: KeyConfig, feePayer: string, foreignAllowed: boolean): Refusal | null {
  if (feePayer === key.pubkey || foreignAllowed) return null;
  return refusal('fee_payer_not_key', `payload fee payer ${feePayer} is not key "${key.name}" (${key.pubkey})`, {
    fee_payer: feePayer,
  });
}

export function feePayerRefusal(key: KeyConfig, msg: CompiledMessage, foreignFeePayer: string | null): Refusal | null {
  const payer = msg.accountKeys[0];
  if (payer === undefined) return refusal('no_accounts', 'message has no accounts');
  if (payer !== key.pubkey && payer !== foreignFeePayer)
    return refusal('fee_payer_not_key', `fee payer ${payer} is not the signing key ${key.pubkey}`, {
      fee_payer: payer,
    });
  return null;
}
