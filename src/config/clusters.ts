/**
 * Built-in cluster profiles. A cluster is data: `zink-testnet` carries the game's public testnet (its genesis
 * hash, RPC, explorer and programs), `local` is the embedded LiteSVM chain, and any other cluster is declared
 * under `clusters:` in the config file. Also how a cluster's endpoints and commitment are chosen.
 */
import { wsUrlsFor } from './ws-url';
import type { ClusterCommitment, ClusterProfile, ProgramEntry } from './sections/cluster-profile';

export const PROGRAM = {
  system: '11111111111111111111111111111111',
  computeBudget: 'ComputeBudget111111111111111111111111111111',
  associatedToken: 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL',
  splToken: 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
  token2022: 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb',
  sage: 'C4SAgeKLgb3pTLWhVr6NRwWyYFuTR7ZeSXFrzoLwfMzF',
  playerProfile: 'C4PRoFNroxxzdgeCoM31LJjYRg7kT6ymogSTAT99iD1u',
  profileFaction: 'C4FACQA1PpNRKrjQ2862ABNR42DTz7EzGj1uhTNFASwP',
} as const;

export const ZINK_TESTNET: ClusterProfile = Object.freeze({
  name: 'zink-testnet',
  genesis_hash: '6qaAozzun2WV83PRDgqf79WXtbqfnezKB3demjxXV5EY',
  rpc_url: 'https://rpc1.z.ink',
  rpc_urls: ['https://rpc1.z.ink'],
  commitment: 'confirmed',
  explorer: 'https://explorer.z.ink/tx/',
  programs: [
    { label: 'sage', address: PROGRAM.sage },
    { label: 'player-profile', address: PROGRAM.playerProfile },
    { label: 'profile-faction', address: PROGRAM.profileFaction },
    { label: 'compute-budget', address: PROGRAM.computeBudget },
    { label: 'associated-token', address: PROGRAM.associatedToken },
    { label: 'system', address: PROGRAM.system },
  ],
  game_programs: [PROGRAM.sage, PROGRAM.playerProfile, PROGRAM.profileFaction],
  player_profile: PROGRAM.playerProfile,
});

/** The embedded chain's RPC endpoint when nothing else is configured (the local default sets the real one). */
export const LOCAL_DEFAULT_RPC_URL = 'http://127.0.0.1:8899';

/**
 * The `local` profile: the utility programs plus the game programs the operator deployed on the embedded chain.
 * Its genesis hash is learnt from the chain at start (it changes with every fresh chain).
 */
export function localCluster(opts: {
  rpc_url: string;
  game_programs: ProgramEntry[];
  player_profile: string | null;
}): ClusterProfile {
  return {
    name: 'local',
    genesis_hash: null,
    rpc_url: opts.rpc_url,
    explorer: null,
    programs: [
      ...opts.game_programs,
      { label: 'compute-budget', address: PROGRAM.computeBudget },
      { label: 'associated-token', address: PROGRAM.associatedToken },
      { label: 'system', address: PROGRAM.system },
    ],
    game_programs: opts.game_programs.map((p) => p.address),
    player_profile: opts.player_profile,
  };
}

export const BUILT_IN_CLUSTERS = ['zink-testnet', 'local'] as const;

/** Every RPC endpoint of the cluster, in order of preference. */
export function clusterRpcUrls(cluster: ClusterProfile): string[] {
  return cluster.rpc_urls && cluster.rpc_urls.length > 0 ? [...cluster.rpc_urls] : [cluster.rpc_url];
}

/** The WebSocket endpoints signature subscriptions use, in order of preference (src/config/ws-url.ts). */
export function clusterWsUrls(cluster: ClusterProfile): string[] {
  return wsUrlsFor(clusterRpcUrls(cluster), cluster.ws_urls);
}

/** Whether sent transactions are also followed by subscription (absent: yes). */
export function clusterSubscribes(cluster: ClusterProfile): boolean {
  return cluster.signature_subscriptions ?? true;
}

export function clusterCommitment(cluster: ClusterProfile): ClusterCommitment {
  return cluster.commitment ?? 'confirmed';
}

/**
 * The endpoints a config names: `rpc_url` or `rpc_urls` (not both; `ws_url` or `ws_urls` for `kind` ws), or null
 * when it names none. Returns an error message (naming keys and positions, never a URL: URLs carry API keys) for a
 * conflict or a repeated endpoint.
 */
export function namedEndpoints(
  where: string,
  single: string | null,
  list: readonly string[],
  kind: 'rpc' | 'ws' = 'rpc',
): { urls: string[] | null } | { error: string } {
  const [one, many] = [`${kind}_url`, `${kind}_urls`];
  if (single !== null && list.length > 0)
    return { error: `${where}${one} and ${where}${many}: set one of them (${many} may hold a single URL)` };
  if (single !== null) return { urls: [single] };
  if (list.length === 0) return { urls: null };
  const seen = list.findIndex((u, i) => list.indexOf(u) !== i);
  if (seen >= 0) return { error: `${where}${many}[${seen}] repeats ${many}[${list.indexOf(list[seen] ?? '')}]` };
  return { urls: [...list] };
}
