/**
 * The bounds of a payload, each derived from the 1232-byte packet a transaction must fit in: every list and string
 * an agent sends is held to them before anything costs time (docs/payload-limits.md lists them for agent authors).
 */
import { MAX_TRANSACTION_BYTES, SIGNATURE_BYTES } from './wire/sizes';

// Sizes on the wire, for the arithmetic below.
export const KEY_BYTES = 32;
export const BLOCKHASH_BYTES = 32;
export const HEADER_BYTES = 3;
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
export const KEYPAIR_BASE64_CHARS = 88;
/** A base58 32-byte address is 32 to 44 characters. */
export const MAX_ADDRESS_CHARS = 44;
