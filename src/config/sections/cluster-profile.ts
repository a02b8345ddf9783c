/**
 * A cluster's own settings, one entry of `clusters:`, and the profile every module receives. Kept apart from the
 * cluster choice so the built-in profiles (config/clusters.ts) can be typed by it without importing the choice,
 * which reads them.
 */
import { section, type Infer } from '../setting';

/** One entry of `clusters:`. */
export const clusterSchema = section({
  genesis_hash: {
    doc: "The cluster's genesis hash (base58); the RPC must report it.",
    format: 'non-empty-string',
    default: null,
  },
  rpc_url: {
    doc: 'Default RPC endpoint.',
    format: 'http-url-or-null',
    default: null,
    sensitive: true,
  },
  rpc_urls: {
    doc: 'Default RPC endpoints in order of preference, instead of rpc_url (docs/chain.md).',
    format: 'http-url-list',
    default: [],
    sensitive: true,
  },
  ws_url: {
    doc: 'WebSocket endpoint for signature subscriptions; null derives one beside each RPC endpoint (http → ws, https → wss, same host, port and path; docs/chain.md).',
    format: 'ws-url-or-null',
    default: null,
    nullable: true,
    sensitive: true,
  },
  ws_urls: {
    doc: 'Several WebSocket endpoints in order of preference, instead of ws_url.',
    format: 'ws-url-list',
    default: [],
    sensitive: true,
  },
  commitment: {
    doc: '`confirmed` or `finalized`: the commitment reads use and a transaction must reach to count as landed.',
    format: ['confirmed', 'finalized'],
    default: 'confirmed',
  },
  explorer: {
    doc: 'Explorer prefix the signature is appended to, or null.',
    format: 'string-or-null',
    default: null,
    nullable: true,
  },
  programs: {
    doc: 'Top-level allow-list for every key, a list of {label, address}.',
    format: 'object-list',
    default: [],
  },
  game_programs: {
    doc: 'Programs whose accounts may own token accounts the signer creates (ata_owners).',
    format: 'address-list',
    default: [],
  },
  player_profile: {
    doc: 'Player Profile program (vault check), or null.',
    format: 'address-or-null',
    default: null,
    nullable: true,
  },
});

/** One entry of a cluster's `programs:` (and of `localnet.game_programs`). */
export const programEntrySchema = section({
  label: { doc: 'A short name for the program.', format: 'non-empty-string', default: null },
  address: { doc: 'Program id (base58).', format: 'address', default: null },
});

type ClusterEntry = Infer<typeof clusterSchema>;

export type ProgramEntry = Infer<typeof programEntrySchema>;

/** Commitment of a cluster's reads and confirmations (docs/chain.md). */
export type ClusterCommitment = ClusterEntry['commitment'];

/** A cluster is data, not code: `zink-testnet` and `local` are built in, others come from config. */
export type ClusterProfile = Pick<ClusterEntry, 'explorer' | 'game_programs' | 'player_profile'> & {
  name: string;
  /** null: learnt from the RPC at start (only allowed for `local`). */
  genesis_hash: string | null;
  /** The first (preferred) RPC endpoint. */
  rpc_url: string;
  /** Every RPC endpoint in order of preference, `rpc_url` first; absent means `[rpc_url]` (clusterRpcUrls). */
  rpc_urls?: string[];
  /** WebSocket endpoints named in the config; absent or empty: one beside each RPC endpoint (clusterWsUrls). */
  ws_urls?: string[];
  /** Whether confirmations are also subscribed to over WebSocket; absent means yes (clusterSubscribes). */
  signature_subscriptions?: boolean;
  /** Absent means `confirmed` (clusterCommitment). */
  commitment?: ClusterCommitment;
  programs: ProgramEntry[];
};
