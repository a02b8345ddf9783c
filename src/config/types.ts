/**
 * The resolved configuration every module receives. `src/config/load.ts` (convict) builds it from a YAML/JSON
 * file plus SIGNER_* env vars, resolves relative paths against the config file's folder and cross-checks it;
 * tests build it directly. Amounts are lamports (integers), durations milliseconds.
 */
import { RETRY_DEFAULTS } from '../rpc/retry-defaults';

export type KeyClass = 'session' | 'wallet';
export type ApprovalMode = 'auto' | 'confirm' | 'deny';

export interface KeyConfig {
  name: string; // [a-z0-9_-]{1,64}
  class: KeyClass;
  pubkey: string; // base58
  profile: string | null;
  approval: ApprovalMode; // default: session → auto, wallet → confirm
  transfer_to: string[];
  extra_programs: string[];
  rate_limit_per_minute: number; // default 30
  daily_lamport_cap: number; // default 50_000_000
  /** Most lamports one transaction may cost the key (fee included); absent or null: only the daily cap. */
  per_tx_lamports?: number | null;
  /** Most a transaction may pay in fees (base + priority, from its ComputeBudget instructions); null: no cap. */
  max_fee_lamports?: number | null;
  /** With approval `confirm`: a spend at or below it signs without an operator; null: every sign asks. */
  approve_above_lamports?: number | null;
  allow_unattended: boolean;
  /** Whether `sign` may return signed bytes without sending them; absent means true (docs/payloads.md). */
  sign_only?: boolean;
  /** Whether `sign` may sign off-chain messages and sign-in texts; absent means false (docs/payloads.md). */
  sign_messages?: boolean;
  /** The mints this key may spend, each with its caps (docs/policy.md, "Tokens"); absent means none. */
  tokens?: TokenPolicy[];
  /** When set, the only accounts other than the key and `transfer_to` a transaction may write; absent or null: any. */
  writable_allow?: string[] | null;
  /** Token authority operations this key may perform; absent means none (docs/policy.md, "Token authority"). */
  allow_token_ops?: TokenOp[];
  /** Where the key's secret half is kept (docs/keys.md); absent means `file`. */
  store?: KeyStoreKind;
  /**
   * With approval `confirm`: whose votes count and how many distinct approvals it takes (docs/policy.md,
   * "Approvals by quorum"). Absent: one vote of the host's operator (no operators are configured).
   */
  approvals?: KeyApprovals;
}

/** A key's quorum, resolved: `approvers` names configured operators (all of them when the config lists none). */
export interface KeyApprovals {
  required: number;
  approvers: string[];
}

/** `approver` votes on approvals; `admin` also halts keys and resumes halts in the console. */
export const OPERATOR_ROLES = ['approver', 'admin'] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

/** A named operator (config `operators`): whose votes an approval counts. */
export interface OperatorConfig {
  name: string; // [a-z0-9_-]{1,32}, unique
  role: OperatorRole;
}

/** The key stores (docs/keys.md): a plaintext keypair file, an age-encrypted file, or an HSM over PKCS#11. */
export const KEY_STORE_KINDS = ['file', 'encrypted', 'pkcs11'] as const;
export type KeyStoreKind = (typeof KEY_STORE_KINDS)[number];

/** Where a secret (a passphrase, a PIN) is read from: a file (a mounted secret) or an environment variable. */
export type SecretRef = { file: string } | { env: string };

export interface EncryptedStoreConfig {
  /** Directory of the `NAME.age` files (0700, files 0600). */
  dir: string;
  /** Null when no passphrase source is configured: an `encrypted` key then cannot be opened. */
  passphrase: SecretRef | null;
  /** scrypt work factor (log2 N) for files this signer writes; opening reads the factor from the file. */
  scrypt_log_n: number;
}

export interface Pkcs11StoreConfig {
  /** The vendor's PKCS#11 library (.so); null when none is configured. */
  module: string | null;
  token_label: string | null;
  pin: SecretRef | null;
  /** Sessions kept open for signing: this many signs run at once in the token. */
  sessions: number;
  /** How often, at most, a lost token is looked for again (on a sign or a readiness probe). */
  reconnect_ms: number;
}

export interface KeyStoresConfig {
  encrypted: EncryptedStoreConfig;
  pkcs11: Pkcs11StoreConfig;
}

