/**
 * The programs a recorded sign called, against the programs the key may call now (policy replay; a transaction
 * being signed has its programs judged instruction by instruction in rules/structural.ts).
 */
import { refusal, type Refusal } from '../../refusals';

export function recordedProgramRefusal(allowed: readonly string[], called: readonly string[]): Refusal | null {
  const allow = new Set(allowed);
  const program = called.find((p) => !allow.has(p));
  if (program === undefined) return null;
  return refusal('program_not_allowed', `calls ${program}, which the new policy does not allow`, { program });
}
