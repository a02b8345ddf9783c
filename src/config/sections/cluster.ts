/**
 * `cluster`, the RPC settings and `clusters`: which chain the signer signs for and how it reaches it. The built-in
 * clusters are data in src/config/clusters.ts; others are declared under `clusters:` and checked entry by entry.
 */
import { decodeAddress } from '../../util/base58';
import { BUILT_IN_CLUSTERS, LOCAL_DEFAULT_RPC_URL, ZINK_TESTNET, localCluster, namedEndpoints } from '../clusters';
import { fail, validateEntry } from '../fail';
import { section, type Infer } from '../setting';
import {
  clusterSchema,
  programEntrySchema,
  type ClusterCommitment,
  type ClusterProfile,
  type ProgramEntry,
} from './cluster-profile';

/** The top-level choice of cluster, and the endpoints and commitment that override the cluster's own. */
export const clusterChoiceSchema = section({
  cluster: {
    doc: 'The chain to sign for: `zink-testnet` (built in), `local` (the embedded chain, development only) or a name declared under `clusters`.',
    format: 'non-empty-string',
    default: 'zink-testnet',
    env: 'SIGNER_CLUSTER',
  },
  rpc_url: {
    doc: "Solana JSON-RPC endpoint; null uses the cluster's own. Its genesis hash must be the cluster's, or every check refuses (`cluster`).",
    format: 'http-url-or-null',
    default: null,
    nullable: true,
    sensitive: true, // an error never shows the URL: providers put API keys in it
    env: 'SIGNER_RPC_URL',
  },
  rpc_urls: {
    doc: "Several JSON-RPC endpoints of the cluster, in order of preference (instead of rpc_url); calls fail over between them (docs/chain.md). [] uses rpc_url or the cluster's own. Comma-separated in the env var.",
    format: 'http-url-list',
    default: [],
    sensitive: true, // an error never shows the URLs: providers put API keys in them
    env: 'SIGNER_RPC_URLS',
  },
  ws_url: {
    doc: "WebSocket endpoint the signer subscribes to signatures on (signatureSubscribe); null uses the cluster's own, else one derived beside each RPC endpoint (http → ws, https → wss, same host, port and path). Set it for a node whose WebSocket is elsewhere (solana-test-validator: the RPC port + 1).",
    format: 'ws-url-or-null',
    default: null,
    nullable: true,
    sensitive: true, // an error never shows the URL: providers put API keys in it
    env: 'SIGNER_WS_URL',
  },
  ws_urls: {
    doc: 'Several WebSocket endpoints in order of preference (instead of ws_url); a subscription moves to the next while one is down. Comma-separated in the env var.',
    format: 'ws-url-list',
    default: [],
    sensitive: true, // an error never shows the URLs: providers put API keys in them
    env: 'SIGNER_WS_URLS',
  },
  signature_subscriptions: {
    doc: 'Learn that a sent transaction reached the commitment from a WebSocket notification (signatureSubscribe), then confirm it with the status read, instead of waiting for the next poll; polling (timings.poll_interval_ms) goes on beside it and alone while the WebSocket is down. false: polling only, and the WebSocket client is never loaded.',
    format: 'bool-strict',
    default: true,
    env: 'SIGNER_SIGNATURE_SUBSCRIPTIONS',
  },
  commitment: {
    doc: "`confirmed` or `finalized`: the commitment reads use and a transaction must reach to count as landed; null uses the cluster's own (`confirmed` for the built-in clusters).",
    format: ['confirmed', 'finalized', null],
    default: null,
    nullable: true,
    env: 'SIGNER_COMMITMENT',
  },
});

export const clustersSchema = section({
  clusters: {
    doc: 'Custom clusters by name; each entry follows the cluster schema (genesis_hash, rpc_url, programs...). A new cluster is config, not code.',
    format: Object,
    default: {},
  },
});

type ClusterChoice = Infer<typeof clusterChoiceSchema>;

export function buildPrograms(list: readonly unknown[], where: string): ProgramEntry[] {
  return list.map((p, i) => validateEntry(programEntrySchema, p, `${where}[${i}]`));
}

