/**
 * Token instructions by their tag, before anything is simulated, so the common refusals name the instruction.
 * The token policy then judges what the simulation moved (tokens.ts), which also covers the same operations
 * reached through another program (movements.ts). Associated-token instructions may only create.
 */
import type { KeyConfig } from '../../../config/types';
import type { CompiledMessage } from '../../compile';
import { refusal, type Refusal } from '../../refusals';
import { tokenInstructionName, tokenInstructionVerdict } from '../../spl-tokens/instructions';
import { ASSOCIATED_TOKEN_PROGRAM, SYSTEM_PROGRAM, TOKEN_PROGRAMS } from '../../../solana/programs';
import { accountOf, programOf } from './instruction-accounts';

export function tokenInstructionRefusal(key: KeyConfig, msg: CompiledMessage): Refusal | null {
  const allowedOps = new Set(key.allow_token_ops ?? []);
  for (const [i, ix] of msg.instructions.entries()) {
    const program = programOf(msg, ix);
    if (program === undefined) continue; // refused by the programs check already
    if (TOKEN_PROGRAMS.has(program)) {
      const tag = ix.data[0];
      const verdict = tag === undefined ? 'refused' : tokenInstructionVerdict(tag);
      if (verdict === 'allowed' || (verdict !== 'refused' && allowedOps.has(verdict))) continue;
      const name =
        tag === undefined ? 'an empty token instruction' : `token instruction ${tokenInstructionName(tag, program)}`;
      return verdict === 'refused'
        ? refusal('token_instruction_refused', `instruction ${i} is ${name}, which the signer does not sign`, {
            instruction: i,
          })
        : refusal(
            'token_op_not_allowed',
            `instruction ${i} is ${name}, which this key may not do (add "${verdict}" to its allow_token_ops to allow it)`,
            { token_op: verdict },
          );
    }
    if (program !== ASSOCIATED_TOKEN_PROGRAM) continue;
    // Empty data is the legacy Create; only Create (0) and CreateIdempotent (1) may pass.
    const tag = ix.data[0] ?? 0;
    if (ix.data.length > 1 || (tag !== 0 && tag !== 1)) {
      return refusal(
        'ata_instruction_not_allowed',
        `instruction ${i} is associated-token instruction ${tag}; only create is allowed`,
        { instruction: i },
      );
    }
    const systemSlot = accountOf(msg, ix, 4);
    const tokenSlot = accountOf(msg, ix, 5);
    if (
      ix.accountIndices.length < 6 ||
      systemSlot !== SYSTEM_PROGRAM ||
      tokenSlot === undefined ||
      !TOKEN_PROGRAMS.has(tokenSlot)
    ) {
      return refusal(
        'ata_create_malformed',
        `instruction ${i} creates a token account without the System and SPL Token or Token-2022 programs`,
        { instruction: i },
      );
    }
  }
  return null;
}
