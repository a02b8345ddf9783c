/**
 * A v1 payload's transaction: its shape, with a running lower bound of its compiled size checked as each
 * instruction is read, then (once everything is known to be bounded) its addresses decoded.
 */
import { decodeAddress } from '../util/base58';
import { isRecord } from '../util/is-record';
import { invalid, shapeError, tooMany } from './payload-errors';
import { BLOCKHASH_BYTES, HEADER_BYTES, KEY_BYTES, MAX_ADDRESS_CHARS, PAYLOAD_LIMITS } from './payload-limits';
import { MAX_TRANSACTION_BYTES, SIGNATURE_BYTES } from './wire/sizes';

/** An instruction of a v1 payload, its addresses decoded: what compile.ts compiles. */
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

export interface RawTransaction {
  feePayer: string;
  instructions: RawInstruction[];
}

/**
 * The transaction's shape, with a running lower bound of its compiled size checked before each instruction's
 * lists are walked, so no request makes the parser visit more entries than a transaction could hold.
 */
export function parseTransactionShape(raw: unknown): RawTransaction {
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

export function decodeInstruction(raw: RawInstruction): Instruction {
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

export function address(text: string, field: string): string {
  if (!decodeAddress(text)) {
    throw invalid(`${field}: invalid address ${JSON.stringify(text)}: not a base58 32-byte public key`);
  }
  return text;
}
