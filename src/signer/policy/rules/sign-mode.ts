/**
 * The key's sign modes: `sign_only` only where its config allows it, and a transaction another account pays the
 * fee for only as `sign_only` (the signer fills the key's slot and sends only what the key pays for).
 */
import type { KeyConfig } from '../../../config/types';
import { refusal, type Refusal } from '../../refusals';

export function signOnlyRefusal(key: KeyConfig, mode: 'send' | 'sign_only'): Refusal | null {
  if (mode !== 'sign_only' || key.sign_only !== false) return null;
  return refusal(
    'sign_only_not_allowed',
    `key "${key.name}" does not allow sign_only (sign_only: false in its config): use mode "send"`,
  );
}

export function foreignFeePayerModeRefusal(
  key: KeyConfig,
  mode: 'send' | 'sign_only',
  foreignFeePayer: string | null,
): Refusal | null {
  if (foreignFeePayer === null || mode !== 'send') return null;
  return refusal(
    'foreign_fee_payer_needs_sign_only',
    `the fee payer ${foreignFeePayer} is not key "${key.name}": the signer signs only the key's slot and sends only transactions the key pays for; use mode "sign_only" and let the fee payer sign and send it`,
    { fee_payer: foreignFeePayer },
  );
}
