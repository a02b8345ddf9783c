/**
 * Whether the engine can sign now, for /readyz: the ledger answers, the RPC node answers for the configured cluster,
 * and every key can be used. A ledger warning (what a failover could lose) is shown without making it not ready.
 */
import type { ClusterProfile } from '../config/types';
import type { KeySet } from '../keys/key-set';
import type { Ledger } from '../ledger/types';
import type { RpcClient } from '../rpc/types';
import { errorMessage } from '../util/errors';

export async function engineReady(deps: {
  ledger: Ledger;
  chain: RpcClient;
  cluster: ClusterProfile;
  keys: KeySet;
}): Promise<{ ok: boolean; detail: Record<string, string> }> {
  const { ledger, chain, cluster, keys } = deps;
  const detail: Record<string, string> = {};
  const [ledgerUp, genesis] = await Promise.allSettled([ledger.ping(), chain.getGenesisHash()]);
  detail.ledger = ledgerUp.status === 'fulfilled' ? 'ok' : errorMessage(ledgerUp.reason);
  // Ready all the same: the warning is what a failover could lose, for the operator to fix (docs/ledger.md).
  const ledgerWarning = ledger.warning?.() ?? null;
  if (ledgerWarning !== null) detail.ledger_warning = ledgerWarning;
  if (genesis.status === 'rejected') detail.chain = errorMessage(genesis.reason);
  else if (cluster.genesis_hash !== null && genesis.value !== cluster.genesis_hash) {
    detail.chain = `RPC genesis hash ${genesis.value} is not ${cluster.name}`;
  } else detail.chain = 'ok';
  const problems = await keys.health();
  detail.keys = problems.length === 0 ? 'ok' : problems.map((p) => `${p.key}: ${p.message}`).join('; ');
  return { ok: detail.ledger === 'ok' && detail.chain === 'ok' && detail.keys === 'ok', detail };
}
