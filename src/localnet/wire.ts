/**
 * Reads a Solana wire transaction (legacy or v0) far enough for the localnet to act like a node: the
 * signatures, the header, the static account keys, where the recent blockhash sits (so it can be checked
 * and replaced), and the instructions (for the fee and for getTransaction). It sanitizes the same way a node
 * does before it accepts a transaction, so a malformed one is refused with a reason instead of reaching LiteSVM.
 */
import { encodeBase58 } from '../util/base58';

export interface WireInstruction {
  programIdIndex: number;
  accounts: number[];
  data: Uint8Array;
}

export interface WireLookup {
  accountKey: string;
  writableIndexes: number[];
  readonlyIndexes: number[];
}

export interface WireTransaction {
  /** The whole transaction as received. */
  bytes: Uint8Array;
  version: 'legacy' | 0;
  signatures: Uint8Array[];
  /** Offset of the message within `bytes`: the signed part runs from here to the end. */
  messageOffset: number;
  numRequiredSignatures: number;
  numReadonlySigned: number;
  numReadonlyUnsigned: number;
  accountKeys: string[];
  /** The same keys as raw bytes (views into `bytes`), for LiteSVM calls. */
  accountKeyBytes: Uint8Array[];
  recentBlockhash: string;
  /** Offset of the 32 blockhash bytes within `bytes`. */
  blockhashOffset: number;
  instructions: WireInstruction[];
  addressTableLookups: WireLookup[];
}

export class WireError extends Error {}

class Reader {
  offset = 0;
  constructor(readonly bytes: Uint8Array) {}

  u8(what: string): number {
    if (this.offset >= this.bytes.length) throw new WireError(`truncated at ${what}`);
    return this.bytes[this.offset++] ?? 0;
  }

  /** Solana's compact-u16 (shortvec): 1–3 bytes, little-endian 7-bit groups, minimal encoding. */
  shortvec(what: string): number {
    let value = 0;
    for (let i = 0; i < 3; i++) {
      const byte = this.u8(what);
      value |= (byte & 0x7f) << (7 * i);
      if ((byte & 0x80) === 0) {
        if (i > 0 && byte === 0) throw new WireError(`non-minimal length at ${what}`);
        if (value > 0xffff) throw new WireError(`length overflow at ${what}`);
        return value;
      }
    }
    throw new WireError(`length overflow at ${what}`);
  }

  take(n: number, what: string): Uint8Array {
    if (this.offset + n > this.bytes.length) throw new WireError(`truncated at ${what}`);
    const out = this.bytes.subarray(this.offset, this.offset + n);
    this.offset += n;
    return out;
  }
}

