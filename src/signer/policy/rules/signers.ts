/**
 * Who signs: every partial signer the payload brings must be a required signer other than the key, every
 * required signer must be the key, the foreign fee payer or a partial signer, and a partial signer stands for an
 * account the transaction creates, so it must not exist on chain yet (the flow reads which do).
 */
import type { KeyConfig } from '../../../config/types';
import { requiredSigners, type CompiledMessage } from '../../compile';
import { refusal, type Refusal } from '../../refusals';

export function signersRefusal(
  key: KeyConfig,
  msg: CompiledMessage,
  partialSigners: readonly string[],
  foreignFeePayer: string | null,
): Refusal | null {
  const required = requiredSigners(msg);
  const requiredSet = new Set(required);
  for (const p of partialSigners) {
    if (p === key.pubkey) return refusal('partial_signer_is_key', 'a partial signer is the signing key');
    if (!requiredSet.has(p))
      return refusal('partial_signer_not_required', `partial signer ${p} is not a signer of the transaction`, {
        account: p,
      });
  }
  const partials = new Set(partialSigners);
  for (const r of required) {
    if (r !== key.pubkey && r !== foreignFeePayer && !partials.has(r)) {
      return refusal(
        'required_signer_unavailable',
        `${r} must sign, but it is neither the signing key nor a partial signer`,
        { account: r },
      );
    }
  }
  return null;
}

/** The first partial signer that already exists on chain: `exists` says, for each of `signers`, whether it does. */
export function partialSignerExistsRefusal(signers: readonly string[], exists: readonly boolean[]): Refusal | null {
  const taken = signers.find((_, i) => exists[i] === true);
  if (taken === undefined) return null;
  return refusal('partial_signer_exists', `partial signer ${taken} already exists on-chain`, { account: taken });
}
