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
 * PAYLOAD_LIMITS below; docs/payload-limits.md lists them for agent authors.
 */
import crypto from 'node:crypto';
import { STRICT_BASE64 } from '../util/base64';
import { SignerError } from '../util/errors';
import { decodeAddress } from '../util/base58';
import { isRecord } from '../util/is-record';
import { signerFromKeypairBytes, type Signer } from '../keys/keypair';
import { canonicalJson } from './canonical-json';
import { MAX_TRANSACTION_BYTES, SIGNATURE_BYTES } from './wire/sizes';
import { decodeTransactionBase64, decodeWireTransaction, type DecodedTransaction } from './wire/decode-transaction';

export interface AccountMeta {
  pubkey: string;
  isSigner: boolean;
  isWritable: boolean;
}

export interface Instruction {
  programId: string;
  accounts: AccountMeta[];
  data: Uint8Array;
}

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

// Sizes on the wire, for the arithmetic below.
const KEY_BYTES = 32;
const BLOCKHASH_BYTES = 32;
const HEADER_BYTES = 3;
/** A transaction with one signer and one program, before its instruction list: count + sig, header, count + 2 keys, blockhash. */
const ONE_SIGNER_ONE_PROGRAM_BYTES = 1 + SIGNATURE_BYTES + HEADER_BYTES + 1 + 2 * KEY_BYTES + BLOCKHASH_BYTES;
/** What one instruction needs at least: a program index, a 2-byte account count and a 1-byte data length, or the reverse. */
const INSTRUCTION_FRAME_BYTES = 4;

/**
 * The bounds, each derived from the 1232-byte packet a transaction must fit in:
 * - signers: every signature (64 B) needs its signer among the message's keys (32 B): 96 B each. With no instruction
 *   at all the rest of a message takes 38 B (signature count 1, header 3, key count 1, blockhash 32, instruction
 *   count 1), so no transaction has more than ⌊(1232 − 38) / 96⌋ = 12 signatures. (Counting signature bytes alone
 *   gives ⌊1232 / 64⌋ = 19, but a signature whose signer's key is not in the message is no transaction.) A v1
 *   payload has at least one instruction (a program key 32 B + 3 B) and names each signer but the fee payer in
 *   an instruction's accounts (1 B each): 73 + 96·S + (S − 1) ≤ 1232 gives S ≤ 11 signers, of which one is the
 *   fee payer (the signing key): at most 10 partial signers.
 * - instructions: one signer and one program take 165 B, the instruction count 2 B past 127, and each instruction at
 *   least 3 B (program index, empty account list, empty data): ⌊(1232 − 167) / 3⌋ = 355.
 * - account references and data bytes of one instruction: 165 B + count 1 + program index 1 + the other list's
 *   1-byte length + this list's 2-byte length leaves 1232 − 170 = 1062 B, one per account index or data byte.
 * The whole transaction is then held to 1232 B by a lower bound of its compiled size computed from the lists
 * before any address is decoded (the compiler checks the exact size again).
 * The JSON value as a whole (which the hash covers, unknown fields included) is held to 8192 values, 16 levels:
 * the largest payload that fits a transaction has under 6000.
 */
/** Signatures in any transaction: each with its signer's key, around the smallest message there is. */
const MAX_TRANSACTION_SIGNERS = Math.floor(
  (MAX_TRANSACTION_BYTES - (1 + HEADER_BYTES + 1 + BLOCKHASH_BYTES + 1)) / (SIGNATURE_BYTES + KEY_BYTES),
);
/** Signers of a v1 payload: one instruction (program key and frame), each signer but the payer referenced once. */
const MAX_PAYLOAD_SIGNERS = Math.floor(
  (MAX_TRANSACTION_BYTES - (1 + HEADER_BYTES + 1 + BLOCKHASH_BYTES + 1 + KEY_BYTES + 3) + 1) /
    (SIGNATURE_BYTES + KEY_BYTES + 1),
);

export const PAYLOAD_LIMITS = {
  summaryChars: 512,
  warnings: 16,
  warningChars: 256,
  transactionSigners: MAX_TRANSACTION_SIGNERS,
  payloadSigners: MAX_PAYLOAD_SIGNERS,
  partialSigners: MAX_PAYLOAD_SIGNERS - 1,
  instructions: Math.floor((MAX_TRANSACTION_BYTES - ONE_SIGNER_ONE_PROGRAM_BYTES - 2) / 3),
  accountsPerInstruction: MAX_TRANSACTION_BYTES - ONE_SIGNER_ONE_PROGRAM_BYTES - 1 - INSTRUCTION_FRAME_BYTES,
  dataBytesPerInstruction: MAX_TRANSACTION_BYTES - ONE_SIGNER_ONE_PROGRAM_BYTES - 1 - INSTRUCTION_FRAME_BYTES,
  jsonValues: 8192,
  jsonDepth: 16,
} as const;

/** Base64 of a 64-byte keypair, with padding: 88 characters. */
const KEYPAIR_BASE64_CHARS = 88;
/** A base58 32-byte address is 32 to 44 characters. */
const MAX_ADDRESS_CHARS = 44;

