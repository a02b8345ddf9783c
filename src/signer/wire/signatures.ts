/**
 * Signature slots of an agent's transaction. Signatures other signers already made are kept only if they
 * verify against the message (a tampered or misplaced one is refused, never passed on). The signer fills
 * its own key's slot and nothing else (serializeTransaction writes zeroes for any other slot left empty).
 */
import { decodeAddress } from '../../util/base58';
import { verifySignature } from '../../keys/keypair';
import type { DecodedTransaction } from './decode-transaction';

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