/** Token operations that hand control of the key's tokens to someone else, refused unless a key allows them. */
export const TOKEN_OPS = ['approve', 'set_authority', 'close_account', 'freeze', 'mint'] as const;
export type TokenOp = (typeof TOKEN_OPS)[number];

/** One mint a key may spend. Amounts are base units (the mint's smallest unit). */
export interface TokenPolicy {
  mint: string;
  program: 'spl-token' | 'token-2022';
  /** Most one transaction may move out of the key's accounts of this mint; null: only the daily cap. */
  per_tx: bigint | null;
  /** Most the key may spend or reserve of this mint in 24 h. */
  per_day: bigint;
  /** Owners whose accounts of this mint may receive; null: any owner (the caps still bound the spend). */
  destinations: string[] | null;
  /** Most one owner may receive of this mint from this key in 24 h; null: no per-destination cap. */
  per_destination_per_day: bigint | null;
  /** With approval `confirm`: a spend at or below it signs without an operator; null: every spend of it asks. */
  approve_above: bigint | null;
}

export interface ProgramEntry {
  label: string;
  address: string;
}

/** Commitment of a cluster's reads and confirmations (docs/chain.md). */
export type ClusterCommitment = 'confirmed' | 'finalized';

/** A cluster is data, not code: `zink-testnet` and `local` are built in, others come from config. */
export interface ClusterProfile {
  name: string;
  genesis_hash: string | null; // null: learnt from the RPC at start (only allowed for `local`)
  /** The first (preferred) RPC endpoint. */
  rpc_url: string;
  /** Every RPC endpoint in order of preference, `rpc_url` first; absent means `[rpc_url]` (clusterRpcUrls). */
  rpc_urls?: string[];
  /** Absent means `confirmed` (clusterCommitment). */
  commitment?: ClusterCommitment;
  explorer: string | null; // prefix; the signature is appended
  /** Top-level allow-list for every key, in order. */
  programs: ProgramEntry[];
  /** Programs whose accounts may own token accounts the signer creates (`ata_owners`). */
  game_programs: string[];
  /** Player Profile program, for the `vault` check (null: no such program on this cluster). */
  player_profile: string | null;
}

export interface Timings {
  rpc_timeout_ms: number; // 15000
  poll_interval_ms: number; // 1000
  confirm_deadline_ms: number; // 150000
  max_rpc_failures: number; // 60
  rebroadcast_every: number; // 3 polls
  metadata_attempts: number; // 10
  approval_timeout_ms: number; // 50000: under the 60 s an MCP client waits by default
  approval_poll_ms: number; // 250
  rpc_retries: number; // 3: attempts after the first, for idempotent calls that failed transiently
  rpc_backoff_base_ms: number; // 200: ceiling of the first backoff wait, doubling per retry
  rpc_backoff_max_ms: number; // 5000: largest backoff wait
  rpc_retry_after_max_ms: number; // 10000: longest Retry-After waited out
  rpc_retry_budget_ms: number; // 20000: no retry starts later than this after a call began
  rpc_endpoint_cooldown_ms: number; // 30000: a failed endpoint goes behind the healthy ones this long
}

export type LedgerConfig = { store: 'sqlite'; path: string } | { store: 'postgres'; url: string; pool_size: number };

export interface TokenConfig {
  name: string;
  sha256: string; // 64 lowercase hex
  keys: string[];
}

/** The operator console's listener (docs/operators.md). */
export interface OperatorListenerConfig {
  listen: { host: string; port: number };
  /** The origin browsers open (scheme://host[:port]); null: http://localhost:PORT of the listener. */
  public_url: string | null;
  /** Where the cookie-sealing secret is read from; null: generated once and kept in the ledger. */
  session_secret_file: string | null;
  session_ttl_ms: number;
  enrollment_ttl_ms: number;
}

