/**
 * Signature slots of an agent's transaction. Signatures other signers already made are kept only if they
 * verify against the message (a tampered or misplaced one is refused, never passed on); the signer fills
 * its own key's slot and nothing else, so a slot left empty for someone else (a facilitator paying the
 * fee) stays empty.
 */
import { getShortU16Encoder } from '@solana/kit';
import { decodeAddress } from '../../util/base58';
import { verifySignature } from '../../keys/keypair';
import type { DecodedTransaction } from './decode-transaction';

const SIGNATURE_BYTES = 64;

/** The signer of each signature slot, in order: the first header.numSignerAccounts static accounts. */
export function signerSlots(tx: DecodedTransaction): string[] {
  return tx.message.staticAccounts.slice(0, tx.message.header.numSignerAccounts);
}

/** The first present signature that does not verify for its slot's signer, or null when all do. */
export function firstInvalidSignature(tx: DecodedTransaction): { slot: number; signer: string } | null {
  const signers = signerSlots(tx);
  for (const [slot, sig] of tx.signatures.entries()) {
    if (sig === null) continue;
    const signer = signers[slot];
    const pubkey = signer === undefined ? null : decodeAddress(signer);
    if (signer === undefined || !pubkey || !verifySignature(pubkey, tx.messageBytes, sig)) {
      return { slot, signer: signer ?? '(none)' };
    }
  }
  return null;
}

/** The wire bytes with `signature` in `signer`'s slot and every other slot as it was (zeroes where empty). */
export function withSignature(tx: DecodedTransaction, signer: string, signature: Uint8Array): Uint8Array {
  const slot = signerSlots(tx).indexOf(signer);
  if (slot < 0) throw new RangeError(`${signer} is not a signer of this transaction`);
  if (signature.length !== SIGNATURE_BYTES) throw new RangeError(`a signature is ${SIGNATURE_BYTES} bytes`);
  const count = getShortU16Encoder().encode(tx.signatures.length);
  const out = new Uint8Array(count.length + tx.signatures.length * SIGNATURE_BYTES + tx.messageBytes.length);
  out.set(count, 0);
  for (const [i, sig] of tx.signatures.entries()) {
    const bytes = i === slot ? signature : sig;
    if (bytes) out.set(bytes, count.length + i * SIGNATURE_BYTES);
  }
  out.set(tx.messageBytes, count.length + tx.signatures.length * SIGNATURE_BYTES);
  return out;
}
