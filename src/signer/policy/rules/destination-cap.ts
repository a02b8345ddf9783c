/**
 * The SOL per-destination daily cap (`per_destination_per_day_lamports`): what one account received from the key
 * in 24 h, plus what this transaction pays it, may reach the cap but not pass it. The payments are the lamports
 * other accounts gain, less the rent of an account the transaction creates for a program (it is no payment to
 * anyone: rules/destinations.ts lets it through for the same reason). The ledger keeps what each account received
 * as data (an intent's `lamport_credits`, written from `lamportPayments`); the cap is compared here.
 */
import type { KeyConfig } from '../../../config/types';
import type { LamportCredit } from '../../../ledger/types';
import { refusal, type Refusal } from '../../refusals';
import { SYSTEM_PROGRAM } from '../../../solana/programs';
import type { LamportGain } from '../../flow/simulate';

/** The lamports each other account is paid: every gain but the rent of an account created for a program. */
export function lamportPayments(gains: readonly LamportGain[]): Pick<LamportCredit, 'address' | 'lamports'>[] {
  return gains
    .filter((g) => !(g.created && g.owner !== SYSTEM_PROGRAM))
    .map((g) => ({ address: g.address, lamports: g.lamports }));
}

export function destinationCapRefusal(
  key: KeyConfig,
  gains: readonly LamportGain[],
  received: ReadonlyMap<string, number>,
): Refusal | null {
  const cap = key.per_destination_per_day_lamports ?? null;
  if (cap === null) return null;
  for (const paid of lamportPayments(gains)) {
    const before = received.get(paid.address) ?? 0;
    if (before + paid.lamports <= cap) continue;
    return refusal(
      'per_destination_cap',
      `per-destination daily cap: ${paid.address} received ${before} lamports from this key in 24 h, plus ${paid.lamports} now, exceeds per_destination_per_day_lamports ${cap}`,
      { destination: paid.address, received: before, requested: paid.lamports, cap },
    );
  }
  return null;
}
