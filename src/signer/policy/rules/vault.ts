/**
 * A session key never withdraws its Player Profile's vault (DrainSolVault); wallet keys keep it, and the chain
 * enforces every other Player Profile permission.
 */
import type { ClusterProfile, KeyConfig } from '../../../config/types';
import type { CompiledMessage } from '../../compile';
import { refusal, type Refusal } from '../../refusals';
import { DRAIN_SOL_VAULT_DISCRIMINATOR } from '../../../solana/programs';
import { programOf } from './instruction-accounts';

export function vaultRefusal(key: KeyConfig, cluster: ClusterProfile, msg: CompiledMessage): Refusal | null {
  if (key.class !== 'session' || cluster.player_profile === null) return null;
  for (const [i, ix] of msg.instructions.entries()) {
    if (programOf(msg, ix) !== cluster.player_profile) continue;
    if (ix.data.length < 8)
      return refusal(
        'vault_instruction_malformed',
        `instruction ${i} is too short to parse as a Player Profile instruction`,
        { instruction: i },
      );
    if (DRAIN_SOL_VAULT_DISCRIMINATOR.every((b, j) => ix.data[j] === b)) {
      return refusal(
        'vault_withdrawal',
        `instruction ${i} withdraws the profile vault, which is refused for this key`,
        { instruction: i },
      );
    }
  }
  return null;
}
