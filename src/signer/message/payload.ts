/**
 * The message payload (docs/payloads.md): bytes a key signs that are not a transaction, either an off-chain
 * message (the Solana off-chain message format, base64) or a sign-in text (plain UTF-8, SIWS-style), as
 *
 *   { "version": "message", "format": "offchain" | "text", "message": "...", "signer": "<pubkey>", "summary": "..." }
 *
 * Parsing only settles the shape, the size and the exact bytes that would be signed; what those bytes are (a
 * transaction in disguise, an off-chain message that breaks its format's rules) is judged later by content.ts,
 * as a refusal that is audited. A payload that cannot be read at all is an error (payload_invalid), as for v1/v2.
 */
import crypto from 'node:crypto';
import { base64Chars, decodeCanonicalBase64 } from '../../util/base64';
import { SignerError } from '../../util/errors';
import { decodeAddress } from '../../util/base58';
import { payloadHash } from '../payload-json';
import { parseSummary, parseWarnings } from '../payload-text';
import { MAX_MESSAGE_BYTES } from '../wire/sizes';

export const MESSAGE_VERSION = 'message';

export type MessageFormat = 'offchain' | 'text';

const MAX_ADDRESS_CHARS = 44;

export interface MessagePayload {
  version: typeof MESSAGE_VERSION;
  format: MessageFormat;
  /** Exactly the bytes the key would sign. */
  bytes: Uint8Array;
  /** sha256 hex of `bytes`: names the message in the audit log. */
  sha256: string;
  /** The key's pubkey as the payload names it, or null (then the request must name the key). */
  signer: string | null;
  summary: string;
  warnings: string[];
  /** sha256 hex of the canonical payload, as for transaction payloads. */
  hash: string;
}

const invalid = (message: string): SignerError => new SignerError('payload_invalid', message);

export function isMessagePayloadValue(value: Record<string, unknown>): boolean {
  return value.version === MESSAGE_VERSION;
}

export function parseMessagePayload(value: Record<string, unknown>): MessagePayload {
  const summary = parseSummary(value.summary);
  const warnings = parseWarnings(value.warnings);
  if (value.partial_signers !== undefined && value.partial_signers !== null) {
    throw invalid('partial_signers belongs to payload v1; a message payload has no other signers');
  }
  const format = value.format;
  if (format !== 'offchain' && format !== 'text') {
    throw invalid('message payload: format must be "offchain" (base64 off-chain message) or "text" (UTF-8 text)');
  }
  if (typeof value.message !== 'string') throw invalid('message payload: message must be a string');
  const bytes = format === 'offchain' ? offchainBytes(value.message) : textBytes(value.message);
  return {
    version: MESSAGE_VERSION,
    format,
    bytes,
    sha256: crypto.createHash('sha256').update(bytes).digest('hex'),
    signer: signerOf(value.signer),
    summary,
    warnings,
    hash: payloadHash(value),
  };
}

function signerOf(raw: unknown): string | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'string') throw invalid('message payload: signer must be a string (a base58 pubkey)');
  if (raw.length > MAX_ADDRESS_CHARS || !decodeAddress(raw)) {
    // Never echo a long string: it might be a secret pasted into the wrong field.
    throw invalid(`message payload: signer is not a base58 32-byte public key (${raw.length} characters)`);
  }
  return raw;
}

/** Canonical base64 only, bounded before it is decoded: two texts never name one message. */
function offchainBytes(text: string): Uint8Array {
  if (text.length === 0) throw invalid('message payload: message is empty');
  if (text.length > base64Chars(MAX_MESSAGE_BYTES)) {
    throw invalid(
      `message payload: ${text.length} base64 characters is more than a ${MAX_MESSAGE_BYTES}-byte message; ` +
        `the signer signs messages of at most ${MAX_MESSAGE_BYTES} bytes, the size an operator can read whole`,
    );
  }
  const decoded = decodeCanonicalBase64(text);
  if ('problem' in decoded) {
    throw invalid(
      decoded.problem.kind === 'padding bits'
        ? 'message payload: message is not canonical base64 (non-zero padding bits)'
        : 'message payload: message is not canonical base64 (standard alphabet, "=" padding)',
    );
  }
  const { bytes } = decoded;
  if (bytes.length > MAX_MESSAGE_BYTES) {
    throw invalid(`message payload: ${bytes.length} bytes; the signer signs messages of at most ${MAX_MESSAGE_BYTES}`);
  }
  return bytes;
}

/** The text's UTF-8 bytes, which must decode back to the same text (no lone surrogates). */
function textBytes(text: string): Uint8Array {
  if (text.length === 0) throw invalid('message payload: message is empty');
  // Every UTF-16 unit is at least one UTF-8 byte: a longer string is too long before it is encoded.
  if (text.length > MAX_MESSAGE_BYTES) {
    throw invalid(
      `message payload: the text has ${text.length} characters; the signer signs at most ${MAX_MESSAGE_BYTES} bytes`,
    );
  }
  const bytes = new TextEncoder().encode(text);
  if (bytes.length > MAX_MESSAGE_BYTES) {
    throw invalid(
      `message payload: the text is ${bytes.length} bytes in UTF-8; the signer signs at most ${MAX_MESSAGE_BYTES}`,
    );
  }
  if (new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes) !== text) {
    throw invalid('message payload: the text is not well-formed Unicode (a lone surrogate); send valid UTF-8 text');
  }
  return bytes;
}
