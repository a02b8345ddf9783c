/** Builders for version-1 payloads and throwaway keypairs used across the tests. */
import crypto from 'node:crypto';
import { encodeBase58 } from '../../src/util/base58';
import { generateKeypairBytes } from '../../src/keys/keypair';
import { SYSTEM_PROGRAM } from '../../src/solana/programs';

export interface TestKeypair {
  pubkey: string;
  /** 64 bytes: seed then public key (the payload's partial-signer form, base64). */
  bytes: Uint8Array;
  base64: string;
}

export function keypair(): TestKeypair {
  const bytes = generateKeypairBytes();
  return { pubkey: encodeBase58(bytes.subarray(32)), bytes, base64: Buffer.from(bytes).toString('base64') };
}

export function randomAddress(): string {
  return encodeBase58(crypto.randomBytes(32));
}

export interface PayloadInstruction {
  program_id: string;
  accounts: { pubkey: string; is_signer: boolean; is_writable: boolean }[];
  data: number[];
}

export function transferInstruction(from: string, to: string, lamports: number): PayloadInstruction {
  const data = Buffer.alloc(12);
  data.writeUInt32LE(2, 0);
  data.writeBigUInt64LE(BigInt(lamports), 4);
  return {
    program_id: SYSTEM_PROGRAM,
    accounts: [
      { pubkey: from, is_signer: true, is_writable: true },
      { pubkey: to, is_signer: false, is_writable: true },
    ],
    data: [...data],
  };
}

export function payload(
  feePayer: string,
  instructions: PayloadInstruction[],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    version: 1,
    summary: 'test payload',
    warnings: [],
    transaction: { fee_payer: feePayer, instructions },
    ...extra,
  };
}
