/**
 * The programs a key may call: each top-level instruction of a transaction being signed, and the programs a
 * recorded sign called (policy replay), against the same list.
 */
import type { ClusterProfile, KeyConfig } from '../../../config/types';
import type { CompiledMessage } from '../../compile';
import { refusal, type Refusal } from '../../refusals';
import { ALWAYS_ALLOWED_PROGRAMS } from '../../../solana/programs';
import { programOf } from './instruction-accounts';

/**
 * The top-level programs a key may call, in order, once each: the cluster's, the key's extras, and those every key
 * may call (the token programs are judged by the token policy from the simulation; Memo and ComputeBudget move no
 * value). key_show shows the same list.
 */
export function allowedPrograms(cluster: ClusterProfile, key: KeyConfig): string[] {
  return [...new Set([...cluster.programs.map((p) => p.address), ...key.extra_programs, ...ALWAYS_ALLOWED_PROGRAMS])];
}

export function instructionProgramRefusal(allowed: readonly string[], msg: CompiledMessage): Refusal | null {
  const allow = new Set(allowed);
  for (const [i, ix] of msg.instructions.entries()) {
    const program = programOf(msg, ix);
    if (program === undefined)
      return refusal('program_missing', `instruction ${i} has no program id`, { instruction: i });
    if (!allow.has(program))
      return refusal('program_not_allowed', `instruction ${i} calls ${program}, which is not allowed`, {
        instruction: i,
        program,
      });
  }
  return null;
}

export function recordedProgramRefusal(allowed: readonly string[], called: readonly string[]): Refusal | null {
  const allow = new Set(allowed);
  const program = called.find((p) => !allow.has(p));
  if (program === undefined) return null;
  return refusal('program_not_allowed', `calls ${program}, which the new policy does not allow`, { program });
}
