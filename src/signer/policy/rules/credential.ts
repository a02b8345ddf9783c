/**
 * A credential's spend checks (docs/credentials.md) on what the simulation says a transaction moves: the lamports
 * the key loses (fee included) and the accounts that gain lamports, with the destination rule's one exception (the
 * rent of an account a program owns once created, such as a token account). The checks themselves are the
 * credential's; this only states the figures and turns the credential's refusal into a coded one.
 */
import type { KeyConfig } from '../../../config/types';
import { spendOf } from '../../../ledger/usage-book';
import type { LamportGain } from '../../flow/simulate';
import { SYSTEM_PROGRAM } from '../../../solana/programs';
import { refusal, type Refusal } from '../../refusals';
import type { CredentialSpendCheck } from '../../types';

export function credentialSpendRefusal(
  check: CredentialSpendCheck | undefined,
  key: KeyConfig,
  balanceChange: number | null,
  gains: readonly LamportGain[],
): Refusal | null {
  if (check === undefined) return null;
  if (balanceChange === null)
    return refusal(
      'spend_unknown',
      "the simulation did not report this key's balance, so the credential's spend limits cannot be judged",
    );
  const lamportsOut = spendOf(balanceChange);
  const destinations = gains.filter((g) => !(g.created && g.owner !== SYSTEM_PROGRAM)).map((g) => g.address);
  const refused = check({ key: key.name, lamports_out: lamportsOut, destinations });
  if (refused === null) return null;
  const [only] = destinations;
  return refusal('credential_limit', refused.message, {
    requested: lamportsOut,
    ...(destinations.length === 1 && only !== undefined ? { destination: only } : {}),
  });
}

/**
 * A message moves nothing: after its approval the credential is judged again on a spend of nothing, so one that
 * expired while the operators decided signs nothing.
 */
export function credentialMessageRefusal(check: CredentialSpendCheck | undefined, key: KeyConfig): Refusal | null {
  const refused = check?.({ key: key.name, lamports_out: 0, destinations: [] }) ?? null;
  if (refused === null) return null;
  return refusal('credential_limit', `after approval: ${refused.message}`, { requested: 0 });
}