function invalid(message: string): SignerError {
  return new SignerError('payload_invalid', message);
}

function shapeError(where: string): SignerError {
  return invalid(`payload has an unexpected shape (${where})`);
}

function tooMany(field: string, count: number, limit: number, unit: string): SignerError {
  return invalid(`${field} has ${count} ${unit}; at most ${limit} fit in a transaction`);
}

/** Hash of the payload without partial signers: the same with and without them. */
export function payloadHash(value: unknown): string {
  let hashed = value;
  if (isRecord(value) && 'partial_signers' in value) {
    const rest = { ...value };
    delete rest.partial_signers;
    hashed = rest;
  }
  return crypto.createHash('sha256').update(canonicalJson(hashed)).digest('hex');
}

/**
 * The payload as a bounded JSON object: the object itself, or its JSON text (the CLI reads a file). Every kind of
 * payload, transaction or message, goes through this first.
 */
export function payloadValue(input: unknown): Record<string, unknown> {
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch {
      throw invalid('payload is not valid JSON');
    }
  }
  const tooBig = jsonSizeError(value);
  if (tooBig) throw tooBig;
  if (!isRecord(value)) throw invalid('payload has an unexpected shape (it must be a JSON object)');
  return value;
}

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

/**
 * Counts the JSON values and their depth without recursion, stopping at the first bound passed: the hash walks
 * the whole value, so a value of half a million numbers would hold the event loop for over 100 ms.
 */
function jsonSizeError(value: unknown): SignerError | null {
  const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 1 }];
  let count = 0;
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    count++;
    if (count > PAYLOAD_LIMITS.jsonValues)
      return invalid(`payload has more than ${PAYLOAD_LIMITS.jsonValues} JSON values; a transaction needs far fewer`);
    if (top.depth > PAYLOAD_LIMITS.jsonDepth)
      return invalid(`payload nests deeper than ${PAYLOAD_LIMITS.jsonDepth} levels`);
    const { v, depth } = top;
    if (Array.isArray(v)) {
      if (count + stack.length + v.length > PAYLOAD_LIMITS.jsonValues)
        return invalid(`payload has more than ${PAYLOAD_LIMITS.jsonValues} JSON values; a transaction needs far fewer`);
      for (const item of v as unknown[]) stack.push({ v: item, depth: depth + 1 });
    } else if (isRecord(v)) {
      for (const k in v) {
        stack.push({ v: v[k], depth: depth + 1 });
        if (count + stack.length > PAYLOAD_LIMITS.jsonValues)
          return invalid(
            `payload has more than ${PAYLOAD_LIMITS.jsonValues} JSON values; a transaction needs far fewer`,
          );
      }
    }
  }
  return null;
}

export function parseSummary(raw: unknown): string {
  const summary = raw ?? '';
  if (typeof summary !== 'string') throw shapeError('summary must be a string');
  if (summary.length > PAYLOAD_LIMITS.summaryChars)
    throw invalid(`summary has ${summary.length} characters; at most ${PAYLOAD_LIMITS.summaryChars}`);
  return summary;
}

export function parseWarnings(raw: unknown): string[] {
  const warnings = raw ?? [];
  if (!Array.isArray(warnings)) throw shapeError('warnings must be an array of strings');
  if (warnings.length > PAYLOAD_LIMITS.warnings)
    throw invalid(`warnings has ${warnings.length} entries; at most ${PAYLOAD_LIMITS.warnings}`);
  return warnings.map((w: unknown, i) => {
    if (typeof w !== 'string') throw shapeError('warnings must be an array of strings');
    if (w.length > PAYLOAD_LIMITS.warningChars)
      throw invalid(`warnings[${i}] has ${w.length} characters; at most ${PAYLOAD_LIMITS.warningChars}`);
    return w;
  });
}

