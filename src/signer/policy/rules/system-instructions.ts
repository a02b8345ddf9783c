/** System program instructions: only a transfer, and only to one of the key's `transfer_to`. */
import type { KeyConfig } from '../../../config/types';
import type { CompiledMessage } from '../../compile';
import { refusal, type Refusal } from '../../refusals';
import { SYSTEM_PROGRAM, SYSTEM_TRANSFER_TAG } from '../../../solana/programs';
import { accountOf, programOf } from './instruction-accounts';

export function systemInstructionRefusal(key: KeyConfig, msg: CompiledMessage): Refusal | null {
  const destinations = new Set(key.transfer_to);
  for (const [i, ix] of msg.instructions.entries()) {
    if (programOf(msg, ix) !== SYSTEM_PROGRAM) continue;
    if (ix.data.length < 4)
      return refusal('system_instruction_malformed', `instruction ${i} is too short`, { instruction: i });
    const tag = Buffer.from(ix.data.buffer, ix.data.byteOffset, 4).readUInt32LE(0);
    if (tag !== SYSTEM_TRANSFER_TAG)
      return refusal(
        'system_instruction_not_allowed',
        `instruction ${i} is System instruction ${tag}, which is not allowed`,
        { instruction: i },
      );
    const destination = accountOf(msg, ix, 1);
    if (destination === undefined)
      return refusal('system_instruction_malformed', `instruction ${i} is missing an account`, { instruction: i });
    if (!destinations.has(destination)) {
      return refusal(
        'transfer_destination_not_allowed',
        `instruction ${i} transfers to ${destination}, which is not an allowed destination`,
        { instruction: i, destination },
      );
    }
  }
  return null;
}
