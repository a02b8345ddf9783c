/**
 * The most a transaction can pay in fees, read from the message alone (before any simulation): the base fee per
 * signature (the transaction's own, and every one its precompile instructions verify) plus the priority fee its ComputeBudget instructions set (price × unit limit). Without a unit limit
 * the runtime's default allowance is assumed for every other instruction, which bounds the fee from above.
 */
import { getU32Decoder, getU64Decoder } from '@solana/codecs-numbers';
import type { CompiledMessage } from '../compile';
import { COMPUTE_BUDGET_PROGRAM, PRECOMPILE_PROGRAMS } from '../../solana/programs';

export const LAMPORTS_PER_SIGNATURE = 5_000;
const SET_COMPUTE_UNIT_LIMIT = 2;
const SET_COMPUTE_UNIT_PRICE = 3;
const DEFAULT_UNITS_PER_INSTRUCTION = 200_000;
const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;
const MICRO_LAMPORTS_PER_LAMPORT = 1_000_000n;

export interface FeeBound {
  base: number;
  priority: number;
  total: number;
}

export function feeBound(msg: CompiledMessage): FeeBound {
  let limit: number | null = null;
  let price = 0n;
  let others = 0;
  let verified = 0;
  for (const ix of msg.instructions) {
    const program = msg.accountKeys[ix.programIdIndex] ?? '';
    // The count a precompile instruction declares is what the fee charges, whether or not it verifies.
    if (PRECOMPILE_PROGRAMS.has(program)) verified += ix.data[0] ?? 0;
    if (program !== COMPUTE_BUDGET_PROGRAM) {
      others += 1;
      continue;
    }
    // A malformed or repeated ComputeBudget instruction fails the transaction; the largest value still bounds it.
    if (ix.data[0] === SET_COMPUTE_UNIT_LIMIT && ix.data.length >= 5) {
      limit = Math.max(limit ?? 0, getU32Decoder().decode(ix.data, 1));
    } else if (ix.data[0] === SET_COMPUTE_UNIT_PRICE && ix.data.length >= 9) {
      const p = getU64Decoder().decode(ix.data, 1);
      if (p > price) price = p;
    }
  }
  const units = Math.min(limit ?? others * DEFAULT_UNITS_PER_INSTRUCTION, MAX_COMPUTE_UNIT_LIMIT);
  const micro = price * BigInt(units);
  const priorityBig = (micro + MICRO_LAMPORTS_PER_LAMPORT - 1n) / MICRO_LAMPORTS_PER_LAMPORT;
  const priority = priorityBig > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(priorityBig);
  const base = (msg.numRequiredSignatures + verified) * LAMPORTS_PER_SIGNATURE;
  return { base, priority, total: Math.min(base + priority, Number.MAX_SAFE_INTEGER) };
}
