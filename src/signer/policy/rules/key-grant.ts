/**
 * Which keys a bearer token may use: a name or a fee payer not among its keys gets the same answer whether or not
 * such a key exists, so a token can neither probe key names nor map a pubkey to a name (key-access.ts chooses).
 */
import { formatMessage } from '../../../util/errors/messages';
import { refusal, type Refusal } from '../../refusals';

/** The `authorized` refusal says what the `key_not_authorized` error says. */
export function notAuthorizedMessage(keyName: string): string {
  return formatMessage('key_not_authorized', { key: keyName });
}

/** Without a `key` argument the key is the fee payer's; another fee payer (x402) needs the signing key named. */
export const NAME_THE_KEY =
  "; if one of your keys signs a transaction someone else pays the fee for (x402), name it with the 'key' argument";

export function keyNotGrantedRefusal(named: string): Refusal {
  return refusal('key_not_authorized', notAuthorizedMessage(named));
}

export function noKeyForFeePayerRefusal(feePayer: string): Refusal {
  return refusal(
    'no_key_for_fee_payer',
    `this token may not use a key with pubkey ${feePayer} (the payload's fee payer)${NAME_THE_KEY}`,
    { fee_payer: feePayer },
  );
}
