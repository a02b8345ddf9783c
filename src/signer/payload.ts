/**
 * Payload v1 (domain.md §1): a list of instructions the signer compiles itself, plus optional partial
 * signers (ephemeral keypairs for accounts the transaction creates). Parse failures are errors, not refusals.
 * Partial signers are secrets: they become Signer objects here and their bytes are never kept, hashed or shown.
 */
import crypto from 'node:crypto';
import { SignerError } from '../util/errors';
import { decodeAddress } from '../util/base58';
import { signerFromKeypairBytes, type Signer } from '../keys/keypair';
import { canonicalJson } from './canonical-json';

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

export interface Payload {
  summary: string;
  warnings: string[];
  feePayer: string;
  instructions: Instruction[];
  partialSigners: Signer[];
  /** sha256 hex of the canonical payload without `partial_signers` (§1.2). */
  hash: string;
}

const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function invalid(message: string): SignerError {
  return new SignerError('payload_invalid', message);
}

function shapeError(where: string): SignerError {
  return invalid(`payload has an unexpected shape (${where})`);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Hash of the payload without partial signers: the same with and without them. */
export function payloadHash(value: unknown): string {
  let hashed = value;
  if (isRecord(value) && 'partial_signers' in value) {
    const { partial_signers: _secret, ...rest } = value;
    hashed = rest;
  }
  return crypto.createHash('sha256').update(canonicalJson(hashed)).digest('hex');
}

/** Accepts the payload object, or its JSON text (the CLI reads a file). */
export function parsePayload(input: unknown): Payload {
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch {
      throw invalid('payload is not valid JSON');
    }
  }
  const hash = payloadHash(value);
  if (!isRecord(value)) throw invalid('payload has an unexpected shape (it must be a JSON object)');

  const partialSigners = parsePartialSigners(value.partial_signers);

  const version = value.version;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 0)
    throw shapeError('version must be an unsigned integer');
  if (version !== 1) throw invalid(`unsupported payload version ${version}`);

  const summary = value.summary ?? '';
  if (typeof summary !== 'string') throw shapeError('summary must be a string');
  const warnings = value.warnings ?? [];
  if (!Array.isArray(warnings) || !warnings.every((w) => typeof w === 'string'))
    throw shapeError('warnings must be an array of strings');

  const tx = value.transaction;
  if (!isRecord(tx)) throw shapeError('transaction must be an object');
  if (typeof tx.fee_payer !== 'string') throw shapeError('transaction.fee_payer must be a string');
  const feePayer = address(tx.fee_payer, 'fee_payer');
  if (!Array.isArray(tx.instructions)) throw shapeError('transaction.instructions must be an array');
  const instructions = tx.instructions.map((ix, i) => parseInstruction(ix, i));
  if (instructions.length === 0) throw invalid('payload has no instructions');

  return { summary, warnings: warnings as string[], feePayer, instructions, partialSigners, hash };
}

function parsePartialSigners(raw: unknown): Signer[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw invalid('partial_signers must be an array');
  if (!raw.every((s) => typeof s === 'string')) throw invalid('partial_signers must be strings');
  return (raw as string[]).map((encoded, i) => {
    if (!STRICT_BASE64.test(encoded)) throw invalid(`partial signer ${i} is not base64`);
    const bytes = Buffer.from(encoded, 'base64');
    try {
      const signer = bytes.length === 64 ? signerFromKeypairBytes(bytes) : null;
      if (!signer) throw invalid(`partial signer ${i} is not a 64-byte keypair`);
      return signer;
    } finally {
      bytes.fill(0);
    }
  });
}

function parseInstruction(raw: unknown, i: number): Instruction {
  if (!isRecord(raw)) throw shapeError(`instruction ${i} must be an object`);
  if (typeof raw.program_id !== 'string') throw shapeError(`instruction ${i}: program_id must be a string`);
  const programId = address(raw.program_id, 'program_id');
  if (!Array.isArray(raw.accounts)) throw shapeError(`instruction ${i}: accounts must be an array`);
  const accounts = raw.accounts.map((a, j): AccountMeta => {
    if (
      !isRecord(a) ||
      typeof a.pubkey !== 'string' ||
      typeof a.is_signer !== 'boolean' ||
      typeof a.is_writable !== 'boolean'
    ) {
      throw shapeError(`instruction ${i}, account ${j} needs pubkey, is_signer and is_writable`);
    }
    return { pubkey: address(a.pubkey, 'account'), isSigner: a.is_signer, isWritable: a.is_writable };
  });
  if (!Array.isArray(raw.data) || !raw.data.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) {
    throw shapeError(`instruction ${i}: data must be an array of integers 0-255`);
  }
  return { programId, accounts, data: Uint8Array.from(raw.data as number[]) };
}

function address(text: string, field: string): string {
  if (!decodeAddress(text)) {
    // Echo only what could be an address: a longer string might be a secret pasted into the wrong field.
    const shown = text.length <= 44 ? JSON.stringify(text) : `of ${text.length} characters`;
    throw invalid(`${field}: invalid address ${shown}: not a base58 32-byte public key`);
  }
  return text;
}
