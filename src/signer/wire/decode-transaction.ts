/**
 * A wire transaction an agent built (legacy or v0), decoded with @solana/kit's codecs into what the policy
 * checks need: the message bytes every signer signs, the signature slots in signer order, and the compiled
 * message. Nothing here trusts the input: the size, the base64 text, the signature count against the
 * message header and every account index are checked, and a failure names the byte or the field.
 */
import type { Address } from '@solana/addresses';
import { getShortU16Decoder } from '@solana/codecs-numbers';
import {
  getCompiledTransactionMessageDecoder,
  type CompiledTransactionMessage,
  type CompiledTransactionMessageWithLifetime,
  type LegacyCompiledTransactionMessage,
  type V0CompiledTransactionMessage,
} from '@solana/transaction-messages';
import { base64Chars, decodeCanonicalBase64 } from '../../util/base64';
import { SignerError, errorMessage } from '../../util/errors';
import { MAX_TRANSACTION_BYTES, SIGNATURE_BYTES } from './sizes';

/** The message versions the signer accepts. */
export type DecodedMessage = (LegacyCompiledTransactionMessage | V0CompiledTransactionMessage) &
  CompiledTransactionMessageWithLifetime;

export interface DecodedTransaction {
  version: 'legacy' | 0;
  /** The serialised message: what every signer signs, and what a signature is verified against. */
  messageBytes: Uint8Array;
  /** One slot per required signer, in the message's signer order; null where the slot is all zeroes. */
  signatures: (Uint8Array | null)[];
  message: DecodedMessage;
}

const invalid = (message: string): SignerError => new SignerError('payload_invalid', `transaction: ${message}`);

/** Canonical RFC 4648 base64 only: a decoder that forgives would let two texts name one transaction. */
export function decodeTransactionBase64(text: string): Uint8Array {
  // A base64 text longer than the packet is refused before it is decoded: no work scales with junk.
  if (text.length > base64Chars(MAX_TRANSACTION_BYTES)) {
    throw invalid(`${text.length} base64 characters is more than a ${MAX_TRANSACTION_BYTES}-byte transaction`);
  }
  if (text.length === 0) throw invalid('is empty');
  const decoded = decodeCanonicalBase64(text);
  if ('bytes' in decoded) return decoded.bytes;
  const { problem } = decoded;
  throw invalid(
    problem.kind === 'character'
      ? `character ${problem.at} (${JSON.stringify(text[problem.at])}) is not standard base64`
      : problem.kind === 'form'
        ? 'is not canonical base64 (standard alphabet, "=" padding to a multiple of 4)'
        : 'is not canonical base64 (non-zero padding bits)',
  );
}

/** Decodes wire bytes: a short-vec of 64-byte signatures, then the message, and nothing after it. */
export function decodeWireTransaction(bytes: Uint8Array): DecodedTransaction {
  if (bytes.length > MAX_TRANSACTION_BYTES) {
    throw invalid(`${bytes.length} bytes is more than the ${MAX_TRANSACTION_BYTES} a transaction may have`);
  }
  let count: number;
  let offset: number;
  try {
    [count, offset] = getShortU16Decoder().read(bytes, 0);
  } catch (e) {
    throw invalid(`byte 0: the signature count is not a valid short-vec (${errorMessage(e)})`);
  }
  if (count === 0) throw invalid('byte 0: a transaction needs at least one signature slot (the fee payer)');
  const messageStart = offset + count * SIGNATURE_BYTES;
  if (messageStart >= bytes.length) {
    throw invalid(`byte ${offset}: ${count} signature slots need ${count * SIGNATURE_BYTES} bytes and a message`);
  }
  const signatures: (Uint8Array | null)[] = [];
  for (let i = 0; i < count; i++) {
    const sig = bytes.slice(offset + i * SIGNATURE_BYTES, offset + (i + 1) * SIGNATURE_BYTES);
    signatures.push(sig.every((b) => b === 0) ? null : sig);
  }

  const messageBytes = bytes.slice(messageStart);
  let message: CompiledTransactionMessage & CompiledTransactionMessageWithLifetime;
  let end: number;
  try {
    [message, end] = getCompiledTransactionMessageDecoder().read(messageBytes, 0);
  } catch (e) {
    throw invalid(`the message (from byte ${messageStart}) does not decode: ${errorMessage(e)}`);
  }
  if (end !== messageBytes.length) {
    throw invalid(`byte ${messageStart + end}: ${messageBytes.length - end} bytes follow the end of the message`);
  }
  if (!isAccepted(message)) {
    throw invalid(`message version ${String(message.version)} is not supported (legacy and v0 are)`);
  }
  checkShape(message, signatures.length);
  return { version: message.version, messageBytes, signatures, message };
}

function isAccepted(m: CompiledTransactionMessage & CompiledTransactionMessageWithLifetime): m is DecodedMessage {
  return m.version === 'legacy' || m.version === 0;
}

/** The message must be internally consistent before any check reads an index from it. */
function checkShape(message: DecodedMessage, signatureSlots: number): void {
  const { header, staticAccounts } = message;
  if (header.numSignerAccounts !== signatureSlots) {
    throw invalid(
      `the message header says ${header.numSignerAccounts} signers but the transaction has ${signatureSlots} signature slots`,
    );
  }
  if (header.numSignerAccounts > staticAccounts.length) {
    throw invalid(
      `the header names ${header.numSignerAccounts} signers but the message has ${staticAccounts.length} accounts`,
    );
  }
  if (header.numReadonlySignerAccounts >= header.numSignerAccounts) {
    throw invalid('the fee payer (the first signer) must be writable');
  }
  if (header.numReadonlyNonSignerAccounts > staticAccounts.length - header.numSignerAccounts) {
    throw invalid('the header names more read-only unsigned accounts than the message has');
  }
  const unique = new Set<Address>(staticAccounts);
  if (unique.size !== staticAccounts.length) throw invalid('an account appears twice in the message');

  const total = staticAccounts.length + loadedCount(message);
  if (total > 256) throw invalid(`the message uses ${total} accounts; at most 256 can be addressed`);
  for (const [i, ix] of message.instructions.entries()) {
    if (ix.programAddressIndex >= staticAccounts.length) {
      // The runtime loads program ids only from the static list, never from a lookup table.
      throw invalid(`instruction ${i}: program index ${ix.programAddressIndex} is not a static account`);
    }
    for (const [j, idx] of (ix.accountIndices ?? []).entries()) {
      if (idx >= total)
        throw invalid(`instruction ${i}: account ${j} has index ${idx}; the message has ${total} accounts`);
    }
  }
}

/** Accounts a v0 message loads from lookup tables (0 for legacy). */
export function loadedCount(message: DecodedMessage): number {
  if (message.version !== 0) return 0;
  let n = 0;
  for (const l of message.addressTableLookups ?? []) n += l.writableIndexes.length + l.readonlyIndexes.length;
  return n;
}