/** The endpoints a config names at `where` (top level: '', a cluster: 'clusters.x.'), or null for none. */
function endpointsAt(
  where: string,
  single: string | null,
  list: string[],
  kind: 'rpc' | 'ws' = 'rpc',
): string[] | null {
  const named = namedEndpoints(where, single, list, kind);
  if ('error' in named) fail(named.error);
  return named.urls;
}

/**
 * The top-level endpoints and commitment, when set, override the cluster's own. WebSocket endpoints go with the
 * RPC endpoints of their level: the top-level ones, else derived from top-level RPC endpoints when those are set,
 * else the cluster's own.
 */
function withRpc(
  cluster: ClusterProfile,
  top: ClusterChoice,
  own: { urls: string[]; commitment: ClusterCommitment; ws: string[] | null },
): ClusterProfile {
  const topUrls = endpointsAt('', top.rpc_url, top.rpc_urls);
  const urls = topUrls ?? own.urls;
  const ws = endpointsAt('', top.ws_url, top.ws_urls, 'ws') ?? (topUrls === null ? own.ws : null);
  return {
    ...cluster,
    rpc_url: urls[0] ?? cluster.rpc_url,
    rpc_urls: urls,
    ...(ws === null ? {} : { ws_urls: ws }),
    signature_subscriptions: top.signature_subscriptions,
    commitment: top.commitment ?? own.commitment,
  };
}

/** The cluster the config chooses, with its endpoints; `local` takes its game programs from `localnet`. */
export function buildCluster(
  top: ClusterChoice,
  clusters: Record<string, unknown>,
  localnet: { game_programs: readonly unknown[]; player_profile: string | null },
): ClusterProfile {
  for (const name of Object.keys(clusters)) {
    if ((BUILT_IN_CLUSTERS as readonly string[]).includes(name))
      fail(`clusters.${name}: ${name} is built in and cannot be redefined`);
  }
  if (top.cluster === 'zink-testnet')
    return withRpc(
      { ...ZINK_TESTNET, programs: [...ZINK_TESTNET.programs], game_programs: [...ZINK_TESTNET.game_programs] },
      top,
      { urls: [ZINK_TESTNET.rpc_url], commitment: 'confirmed', ws: null },
    );
  if (top.cluster === 'local') {
    const local = localCluster({
      rpc_url: LOCAL_DEFAULT_RPC_URL,
      game_programs: buildPrograms(localnet.game_programs, 'localnet.game_programs'),
      player_profile: localnet.player_profile,
    });
    return withRpc(local, top, { urls: [LOCAL_DEFAULT_RPC_URL], commitment: 'confirmed', ws: null });
  }
  const raw = clusters[top.cluster];
  if (raw === undefined) {
    const known = [...BUILT_IN_CLUSTERS, ...Object.keys(clusters)].join(', ');
    fail(`cluster: unknown cluster ${JSON.stringify(top.cluster)} (known: ${known}); declare it under clusters`);
  }
  const where = `clusters.${top.cluster}`;
  const c = validateEntry(clusterSchema, raw, where);
  if (decodeAddress(c.genesis_hash) === null) fail(`${where}.genesis_hash: must be a base58 hash`);
  const own = endpointsAt(`${where}.`, c.rpc_url, c.rpc_urls);
  const urls = endpointsAt('', top.rpc_url, top.rpc_urls) ?? own;
  if (urls === null) fail(`${where}.rpc_url: required (or set rpc_url or rpc_urls)`);
  return withRpc(
    {
      name: top.cluster,
      genesis_hash: c.genesis_hash,
      rpc_url: urls[0] ?? '',
      explorer: c.explorer,
      programs: buildPrograms(c.programs, `${where}.programs`),
      game_programs: c.game_programs,
      player_profile: c.player_profile,
    },
    top,
    { urls, commitment: c.commitment, ws: endpointsAt(`${where}.`, c.ws_url, c.ws_urls, 'ws') },
  );
}
