/**
 * The chain client a configured signer uses: the cluster's endpoints and commitment, and the retry and
 * failover settings from `timings` (docs/chain.md).
 */
import { clusterCommitment, clusterRpcUrls } from '../config/clusters';
import type { ClusterProfile, Timings } from '../config/types';
import type { RetrySettings } from './resilient-rpc';
import { JsonRpcClient } from './rpc-client';

export function retrySettings(t: Timings): RetrySettings {
  return {
    retries: t.rpc_retries,
    backoff: { baseMs: t.rpc_backoff_base_ms, maxMs: t.rpc_backoff_max_ms },
    retryAfterMaxMs: t.rpc_retry_after_max_ms,
    budgetMs: t.rpc_retry_budget_ms,
  };
}

export function chainClientFor(cluster: ClusterProfile, timings: Timings): JsonRpcClient {
  return new JsonRpcClient(clusterRpcUrls(cluster), {
    timeoutMs: timings.rpc_timeout_ms,
    commitment: clusterCommitment(cluster),
    retry: retrySettings(timings),
    cooldownMs: timings.rpc_endpoint_cooldown_ms,
  });
}
