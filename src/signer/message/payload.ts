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
import { SignerError } from '../../util/errors';
import { decodeAddress } from '../../util/base58';
import { parseSummary, parseWarnings, payloadHash } from '../payload';

export const MESSAGE_VERSION = 'message';

export type MessageFormat = 'offchain' | 'text';

/**
 * The most bytes a message may have: 1232, the off-chain format's own bound for a message a hardware wallet can
 * show in full (its formats 0 and 1). A key signs only what an operator can read whole, in `approvals list` and in
 * the audit entry, and a sign-in message with its resources is a few hundred bytes. Longer off-chain messages
 * (format 2, or version 1 past this size) are refused.
 */
export const MAX_MESSAGE_BYTES = 1232;
/** Base64 of MAX_MESSAGE_BYTES bytes, with padding. */
const MAX_MESSAGE_BASE64 = Math.ceil(MAX_MESSAGE_BYTES / 3) * 4;
const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
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
  if (text.length > MAX_MESSAGE_BASE64) {
    throw invalid(
      `message payload: ${text.length} base64 characters is more than a ${MAX_MESSAGE_BYTES}-byte message; ` +
        `the signer signs messages of at most ${MAX_MESSAGE_BYTES} bytes, the size an operator can read whole`,
    );
  }
  if (text.length % 4 !== 0 || !STRICT_BASE64.test(text)) {
    throw invalid('message payload: message is not canonical base64 (standard alphabet, "=" padding)');
  }
  const bytes = Buffer.from(text, 'base64');
  if (bytes.toString('base64') !== text) {
    throw invalid('message payload: message is not canonical base64 (non-zero padding bits)');
  }
  if (bytes.length > MAX_MESSAGE_BYTES) {
    throw invalid(`message payload: ${bytes.length} bytes; the signer signs messages of at most ${MAX_MESSAGE_BYTES}`);
  }
  return new Uint8Array(bytes);
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
