/**
 * Compiles a payload v1 instruction list into a Solana legacy message and serialises transactions.
 * Account order is the standard compile: fee payer, writable signers, read-only signers, writable
 * non-signers, read-only non-signers (program ids among them); within a group, sorted by key bytes, as the
 * Solana SDK's compiler orders them. The checks run on this compiled message, so indices are its indices.
 */
import { getShortU16Encoder } from '@solana/codecs-numbers';
import { SignerError } from '../util/errors';
import { decodeAddress, encodeBase58 } from '../util/base58';
import type { Instruction } from './payload-v1-shape';
import { MAX_TRANSACTION_BYTES, SIGNATURE_BYTES } from './wire/sizes';

export interface CompiledInstruction {
  programIdIndex: number;
  accountIndices: number[];
  data: Uint8Array;
}

export interface CompiledMessage {
  numRequiredSignatures: number;
  numReadonlySigned: number;
  numReadonlyUnsigned: number;
  accountKeys: string[];
  recentBlockhash: string;
  instructions: CompiledInstruction[];
  /** The serialised message: what every signer signs. */
  bytes: Uint8Array;
}

interface KeyMeta {
  key: string;
  bytes: Uint8Array;
  signer: boolean;
  writable: boolean;
}

export function compileLegacyMessage(
  feePayer: string,
  instructions: Instruction[],
  recentBlockhash: string,
): CompiledMessage {
  const metas = new Map<string, KeyMeta>();
  const note = (key: string, signer: boolean, writable: boolean) => {
    const m = metas.get(key);
    if (m) {
      m.signer ||= signer;
      m.writable ||= writable;
    } else {
      const bytes = decodeAddress(key);
      if (!bytes) throw new SignerError('payload_invalid', `${key} is not a base58 address of 32 bytes`);
      metas.set(key, { key, bytes, signer, writable });
    }
  };
  note(feePayer, true, true);
  const payer = metas.get(feePayer);
  if (!payer) throw new SignerError('internal', 'the fee payer was not noted');
  for (const ix of instructions) {
    for (const a of ix.accounts) note(a.pubkey, a.isSigner, a.isWritable);
    note(ix.programId, false, false);
  }
  const rest = [...metas.values()].filter((m) => m !== payer).sort((a, b) => Buffer.compare(a.bytes, b.bytes));
  const group = (signer: boolean, writable: boolean) =>
    rest.filter((m) => m.signer === signer && m.writable === writable);
  const ordered = [payer, ...group(true, true), ...group(true, false), ...group(false, true), ...group(false, false)];
  if (ordered.length > 256)
    throw new SignerError(
      'payload_invalid',
      `the transaction uses ${ordered.length} accounts; a legacy message holds at most 256`,
    );

  const index = new Map(ordered.map((m, i) => [m.key, i]));
  const indexOf = (key: string): number => {
    const i = index.get(key);
    if (i === undefined) throw new SignerError('internal', `account ${key} was not compiled`);
    return i;
  };
  const compiled: CompiledInstruction[] = instructions.map((ix) => ({
    programIdIndex: indexOf(ix.programId),
    accountIndices: ix.accounts.map((a) => indexOf(a.pubkey)),
    data: ix.data,
  }));
  const numRequiredSignatures = ordered.filter((m) => m.signer).length;
  const numReadonlySigned = ordered.filter((m) => m.signer && !m.writable).length;
  const numReadonlyUnsigned = ordered.filter((m) => !m.signer && !m.writable).length;
  const blockhashBytes = decodeAddress(recentBlockhash);
  if (!blockhashBytes) throw new SignerError('rpc', `getLatestBlockhash: the RPC returned an invalid blockhash`);

  const out = new ByteWriter();
  out.u8(numRequiredSignatures);
  out.u8(numReadonlySigned);
  out.u8(numReadonlyUnsigned);
  out.compactU16(ordered.length);
  for (const m of ordered) out.bytes(m.bytes);
  out.bytes(blockhashBytes);
  out.compactU16(compiled.length);
  for (const ix of compiled) {
    out.u8(ix.programIdIndex);
    out.compactU16(ix.accountIndices.length);
    for (const i of ix.accountIndices) out.u8(i);
    out.compactU16(ix.data.length);
    out.bytes(ix.data);
  }
  return {
    numRequiredSignatures,
    numReadonlySigned,
    numReadonlyUnsigned,
    accountKeys: ordered.map((m) => m.key),
    recentBlockhash,
    instructions: compiled,
    bytes: out.finish(),
  };
}

/** The message's required signers, in signature order. */
export function requiredSigners(msg: CompiledMessage): string[] {
  return msg.accountKeys.slice(0, msg.numRequiredSignatures);
}

/**
 * A wire transaction: the signatures in order of the required signers (zeros where a signer has not
 * signed: the form used to simulate without verification), then the message.
 */
export function serializeTransaction(msg: CompiledMessage, signatures: ReadonlyMap<string, Uint8Array>): Uint8Array {
  const count = getShortU16Encoder().encode(msg.numRequiredSignatures);
  const tx = new Uint8Array(count.length + msg.numRequiredSignatures * SIGNATURE_BYTES + msg.bytes.length);
  tx.set(count, 0);
  // Zeroes where a signer has not signed: the form simulated without verification, or left for a co-signer.
  for (const [slot, signer] of requiredSigners(msg).entries()) {
    const sig = signatures.get(signer);
    if (sig) tx.set(sig, count.length + slot * SIGNATURE_BYTES);
  }
  tx.set(msg.bytes, count.length + msg.numRequiredSignatures * SIGNATURE_BYTES);
  if (tx.length > MAX_TRANSACTION_BYTES) {
    throw new SignerError(
      'payload_invalid',
      `the transaction is ${tx.length} bytes; a transaction must fit in ${MAX_TRANSACTION_BYTES} bytes`,
    );
  }
  return tx;
}

export function signatureToBase58(sig: Uint8Array): string {
  return encodeBase58(sig);
}

class ByteWriter {
  private buf = Buffer.allocUnsafe(1536);
  private len = 0;

  private ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + n));
    this.buf.copy(next, 0, 0, this.len);
    this.buf = next;
  }

  u8(v: number): void {
    this.ensure(1);
    this.buf[this.len++] = v;
  }

  compactU16(v: number): void {
    let rem = v;
    for (;;) {
      const byte = rem & 0x7f;
      rem >>= 7;
      if (rem === 0) {
        this.u8(byte);
        return;
      }
      this.u8(byte | 0x80);
    }
  }

  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }

  finish(): Uint8Array {
    return new Uint8Array(this.buf.subarray(0, this.len));
  }
}
