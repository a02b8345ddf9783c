/**
 * Test helper: compiles and signs legacy Solana transactions by hand (header, account keys, blockhash,
 * instructions), independent of the engine's compiler, so the localnet and the client are tested against the
 * wire format itself. Signing is node:crypto Ed25519 through src/keys/keypair.ts.
 */
import crypto from 'node:crypto';
import { generateKeypairBytes, signerFromKeypairBytes, type Signer } from '../../src/keys/keypair';
import { decodeAddress, decodeBase58, encodeBase58 } from '../../src/util/base58';

export const SYSTEM_PROGRAM = '11111111111111111111111111111111';
export const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
export const MEMO_PROGRAM = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';

export interface AccountMeta {
  pubkey: string;
  isSigner: boolean;
  isWritable: boolean;
}

export interface Ix {
  programId: string;
  accounts: AccountMeta[];
  data: Uint8Array;
}

export function newSigner(): Signer {
  return signerFromKeypairBytes(generateKeypairBytes())!;
}

export function randomAddress(): string {
  return encodeBase58(crypto.randomBytes(32));
}

export function transferIx(from: string, to: string, lamports: number): Ix {
  const data = Buffer.alloc(12);
  data.writeUInt32LE(2, 0); // SystemInstruction::Transfer
  data.writeBigUInt64LE(BigInt(lamports), 4);
  return {
    programId: SYSTEM_PROGRAM,
    accounts: [
      { pubkey: from, isSigner: true, isWritable: true },
      { pubkey: to, isSigner: false, isWritable: true },
    ],
    data,
  };
}

export function computeUnitPriceIx(microLamports: number): Ix {
  const data = Buffer.alloc(9);
  data[0] = 3;
  data.writeBigUInt64LE(BigInt(microLamports), 1);
  return { programId: COMPUTE_BUDGET_PROGRAM, accounts: [], data };
}

export function computeUnitLimitIx(units: number): Ix {
  const data = Buffer.alloc(5);
  data[0] = 2;
  data.writeUInt32LE(units, 1);
  return { programId: COMPUTE_BUDGET_PROGRAM, accounts: [], data };
}

export function memoIx(text: string): Ix {
  return { programId: MEMO_PROGRAM, accounts: [], data: Buffer.from(text) };
}

function shortvec(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    if (n === 0) return [...out, byte];
    out.push(byte | 0x80);
  }
}

/** Standard legacy account order: payer, writable signers, read-only signers, writable, read-only. */
export function compileLegacy(
  feePayer: string,
  ixs: Ix[],
  recentBlockhash: string,
): { message: Uint8Array; signers: string[] } {
  const metas = new Map<string, { signer: boolean; writable: boolean }>([[feePayer, { signer: true, writable: true }]]);
  const note = (key: string, signer: boolean, writable: boolean) => {
    const m = metas.get(key) ?? { signer: false, writable: false };
    metas.set(key, { signer: m.signer || signer, writable: m.writable || writable });
  };
  for (const ix of ixs) {
    for (const a of ix.accounts) note(a.pubkey, a.isSigner, a.isWritable);
    note(ix.programId, false, false);
  }
  const rest = [...metas.keys()].filter((k) => k !== feePayer);
  const group = (s: boolean, w: boolean) =>
    rest.filter((k) => metas.get(k)!.signer === s && metas.get(k)!.writable === w);
  const keys = [feePayer, ...group(true, true), ...group(true, false), ...group(false, true), ...group(false, false)];
  const signers = keys.filter((k) => metas.get(k)!.signer);
  const header = [signers.length, group(true, false).length, group(false, false).length];
  const index = (k: string) => keys.indexOf(k);
  const parts: number[][] = [header, shortvec(keys.length)];
  for (const k of keys) parts.push([...decodeAddress(k)!]);
  parts.push([...decodeBase58(recentBlockhash)!]);
  parts.push(shortvec(ixs.length));
  for (const ix of ixs) {
    parts.push(
      [index(ix.programId)],
      shortvec(ix.accounts.length),
      ix.accounts.map((a) => index(a.pubkey)),
    );
    parts.push(shortvec(ix.data.length), [...ix.data]);
  }
  return { message: Uint8Array.from(parts.flat()), signers };
}

/** A wire transaction; signers missing from `by` leave zero signatures (an unsigned transaction). */
export function assemble(message: Uint8Array, signers: string[], by: Signer[]): { base64: string; signature: string } {
  const sigs = signers.map((pk) => by.find((s) => s.pubkey === pk)?.sign(message) ?? new Uint8Array(64));
  const bytes = Buffer.concat([
    Buffer.from(shortvec(signers.length)),
    ...sigs.map((s) => Buffer.from(s)),
    Buffer.from(message),
  ]);
  return { base64: bytes.toString('base64'), signature: encodeBase58(sigs[0]!) };
}

export function signedTransfer(
  from: Signer,
  to: string,
  lamports: number,
  blockhash: string,
  extra: Ix[] = [],
): { base64: string; signature: string; messageBase64: string } {
  const { message, signers } = compileLegacy(from.pubkey, [...extra, transferIx(from.pubkey, to, lamports)], blockhash);
  return { ...assemble(message, signers, [from]), messageBase64: Buffer.from(message).toString('base64') };
}

export function unsignedTransfer(from: string, to: string, lamports: number, blockhash: string): { base64: string } {
  const { message, signers } = compileLegacy(from, [transferIx(from, to, lamports)], blockhash);
  return assemble(message, signers, []);
}
