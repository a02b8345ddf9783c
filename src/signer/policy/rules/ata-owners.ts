/**
 * A token account the transaction creates for someone other than the key or its transfer destinations must
 * belong to an account of a game program: the flow reads those owners' accounts (ataOwnersToVerify says which),
 * the rule judges their program owners.
 */
import type { ClusterProfile, KeyConfig } from '../../../config/types';
import type { CompiledMessage } from '../../compile';
import { refusal, type Refusal } from '../../refusals';
import { ASSOCIATED_TOKEN_PROGRAM } from '../../../solana/programs';
import { accountOf, programOf } from './instruction-accounts';

/**
 * Owners of token accounts the transaction would create that need an on-chain look-up: every ATA owner other than
 * the key and its transfer destinations, once each. A malformed ATA instruction is a refusal.
 */
export function ataOwnersToVerify(key: KeyConfig, msg: CompiledMessage): Refusal | string[] {
  const trusted = new Set([key.pubkey, ...key.transfer_to]);
  const owners: string[] = [];
  for (const [i, ix] of msg.instructions.entries()) {
    if (programOf(msg, ix) !== ASSOCIATED_TOKEN_PROGRAM) continue;
    const owner = ix.accountIndices.length < 6 ? undefined : accountOf(msg, ix, 2);
    if (owner === undefined)
      return refusal('ata_accounts_missing', `instruction ${i} is missing associated-token accounts`, {
        instruction: i,
      });
    if (!trusted.has(owner) && !owners.includes(owner)) owners.push(owner);
  }
  return owners;
}

/**
 * The first owner whose account is not a game program's: `programOwners` holds, for each of `owners`, the program
 * owning its account on chain (null: no such account).
 */
export function ataOwnerRefusal(
  cluster: ClusterProfile,
  owners: readonly string[],
  programOwners: readonly (string | null)[],
): Refusal | null {
  const games = new Set(cluster.game_programs);
  const foreign = owners.find((_, i) => {
    const program = programOwners[i] ?? null;
    return program === null || !games.has(program);
  });
  if (foreign === undefined) return null;
  return refusal(
    'ata_owner_not_allowed',
    `a token account would be created for ${foreign}, which is neither this key, one of its transfer destinations, nor an account of a game program`,
    { account: foreign },
  );
}
