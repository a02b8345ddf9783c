/**
 * The structural policy checks: pure functions of the prepared message (its resolved account list), the key and
 * the cluster, run in the order docs/policy.md lists them. The first that fails is the refusal; its message
 * names the instruction and the account at fault.
 */
import type { KeyConfig } from '../../../config/types';
import type { Refusal } from '../../refusals';
import type { StructureFacts } from '../facts';
import { feePayerRefusal } from './fee-payer';
import { allowedPrograms, instructionProgramRefusal } from './programs';
import { signersRefusal } from './signers';
import { systemInstructionRefusal } from './system-instructions';
import { tokenInstructionRefusal } from './token-instructions';
import { vaultRefusal } from './vault';
import { writableRefusal } from './writable';

/** The names pushed together when every structural check passes. */
export const STRUCTURAL_CHECKS = ['fee_payer', 'programs', 'tokens', 'system', 'vault', 'signers'] as const;

export function structuralRefusal(key: KeyConfig, f: StructureFacts): Refusal | null {
  const foreign = f.foreignFeePayer ?? null;
  return (
    feePayerRefusal(key, f.msg, foreign) ??
    instructionProgramRefusal(allowedPrograms(f.cluster, key), f.msg) ??
    tokenInstructionRefusal(key, f.msg) ??
    systemInstructionRefusal(key, f.msg) ??
    writableRefusal(key, f.msg) ??
    vaultRefusal(key, f.cluster, f.msg) ??
    signersRefusal(key, f.msg, f.partialSigners, foreign)
  );
}
