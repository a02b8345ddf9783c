/**
 * The fee a transaction pays, computed the way the runtime inside LiteSVM charges it, because LiteSVM does not
 * report the fee it took and both getFeeForMessage and getTransaction must state it:
 *   5000 lamports per signature (transaction signatures plus the ones precompile instructions verify)
 *   + ceil(compute-unit price (micro-lamports) × compute-unit limit / 1e6).
 * Without a SetComputeUnitLimit the limit is 3000 units per builtin instruction and 200 000 per other one,
 * capped at 1.4 M. test/localnet pins this against the lamports LiteSVM actually takes.
 */
import type { WireTransaction } from './wire';

export const LAMPORTS_PER_SIGNATURE = 5000;
const MAX_COMPUTE_UNIT_LIMIT = 1_400_000n;
const DEFAULT_UNITS_PER_BUILTIN_INSTRUCTION = 3_000n;
const DEFAULT_UNITS_PER_INSTRUCTION = 200_000n;

const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';

/** Programs the runtime treats as builtins when it reserves default compute units. */
const BUILTIN_PROGRAMS = new Set([
  '11111111111111111111111111111111',
  COMPUTE_BUDGET_PROGRAM,
  'Vote111111111111111111111111111111111111111',
  'BPFLoader1111111111111111111111111111111111',
  'BPFLoader2111111111111111111111111111111111',
  'BPFLoaderUpgradeab1e11111111111111111111111',
  'LoaderV411111111111111111111111111111111111',
  'ZkE1Gama1Proof11111111111111111111111111111',
  'Ed25519SigVerify111111111111111111111111111',
  'KeccakSecp256k11111111111111111111111111111',
  'Secp256r1SigVerify1111111111111111111111111',
]);

/** Precompiles whose first data byte counts the signatures they verify, each charged like a transaction signature. */
const SIGNATURE_PRECOMPILES = new Set([
  'Ed25519SigVerify111111111111111111111111111',
  'KeccakSecp256k11111111111111111111111111111',
  'Secp256r1SigVerify1111111111111111111111111',
]);

export function transactionFee(tx: WireTransaction): number {
  let signatures = tx.numRequiredSignatures;
  let explicitLimit: bigint | null = null;
  let microLamportsPerUnit = 0n;
  let defaultLimit = 0n;
  for (const ix of tx.instructions) {
    const program = tx.accountKeys[ix.programIdIndex] ?? '';
    defaultLimit += BUILTIN_PROGRAMS.has(program)
      ? DEFAULT_UNITS_PER_BUILTIN_INSTRUCTION
      : DEFAULT_UNITS_PER_INSTRUCTION;
    if (SIGNATURE_PRECOMPILES.has(program)) signatures += ix.data[0] ?? 0;
    if (program !== COMPUTE_BUDGET_PROGRAM) continue;
    const data = Buffer.from(ix.data.buffer, ix.data.byteOffset, ix.data.length);
    if (data[0] === 2 && data.length === 5) explicitLimit = BigInt(data.readUInt32LE(1));
    if (data[0] === 3 && data.length === 9) microLamportsPerUnit = data.readBigUInt64LE(1);
  }
  const limit = min(explicitLimit ?? defaultLimit, MAX_COMPUTE_UNIT_LIMIT);
  const priority = (microLamportsPerUnit * limit + 999_999n) / 1_000_000n;
  return Number(BigInt(signatures * LAMPORTS_PER_SIGNATURE) + priority);
}

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
