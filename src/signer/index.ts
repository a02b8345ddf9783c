/** Opens the engine on its real parts: the chain's JSON-RPC endpoint and the configured ledger store. */
import type { SignerConfig } from '../config/types';
import { RpcChainClient } from '../chain/rpc-client';
import type { ChainClient } from '../chain/types';
import { openLedger } from '../ledger/open';
import type { Ledger } from '../ledger/types';
import { Engine, type EngineDeps, type EngineLogger } from './engine';
import type { SignerEngine } from './types';

export interface OpenEngineOptions {
  logger?: EngineLogger;
  onReport?: EngineDeps['onReport'];
  /** Parts already opened by the caller (tests, the CLI reusing a ledger). */
  chain?: ChainClient;
  ledger?: Ledger;
}

export async function openEngine(config: SignerConfig, opts: OpenEngineOptions = {}): Promise<SignerEngine> {
  const chain = opts.chain ?? new RpcChainClient(config.cluster.rpc_url, { timeoutMs: config.timings.rpc_timeout_ms });
  let resolved = config;
  if (config.cluster.genesis_hash === null) {
    // Only the embedded chain has no fixed genesis: pin the one it reports now, so a later swap is caught.
    resolved = { ...config, cluster: { ...config.cluster, genesis_hash: await chain.getGenesisHash() } };
  }
  const ledger = opts.ledger ?? (await openLedger(config.ledger));
  return new Engine({ config: resolved, chain, ledger, logger: opts.logger, onReport: opts.onReport });
}

export type { SignerEngine } from './types';
export { Engine } from './engine';
