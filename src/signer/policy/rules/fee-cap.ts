/** The fee cap (`max_fee_lamports`), on the most the message can pay in fees (rules/fee-bound.ts): before simulating. */
import type { KeyConfig } from '../../../config/types';
import { refusal, type Refusal } from '../../refusals';
import type { FeeBound } from '../../rules/fee-bound';

export function feeCapRefusal(key: KeyConfig, fee: FeeBound): Refusal | null {
  const cap = key.max_fee_lamports ?? null;
  if (cap === null || fee.total <= cap) return null;
  return refusal(
    'fee_cap',
    `fee cap: this transaction may pay ${fee.total} lamports in fees (${fee.base} base + ${fee.priority} priority from its ComputeBudget instructions), more than max_fee_lamports ${cap}; lower the compute unit price or limit`,
    { requested: fee.total, cap },
  );
}