export function parseWireTransaction(bytes: Uint8Array): WireTransaction {
  const r = new Reader(bytes);
  const numSignatures = r.shortvec('signature count');
  const signatures: Uint8Array[] = [];
  for (let i = 0; i < numSignatures; i++) signatures.push(r.take(64, 'signature'));
  const messageOffset = r.offset;

  let version: 'legacy' | 0 = 'legacy';
  const first = r.u8('message header');
  let numRequiredSignatures = first;
  if (first & 0x80) {
    const v = first & 0x7f;
    if (v !== 0) throw new WireError(`unsupported transaction version ${v}`);
    version = 0;
    numRequiredSignatures = r.u8('message header');
  }
  const numReadonlySigned = r.u8('message header');
  const numReadonlyUnsigned = r.u8('message header');

  const numKeys = r.shortvec('account key count');
  const accountKeyBytes: Uint8Array[] = [];
  for (let i = 0; i < numKeys; i++) accountKeyBytes.push(r.take(32, 'account key'));
  const accountKeys = accountKeyBytes.map(encodeBase58);
  const blockhashOffset = r.offset;
  const recentBlockhash = encodeBase58(r.take(32, 'recent blockhash'));

  const numInstructions = r.shortvec('instruction count');
  const instructions: WireInstruction[] = [];
  for (let i = 0; i < numInstructions; i++) {
    const programIdIndex = r.u8('program index');
    const accounts = Array.from(r.take(r.shortvec('instruction accounts'), 'instruction accounts'));
    const data = r.take(r.shortvec('instruction data'), 'instruction data');
    instructions.push({ programIdIndex, accounts, data });
  }

  const addressTableLookups: WireLookup[] = [];
  if (version === 0) {
    const numLookups = r.shortvec('lookup count');
    for (let i = 0; i < numLookups; i++) {
      const accountKey = encodeBase58(r.take(32, 'lookup table'));
      const writableIndexes = Array.from(r.take(r.shortvec('lookup indexes'), 'lookup indexes'));
      const readonlyIndexes = Array.from(r.take(r.shortvec('lookup indexes'), 'lookup indexes'));
      addressTableLookups.push({ accountKey, writableIndexes, readonlyIndexes });
    }
  }
  if (r.offset !== bytes.length) throw new WireError('trailing bytes after the message');

  const tx: WireTransaction = {
    bytes,
    version,
    signatures,
    messageOffset,
    numRequiredSignatures,
    numReadonlySigned,
    numReadonlyUnsigned,
    accountKeys,
    accountKeyBytes,
    recentBlockhash,
    blockhashOffset,
    instructions,
    addressTableLookups,
  };
  sanitize(tx);
  return tx;
}

/** The checks a node's sanitize step makes; a node refuses such a transaction before it is ever forwarded. */
function sanitize(tx: WireTransaction): void {
  if (tx.signatures.length !== tx.numRequiredSignatures) {
    throw new WireError(`${tx.signatures.length} signatures for ${tx.numRequiredSignatures} required signers`);
  }
  if (tx.numRequiredSignatures === 0) throw new WireError('no fee payer: the message requires no signatures');
  const loaded = tx.addressTableLookups.reduce((n, l) => n + l.writableIndexes.length + l.readonlyIndexes.length, 0);
  const total = tx.accountKeys.length + loaded;
  if (total > 256) throw new WireError('more than 256 accounts');
  if (tx.numRequiredSignatures > tx.accountKeys.length) throw new WireError('more required signers than account keys');
  if (tx.numReadonlySigned >= tx.numRequiredSignatures) throw new WireError('the fee payer must be a writable signer');
  if (tx.numReadonlyUnsigned > tx.accountKeys.length - tx.numRequiredSignatures) {
    throw new WireError('more read-only unsigned accounts than unsigned accounts');
  }
  if (new Set(tx.accountKeys).size !== tx.accountKeys.length) throw new WireError('an account key appears twice');
  for (const ix of tx.instructions) {
    // A program id must be a static key and never the fee payer.
    if (ix.programIdIndex === 0 || ix.programIdIndex >= tx.accountKeys.length) {
      throw new WireError('an instruction names a program outside the static account keys');
    }
    for (const a of ix.accounts)
      if (a >= total) throw new WireError('an instruction names an account index out of range');
  }
}

export function signatureOf(tx: WireTransaction): string {
  return encodeBase58(tx.signatures[0] ?? new Uint8Array(64));
}

export function messageBytes(tx: WireTransaction): Uint8Array {
  return tx.bytes.subarray(tx.messageOffset);
}

/** Parses a bare message (as getFeeForMessage receives it) by wrapping it with empty signature slots. */
export function parseWireMessage(message: Uint8Array): WireTransaction {
  const first = message[0];
  if (first === undefined) throw new WireError('empty message');
  const required = first & 0x80 ? message[1] : first;
  if (required === undefined || required > 0x7f) throw new WireError('truncated at message header');
  const prefix = new Uint8Array(1 + 64 * required);
  prefix[0] = required;
  const wrapped = new Uint8Array(prefix.length + message.length);
  wrapped.set(prefix, 0);
  wrapped.set(message, prefix.length);
  return parseWireTransaction(wrapped);
}
