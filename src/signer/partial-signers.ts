/**
 * A v1 payload's partial signers: ephemeral keypairs for accounts the transaction creates. They are secrets: their
 * texts are checked for shape and size first, then each becomes a Signer and its bytes are wiped, never kept,
 * hashed or shown.
 */
import { STRICT_BASE64 } from '../util/base64';
import { signerFromKeypairBytes, type Signer } from '../keys/keypair';
import { invalid, tooMany } from './payload-errors';
import { KEYPAIR_BASE64_CHARS, PAYLOAD_LIMITS } from './payload-limits';

/** The partial signers' base64 texts, shape and size checked; nothing is decoded yet. */
export function partialSignerTexts(raw: unknown): string[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw invalid('partial_signers must be an array');
  if (raw.length > PAYLOAD_LIMITS.partialSigners)
    throw tooMany('partial_signers', raw.length, PAYLOAD_LIMITS.partialSigners, 'entries');
  return raw.map((s: unknown, i) => {
    if (typeof s !== 'string') throw invalid('partial_signers must be strings');
    if (s.length !== KEYPAIR_BASE64_CHARS || !STRICT_BASE64.test(s)) {
      throw invalid(
        STRICT_BASE64.test(s) ? `partial signer ${i} is not a 64-byte keypair` : `partial signer ${i} is not base64`,
      );
    }
    return s;
  });
}

export function importPartialSigner(encoded: string, i: number): Signer {
  const bytes = Buffer.from(encoded, 'base64');
  try {
    const signer = signerFromKeypairBytes(bytes);
    if (!signer) throw invalid(`partial signer ${i} is not a 64-byte keypair`);
    return signer;
  } finally {
    bytes.fill(0);
  }
}