export interface ServeConfig {
  listen: { host: string; port: number };
  allowed_hosts: string[];
  tokens: TokenConfig[];
  max_in_flight: number; // 503 beyond
  max_in_flight_per_token: number; // one token's share of max_in_flight (503 beyond); as many waiting for a person
  rate_limit_per_minute: number; // per token, 429 beyond
  body_limit_bytes: number; // 1 MiB
  body_timeout_ms: number; // a body must arrive this soon after its headers (408)
  headers_timeout_ms: number; // headers must arrive this soon on any connection (408)
  keep_alive_timeout_ms: number; // an idle kept-alive connection is closed
  max_connections: number; // open connections; more are refused
  drain_ms: number; // 220000
  /** SEP-2243 `x-mcp-header` annotation on the `key` argument; off for clients that cannot send custom headers. */
  param_headers: boolean;
  metrics: { host: string; port: number } | null;
  /** The operator console's listener; absent or null: off. */
  operator?: OperatorListenerConfig | null;
}

/** What a webhook can be told of (docs/notifications.md). */
export const NOTIFY_EVENTS = [
  'approval.requested',
  'approval.decided',
  'key.halted',
  'key.resumed',
  'sign.refused_by_cap',
] as const;
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];
export type NotifyFormat = 'standard' | 'slack';

/** One webhook of `notify:`. */
export interface NotifyHook {
  /** How logs, metrics and the outbox name it: its host and a hash of its URL (the URL may carry a secret). */
  id: string;
  url: string;
  events: NotifyEvent[];
  /** Resolved path of the `whsec_…` secret, read at start by the service; null: sent unsigned (slack only). */
  secret_file: string | null;
  format: NotifyFormat;
}

export interface NotifyDelivery {
  timeout_ms: number;
  max_attempts: number;
  max_age_hours: number;
  backoff_base_ms: number;
  backoff_max_ms: number;
  poll_ms: number;
}

export const NOTIFY_DELIVERY_DEFAULTS: NotifyDelivery = {
  timeout_ms: 10_000,
  max_attempts: 15,
  max_age_hours: 24,
  backoff_base_ms: 1_000,
  backoff_max_ms: 600_000,
  poll_ms: 2_000,
};

export interface NotifyConfig {
  hooks: NotifyHook[];
  delivery: NotifyDelivery;
}

export interface SignerConfig {
  /** The config file this came from (null when built in code). */
  source: string | null;
  cluster: ClusterProfile;
  key_dir: string;
  state_dir: string;
  keys: KeyConfig[]; // sorted by name
  /**
   * Named operators (they vote on approvals and log in to the console); absent or empty: the host's single operator
   * decides (`approvals approve` without --as).
   */
  operators?: OperatorConfig[];
  /** Settings of the `encrypted` and `pkcs11` stores; absent means every key is a `file` key. */
  key_stores?: KeyStoresConfig;
  ledger: LedgerConfig;
  timings: Timings;
  serve: ServeConfig;
  /** `cluster: local` only: run the embedded chain in-process. */
  localnet: {
    enabled: boolean;
    fund: { address: string; lamports: number }[];
    /** How often the embedded chain makes a block (ms). */
    block_ms: number;
    /** Blocks after landing until a transaction is `confirmed`. */
    confirm_after_blocks: number;
  } | null;
  log_level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Webhooks and how they are delivered; absent: none. */
  notify?: NotifyConfig;
}

/** The socket limits of `serve` by default (config/example.yaml explains each). */
export const DEFAULT_SOCKET_LIMITS = {
  body_timeout_ms: 10_000,
  headers_timeout_ms: 10_000,
  keep_alive_timeout_ms: 5_000,
  max_connections: 1024,
} satisfies Partial<ServeConfig>;

export const DEFAULT_TIMINGS: Timings = {
  rpc_timeout_ms: 15_000,
  poll_interval_ms: 1_000,
  confirm_deadline_ms: 150_000,
  max_rpc_failures: 60,
  rebroadcast_every: 3,
  metadata_attempts: 10,
  approval_timeout_ms: 50_000,
  approval_poll_ms: 250,
  rpc_retries: RETRY_DEFAULTS.retries,
  rpc_backoff_base_ms: RETRY_DEFAULTS.backoffBaseMs,
  rpc_backoff_max_ms: RETRY_DEFAULTS.backoffMaxMs,
  rpc_retry_after_max_ms: RETRY_DEFAULTS.retryAfterMaxMs,
  rpc_retry_budget_ms: RETRY_DEFAULTS.budgetMs,
  rpc_endpoint_cooldown_ms: RETRY_DEFAULTS.cooldownMs,
};
