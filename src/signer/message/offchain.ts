/**
 * The Solana off-chain message format (versions 0 and 1), read and written only with kit's codecs
 * (@solana/offchain-messages). The bytes must decode, and encode back to exactly themselves: kit's text decoder
 * replaces invalid UTF-8 and drops NUL characters, so without the round trip the text an operator reads could
 * differ from the bytes signed. The format's own rules (the signing domain, a known version, at least one
 * required signatory, sorted and unique signatories in v1, a declared length that matches, restricted ASCII
 * where format 0 says so) are kit's decoder's.
 */
import { address } from '@solana/addresses';
import type { SignatureBytes } from '@solana/keys';
import {
  compileOffchainMessageEnvelope,
  getOffchainMessageDecoder,
  getOffchainMessageEncoder,
  getOffchainMessageEnvelopeEncoder,
  type OffchainMessage,
} from '@solana/offchain-messages';
import { errorMessage } from '../../util/errors';

/** What an operator needs to know of an off-chain message besides its text. */
export interface OffchainView {
  text: string;
  signatories: string[];
  /** One line: version, v0's application domain and content format, the signatories. */
  describe: string;
}

export type OffchainRead = { ok: true; view: OffchainView } | { ok: false; reason: string };

const V0_FORMATS = ['restricted ASCII, at most 1232 bytes', 'UTF-8, at most 1232 bytes', 'UTF-8, at most 65535 bytes'];

export function readOffchain(bytes: Uint8Array): OffchainRead {
  let message: OffchainMessage;
  try {
    message = getOffchainMessageDecoder().decode(bytes);
  } catch (e) {
    return { ok: false, reason: `not a valid off-chain message (${errorMessage(e)})` };
  }
  let again: Uint8Array;
  try {
    again = new Uint8Array(getOffchainMessageEncoder().encode(message));
  } catch (e) {
    return { ok: false, reason: `the off-chain message does not encode back (${errorMessage(e)})` };
  }
  if (!Buffer.from(again).equals(Buffer.from(bytes))) {
    return {
      ok: false,
      reason:
        'the off-chain message does not encode back to the same bytes (its text is not valid UTF-8, holds NUL characters, or has bytes after it)',
    };
  }
  const signatories = message.requiredSignatories.map((s) => s.address as string);
  if (message.version === 0) {
    const format = V0_FORMATS[message.content.format] ?? `format ${message.content.format}`;
    return {
      ok: true,
      view: {
        text: message.content.text,
        signatories,
        describe: `off-chain message v0 (application domain ${message.applicationDomain}, ${format}) for ${signatories.join(', ')}`,
      },
    };
  }
  return {
    ok: true,
    view: { text: message.content, signatories, describe: `off-chain message v1 for ${signatories.join(', ')}` },
  };
}

/**
 * The signed envelope as the format transmits it (signatures in signatory order, then the message), base64, built
 * by kit from the message itself. Only this key's slot is filled; other signatories sign the same bytes themselves.
 */
export function signedEnvelope(bytes: Uint8Array, key: string, signature: Uint8Array): string {
  const envelope = compileOffchainMessageEnvelope(getOffchainMessageDecoder().decode(bytes));
  const encoded = getOffchainMessageEnvelopeEncoder().encode({
    ...envelope,
    signatures: { ...envelope.signatures, [address(key)]: signature as SignatureBytes },
  });
  return Buffer.from(encoded).toString('base64');
}