/** The partial signers' base64 texts, shape and size checked; nothing is decoded yet. */
function partialSignerTexts(raw: unknown): string[] {
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

function importPartialSigner(encoded: string, i: number): Signer {
  const bytes = Buffer.from(encoded, 'base64');
  try {
    const signer = signerFromKeypairBytes(bytes);
    if (!signer) throw invalid(`partial signer ${i} is not a 64-byte keypair`);
    return signer;
  } finally {
    bytes.fill(0);
  }
}

interface RawAccount {
  pubkey: string;
  isSigner: boolean;
  isWritable: boolean;
}

interface RawInstruction {
  programId: string;
  accounts: RawAccount[];
  data: number[];
}

interface RawTransaction {
  feePayer: string;
  instructions: RawInstruction[];
}

/**
 * The transaction's shape, with a running lower bound of its compiled size checked before each instruction's
 * lists are walked, so no request makes the parser visit more entries than a transaction could hold.
 */
function parseTransactionShape(raw: unknown): RawTransaction {
  if (!isRecord(raw)) throw shapeError('transaction must be an object');
  const feePayer = addressText(raw.fee_payer, 'transaction.fee_payer', 'fee_payer');
  const list = raw.instructions;
  if (!Array.isArray(list)) throw shapeError('transaction.instructions must be an array');
  if (list.length === 0) throw invalid('payload has no instructions');
  if (list.length > PAYLOAD_LIMITS.instructions)
    throw tooMany('transaction.instructions', list.length, PAYLOAD_LIMITS.instructions, 'entries');

  const size = wireSizeBound(feePayer, list.length);
  const instructions = list.map((ix: unknown, i): RawInstruction => {
    const shape = instructionShape(ix, i);
    size.add(shape);
    if (size.bytes > MAX_TRANSACTION_BYTES) {
      throw invalid(
        `transaction.instructions[${i}]: the transaction needs at least ${size.bytes} bytes up to here; ` +
          `a transaction must fit in ${MAX_TRANSACTION_BYTES} bytes`,
      );
    }
    return shape;
  });
  return { feePayer, instructions };
}

function instructionShape(raw: unknown, i: number): RawInstruction {
  const where = `transaction.instructions[${i}]`;
  if (!isRecord(raw)) throw shapeError(`instruction ${i} must be an object`);
  const programId = addressText(raw.program_id, `instruction ${i}: program_id`, 'program_id');
  const accounts = raw.accounts;
  if (!Array.isArray(accounts)) throw shapeError(`instruction ${i}: accounts must be an array`);
  if (accounts.length > PAYLOAD_LIMITS.accountsPerInstruction)
    throw tooMany(`${where}.accounts`, accounts.length, PAYLOAD_LIMITS.accountsPerInstruction, 'entries');
  const data = raw.data;
  if (!Array.isArray(data)) throw shapeError(`instruction ${i}: data must be an array of integers 0-255`);
  if (data.length > PAYLOAD_LIMITS.dataBytesPerInstruction)
    throw tooMany(`${where}.data`, data.length, PAYLOAD_LIMITS.dataBytesPerInstruction, 'bytes');
  if (!data.every((b: unknown): b is number => typeof b === 'number' && Number.isInteger(b) && b >= 0 && b <= 255))
    throw shapeError(`instruction ${i}: data must be an array of integers 0-255`);
  return {
    programId,
    accounts: accounts.map((a: unknown, j): RawAccount => {
      if (
        !isRecord(a) ||
        typeof a.pubkey !== 'string' ||
        typeof a.is_signer !== 'boolean' ||
        typeof a.is_writable !== 'boolean'
      ) {
        throw shapeError(`instruction ${i}, account ${j} needs pubkey, is_signer and is_writable`);
      }
      return {
        pubkey: addressText(a.pubkey, `instruction ${i}, account ${j}: pubkey`, 'account'),
        isSigner: a.is_signer,
        isWritable: a.is_writable,
      };
    }),
    data,
  };
}

/** compact-u16 length of a count. */
function shortvecBytes(n: number): number {
  return n < 0x80 ? 1 : n < 0x4000 ? 2 : 3;
}

/**
 * The compiled legacy size so far: keys counted by their text (one base58 text per 32-byte key), one signature
 * per signer key. It is the exact size the compiler will produce once every instruction is added.
 */
function wireSizeBound(feePayer: string, instructionCount: number) {
  const keys = new Set([feePayer]);
  const signers = new Set([feePayer]);
  let instructionBytes = 0;
  const state = {
    bytes: 0,
    add(ix: RawInstruction): void {
      keys.add(ix.programId);
      for (const a of ix.accounts) {
        keys.add(a.pubkey);
        if (a.isSigner) signers.add(a.pubkey);
      }
      instructionBytes +=
        1 + shortvecBytes(ix.accounts.length) + ix.accounts.length + shortvecBytes(ix.data.length) + ix.data.length;
      state.bytes = total();
    },
  };
  const total = () =>
    shortvecBytes(signers.size) +
    signers.size * SIGNATURE_BYTES +
    HEADER_BYTES +
    shortvecBytes(keys.size) +
    keys.size * KEY_BYTES +
    BLOCKHASH_BYTES +
    shortvecBytes(instructionCount) +
    instructionBytes;
  state.bytes = total();
  return state;
}

function decodeInstruction(raw: RawInstruction): Instruction {
  return {
    programId: address(raw.programId, 'program_id'),
    accounts: raw.accounts.map((a) => ({
      pubkey: address(a.pubkey, 'account'),
      isSigner: a.isSigner,
      isWritable: a.isWritable,
    })),
    data: Uint8Array.from(raw.data),
  };
}

/** A string short enough to be an address; its base58 is decoded later. `shape` names it when it is no string. */
function addressText(raw: unknown, shape: string, field: string): string {
  if (typeof raw !== 'string') throw shapeError(`${shape} must be a string`);
  if (raw.length > MAX_ADDRESS_CHARS) {
    // Never echo it: a long string in an address field might be a secret pasted into the wrong place.
    throw invalid(`${field}: invalid address of ${raw.length} characters: not a base58 32-byte public key`);
  }
  return raw;
}

function address(text: string, field: string): string {
  if (!decodeAddress(text)) {
    throw invalid(`${field}: invalid address ${JSON.stringify(text)}: not a base58 32-byte public key`);
  }
  return text;
}
