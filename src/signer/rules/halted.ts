/** The refusal a halted key gets, naming who halted it and how an operator lifts it. */
import type { HaltRecord } from '../../ledger/types';
import { refusal, type Refusal } from '../refusals';

export function haltRefusal(h: HaltRecord): Refusal {
  return refusal(
    'halted',
    `key "${h.key}" was halted by ${h.by} at ${new Date(h.ts * 1000).toISOString()}: ${h.reason}; only an operator can release it (sa-forge-signer resume ${h.key})`,
    { by: h.by },
  );
}
