/** The refusal a halted key gets, and who halted it as an agent may read it. */
import type { HaltRecord } from '../../../ledger/types';
import { refusal, type Refusal } from '../../refusals';

/**
 * Who halted a key, as agents see it: an operator's name stays with the operators (the ledger, the audit log, the
 * CLI), an agent reads only `operator`. A token's label (`token:NAME`) is the agent side's own and stays.
 */
export function haltedByForAgents(by: string): string {
  return by.startsWith('operator:') ? 'operator' : by;
}

export function haltRefusal(h: HaltRecord): Refusal {
  const by = haltedByForAgents(h.by);
  return refusal(
    'halted',
    `key "${h.key}" was halted by ${by} at ${new Date(h.ts * 1000).toISOString()}: ${h.reason}; only an operator can release it (sa-forge-signer resume ${h.key})`,
    { by },
  );
}
