/**
 * The genesis hash the cluster's endpoints answer, kept between signs. A node's genesis hash never changes, so the
 * check before a sign compares the one last answered with the configured cluster's instead of asking again, and
 * every simulation's batch asks again in the same HTTP request as the simulation (`reread`): the endpoint that ran
 * the simulation is the one whose answer is checked, and a change (an endpoint of another cluster behind the same
 * URL, or failed over to) refuses that sign and every later one until the cluster's genesis is answered again.
 */
import type { CallLimits, RpcClient } from './types';

export class ClusterGenesis {
  private known: string | null = null;
  private fetching: Promise<string> | null = null;

  constructor(private readonly chain: Pick<RpcClient, 'getGenesisHash'>) {}

  /** The genesis hash last answered; asked for when none has been yet. */
  current(limits?: CallLimits): Promise<string> {
    if (this.known !== null) return Promise.resolve(this.known);
    this.fetching ??= this.reread(limits).finally(() => {
      this.fetching = null;
    });
    return this.fetching;
  }

  /** Asks again (call it in the tick a simulation is sent, so the two share one request). */
  reread(limits?: CallLimits): Promise<string> {
    return this.chain.getGenesisHash(limits).then((genesis) => {
      this.known = genesis;
      return genesis;
    });
  }
}

const byClient = new WeakMap<RpcClient, ClusterGenesis>();

/** The cluster genesis of a chain client: one per client. */
export function clusterGenesisOf(chain: RpcClient): ClusterGenesis {
  let genesis = byClient.get(chain);
  if (genesis === undefined) {
    genesis = new ClusterGenesis(chain);
    byClient.set(chain, genesis);
  }
  return genesis;
}
