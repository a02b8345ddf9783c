/** The refusal a halted key gets, naming who halted it and how an operator lifts it. */
import type { HaltRecord } from '../../ledger/types';
import type { Refusal } from '../checks';

export function haltRefusal(h: HaltRecord): Refusal {
  return {
    check: 'halted',
    message: `key "${h.key}" was halted by ${h.by} at ${new Date(h.ts * 1000).toISOString()}: ${h.reason}; only an operator can release it (sa-forge-signer resume ${h.key})`,
  };
}
