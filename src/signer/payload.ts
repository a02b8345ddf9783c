/**
 * The payloads `check` and `sign` accept (docs/payloads.md). Parse failures are errors, not refusals.
 *
 * Payload v1: a list of instructions the signer compiles itself, plus optional partial signers (ephemeral
 * keypairs for accounts the transaction creates).
 * Payload v2: a wire transaction the agent compiled itself (legacy or v0, unsigned or partially signed), decoded
 * with kit's codecs in wire/decode-transaction.ts; what it means is judged later, against the chain.
 * Partial signers are secrets: they become Signer objects here and their bytes are never kept, hashed or shown.
 *
 * Everything an agent sends is bounded before anything costs time: the whole JSON value (how many values, how
 * deep), then every list and string against what a 1232-byte transaction can carry, and only then are addresses
 * decoded and keypairs imported (the expensive step, ~0.5 ms each). The bounds and their arithmetic are in
 * PAYLOAD_LIMITS (payload-limits.ts); docs/payload-limits.md lists them for agent authors.
 */
import type { Signer } from '../keys/keypair';
import { importPartialSigner, partialSignerTexts } from './partial-signers';
import { invalid, shapeError } from './payload-errors';
import { payloadHash, payloadValue } from './payload-json';
import { parseSummary, parseWarnings } from './payload-text';
import { address, decodeInstruction, parseTransactionShape, type Instruction } from './payload-v1-shape';
import { decodeTransactionBase64, decodeWireTransaction, type DecodedTransaction } from './wire/decode-transaction';

interface PayloadCommon {
  summary: string;
  warnings: string[];
  feePayer: string;
  /** sha256 hex of the canonical payload without `partial_signers`. */
  hash: string;
}

export interface PayloadV1 extends PayloadCommon {
  version: 1;
  instructions: Instruction[];
  partialSigners: Signer[];
}

export interface PayloadV2 extends PayloadCommon {
  version: 2;
  /** The agent's transaction as decoded; the fee payer is its first account. */
  transaction: DecodedTransaction;
  /** Sign it on a fresh blockhash instead of its own (only when no other signature is present). */
  replaceBlockhash: boolean;
}

export type Payload = PayloadV1 | PayloadV2;

/** A transaction payload (v1 or v2): the object, or its JSON text. */
export function parsePayload(input: unknown): Payload {
  const value = payloadValue(input);
  const version = value.version;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 0)
    throw shapeError('version must be an unsigned integer, or "message"');
  if (version === 2) return parseV2(value);
  if (version !== 1)
    throw invalid(`unsupported payload version ${version} (versions 1 and 2, and "message", are accepted)`);
  return parseV1(value);
}

/** A payload that must be v1 (the callers that compile instruction lists themselves). */
export function parsePayloadV1(input: unknown): PayloadV1 {
  const p = parsePayload(input);
  if (p.version !== 1) throw invalid(`payload version ${p.version} is not version 1`);
  return p;
}

function parseV1(value: Record<string, unknown>): PayloadV1 {
  const summary = parseSummary(value.summary);
  const warnings = parseWarnings(value.warnings);
  const partials = partialSignerTexts(value.partial_signers);
  const tx = parseTransactionShape(value.transaction);

  // Shapes and sizes are known to be bounded: now the work that costs, addresses first, then the keypairs.
  const feePayer = address(tx.feePayer, 'fee_payer');
  const instructions = tx.instructions.map(decodeInstruction);
  const partialSigners = partials.map(importPartialSigner);
  return { version: 1, summary, warnings, feePayer, instructions, partialSigners, hash: payloadHash(value) };
}

function parseV2(value: Record<string, unknown>): PayloadV2 {
  const summary = parseSummary(value.summary);
  const warnings = parseWarnings(value.warnings);
  if (value.partial_signers !== undefined && value.partial_signers !== null) {
    throw invalid(
      'partial_signers belongs to payload v1; in v2 every other signer signs the transaction before it is sent',
    );
  }
  const replace = value.replace_blockhash ?? false;
  if (typeof replace !== 'boolean') throw shapeError('replace_blockhash must be a boolean');
  if (typeof value.transaction !== 'string')
    throw shapeError('transaction must be a base64 wire transaction (a string) in payload v2');
  const transaction = decodeWireTransaction(decodeTransactionBase64(value.transaction));
  const feePayer = transaction.message.staticAccounts[0];
  if (feePayer === undefined) throw invalid('transaction: the message has no accounts');
  return { version: 2, summary, warnings, feePayer, transaction, replaceBlockhash: replace, hash: payloadHash(value) };
}
