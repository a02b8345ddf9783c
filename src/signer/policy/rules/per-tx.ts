/** The per-transaction cap (`per_tx_lamports`): what one transaction costs the key, fee included, may not pass it. */
import type { KeyConfig } from '../../../config/types';
import { refusal, type Refusal } from '../../refusals';

export function perTxRefusal(key: KeyConfig, reservation: number): Refusal | null {
  const cap = key.per_tx_lamports ?? null;
  if (cap === null || reservation <= cap) return null;
  return refusal(
    'per_tx_cap',
    `per-transaction cap: this transaction costs the key ${reservation} lamports, fee included, more than ${cap}`,
    { requested: reservation, cap },
  );
}
