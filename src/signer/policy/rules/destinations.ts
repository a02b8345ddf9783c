/**
 * The destination allow-list applied to what the simulation shows, whichever program moved the lamports: every
 * writable account other than the key that gains lamports must be one of the key's `transfer_to`. The one
 * exception is the rent of an account the transaction creates for a program (it did not exist before and a
 * program other than System owns it afterwards, such as a token account); a new System account that gains
 * lamports is a payment to a wallet and needs listing like any other (docs/policy.md, "Destinations").
 */
import type { KeyConfig } from '../../../config/types';
import { refusal, type Refusal } from '../../refusals';
import { SYSTEM_PROGRAM } from '../../../solana/programs';
import type { LamportGain } from '../../flow/simulate';

export function destinationRefusal(key: KeyConfig, gains: readonly LamportGain[]): Refusal | null {
  const allowed = new Set(key.transfer_to);
  const stray = gains.find((g) => !allowed.has(g.address) && !(g.created && g.owner !== SYSTEM_PROGRAM));
  if (!stray) return null;
  return refusal(
    'destination_not_allowed',
    `the simulation moves ${stray.lamports} lamports to ${stray.address}, which is not an allowed destination (transfer_to)`,
    { destination: stray.address, requested: stray.lamports },
  );
}
