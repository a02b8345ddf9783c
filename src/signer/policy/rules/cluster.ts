/**
 * The RPC answers for the configured cluster: its genesis hash is the cluster's (checked before the transaction is
 * prepared), and the node that simulated it is the one that answered before (checked with the simulation's batch).
 * A payload's own blockhash must still be valid there.
 */
import { refusal, type Refusal } from '../../refusals';

/** `expected` null: the cluster names no genesis hash, and any answer is taken. */
export function clusterRefusal(clusterName: string, expected: string | null, answered: string): Refusal | null {
  if (expected === null || answered === expected) return null;
  return refusal('wrong_cluster', `RPC genesis hash ${answered} is not ${clusterName}`, { genesis_hash: answered });
}

/** The node the simulation ran on answered another genesis hash than the one checked before it. */
export function clusterChangedRefusal(checked: string, answered: string): Refusal | null {
  if (answered === checked) return null;
  return refusal(
    'wrong_cluster',
    `RPC genesis hash ${answered} is not the ${checked} it answered before the simulation`,
    { genesis_hash: answered },
  );
}

/** The payload's own blockhash is no longer valid on this cluster (read in the simulation's batch). */
export function blockhashExpiredRefusal(blockhash: string): Refusal {
  return refusal(
    'blockhash_expired',
    `the transaction's blockhash ${blockhash} has expired or is unknown to this cluster: fetch a fresh blockhash and rebuild it, or set replace_blockhash: true when no one else has signed`,
    { blockhash },
  );
}
