/**
 * The config schema. Every key carries doc, format and default; every scalar also an env var `SIGNER_…`
 * (env beats the file). Entries of the `keys`, `clusters`, `serve.tokens` and `localnet.*` collections have
 * their own schemas below, validated strictly per entry so an error names e.g. `keys.alice.class`.
 * `config/example.yaml` documents the same keys for people, and docs/configuration.md is generated from this file
 * (src/config/reference.ts); test/config/reference.test.ts keeps all three in step.
 */
import {
  DEFAULT_SOCKET_LIMITS,
  NOTIFY_DELIVERY_DEFAULTS,
  NOTIFY_EVENTS,
  type NotifyFormat,
  DEFAULT_TIMINGS,
  type ApprovalMode,
  type ClusterCommitment,
  type KeyClass,
  KEY_STORE_KINDS,
  type KeyStoreKind,
  OPERATOR_ROLES,
  type OperatorRole,
  TOKEN_OPS,
  type TokenOp,
} from './types';

export const topLevelSchema = {
  cluster: {
    doc: 'The chain to sign for: `zink-testnet` (built in), `local` (the embedded chain, development only) or a name declared under `clusters`.',
    format: 'non-empty-string',
    default: 'zink-testnet',
    env: 'SIGNER_CLUSTER',
  },
  rpc_url: {
    doc: "Solana JSON-RPC endpoint; null uses the cluster's own. Its genesis hash must be the cluster's, or every check refuses (`chain`).",
    format: 'http-url-or-null',
    default: null as string | null,
    nullable: true,
    sensitive: true, // an error never shows the URL: providers put API keys in it
    env: 'SIGNER_RPC_URL',
  },
  rpc_urls: {
    doc: "Several JSON-RPC endpoints of the cluster, in order of preference (instead of rpc_url); calls fail over between them (docs/chain.md). [] uses rpc_url or the cluster's own. Comma-separated in the env var.",
    format: 'http-url-list',
    default: [] as string[],
    sensitive: true, // an error never shows the URLs: providers put API keys in them
    env: 'SIGNER_RPC_URLS',
  },
  commitment: {
    doc: "`confirmed` or `finalized`: the commitment reads use and a transaction must reach to count as landed; null uses the cluster's own (`confirmed` for the built-in clusters).",
    format: ['confirmed', 'finalized', null],
    default: null as ClusterCommitment | null,
    nullable: true,
    env: 'SIGNER_COMMITMENT',
  },
  key_dir: {
    doc: "Directory of key files (0700, files 0600). Relative paths resolve against the config file's folder.",
    format: 'non-empty-string',
    default: 'keys',
    env: 'SIGNER_KEY_DIR',
  },
  key_stores: {
    encrypted: {
      dir: {
        doc: "Directory of the encrypted keys' age files (NAME.age; 0700, files 0600); null: key_dir. Relative to the config file's folder.",
        format: 'string-or-null',
        default: null as string | null,
        nullable: true,
        env: 'SIGNER_ENCRYPTED_KEY_DIR',
      },
      passphrase_file: {
        doc: 'File holding the passphrase of the encrypted keys (a mounted secret; one trailing newline is ignored). Never put the passphrase itself in the config.',
        format: 'string-or-null',
        default: null as string | null,
        nullable: true,
        env: 'SIGNER_KEY_PASSPHRASE_FILE',
      },
      passphrase_env: {
        doc: 'Name of an environment variable holding the passphrase of the encrypted keys (instead of passphrase_file). The signer removes the variable from its environment once it has read it (at start), and keeps the passphrase in memory for later opens.',
        format: 'string-or-null',
        default: null as string | null,
        nullable: true,
        env: 'SIGNER_KEY_PASSPHRASE_ENV',
      },
      scrypt_log_n: {
        doc: "scrypt work factor (log2 N) of the age files `key new`/`key import` write; 18 is the age tool's own. Opening a file reads its factor from the file.",
        format: 'nat-strict',
        default: 18,
        env: 'SIGNER_KEY_SCRYPT_LOG_N',
      },
    },
    pkcs11: {
      module: {
        doc: "The HSM vendor's PKCS#11 library (.so), e.g. /usr/lib/softhsm/libsofthsm2.so; null: no HSM.",
        format: 'string-or-null',
        default: null as string | null,
        nullable: true,
        env: 'SIGNER_PKCS11_MODULE',
      },
      token_label: {
        doc: 'Label of the token (HSM partition) holding the pkcs11 keys; each key is found by its name as label.',
        format: 'string-or-null',
        default: null as string | null,
        nullable: true,
        env: 'SIGNER_PKCS11_TOKEN_LABEL',
      },
      pin_file: {
        doc: "File holding the token's user PIN (a mounted secret; one trailing newline is ignored). Never put the PIN itself in the config.",
        format: 'string-or-null',
        default: null as string | null,
        nullable: true,
        env: 'SIGNER_PKCS11_PIN_FILE',
      },
      pin_env: {
        doc: "Name of an environment variable holding the token's user PIN (instead of pin_file). The signer removes the variable from its environment once it has read it (at start), and keeps the PIN in memory for reconnects.",
        format: 'string-or-null',
        default: null as string | null,
        nullable: true,
        env: 'SIGNER_PKCS11_PIN_ENV',
      },
      sessions: {
        doc: 'Sessions kept open with the token: this many signs run in it at once.',
        format: 'nat-strict',
        default: 4,
        env: 'SIGNER_PKCS11_SESSIONS',
      },
      reconnect_ms: {
        doc: 'After the token fails (unplugged, module error, login lost), signs refuse and it is looked for again at most this often (on a sign or a /ready probe).',
        format: 'nat-strict',
        default: 1000,
        env: 'SIGNER_PKCS11_RECONNECT_MS',
      },
    },
  },
  state_dir: {
    doc: "Directory for state (the SQLite ledger by default, the service lock: one service per state_dir). Relative to the config file's folder.",
    format: 'non-empty-string',
    default: 'state',
    env: 'SIGNER_STATE_DIR',
  },
  log_level: {
    doc: 'Log level of the JSON logs on stderr. `warn` keeps request logs out of the hot path.',
    format: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    default: 'info' as 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent',
    env: 'SIGNER_LOG_LEVEL',
  },
  operators: {
    doc: "Named operators who vote on approvals, a list of {name, role} (role `approver` or `admin`); each key's `approvals` names whose votes it counts. []: the host's operator decides alone (`approvals approve ID`). Each logs in to the operator console with a passkey from `sa-forge-signer operator enroll NAME` (docs/operators.md).",
    format: 'object-list',
    default: [] as unknown[],
  },
  keys: {
    doc: 'Signing keys by name ([a-z0-9_-]{1,64}); each entry follows the key schema (class, pubkey, approval, limits...).',
    format: Object,
    default: {} as Record<string, unknown>,
  },
  clusters: {
    doc: 'Custom clusters by name; each entry follows the cluster schema (genesis_hash, rpc_url, programs...). A new cluster is config, not code.',
    format: Object,
    default: {} as Record<string, unknown>,
  },
  ledger: {
    store: {
      doc: '`sqlite` (one replica, the default) or `postgres` (several replicas share limits, halts, approvals and one hash chain).',
      format: ['sqlite', 'postgres'],
      default: 'sqlite' as 'sqlite' | 'postgres',
      env: 'SIGNER_LEDGER_STORE',
    },
    path: {
      doc: "SQLite file; null means `<state_dir>/ledger.sqlite`. Relative to the config file's folder.",
      format: 'string-or-null',
      default: null as string | null,
      nullable: true,
      env: 'SIGNER_LEDGER_PATH',
    },
    url: {
      doc: 'PostgreSQL URL (postgres://user:password@host/db). Prefer url_file or url_env so the password stays out of the config.',
      format: 'string-or-null',
      default: null as string | null,
      nullable: true,
      sensitive: true,
      env: 'SIGNER_LEDGER_URL',
    },
    url_file: {
      doc: 'File holding the PostgreSQL URL (e.g. a mounted Kubernetes secret); surrounding whitespace is trimmed.',
      format: 'string-or-null',
      default: null as string | null,
      nullable: true,
      env: 'SIGNER_LEDGER_URL_FILE',
    },
    url_env: {
      doc: 'Name of an environment variable holding the PostgreSQL URL.',
      format: 'string-or-null',
      default: null as string | null,
      nullable: true,
      env: 'SIGNER_LEDGER_URL_ENV',
    },
    pool_size: {
      doc: 'PostgreSQL connection pool size.',
      format: 'positive-int',
      default: 10,
      env: 'SIGNER_LEDGER_POOL_SIZE',
    },
  },
  timings: {
    rpc_timeout_ms: {
      doc: 'Timeout of one RPC call.',
      format: 'positive-int',
      default: DEFAULT_TIMINGS.rpc_timeout_ms,
      env: 'SIGNER_RPC_TIMEOUT_MS',
    },
    poll_interval_ms: {
      doc: 'Pause between confirmation polls.',
      format: 'positive-int',
      default: DEFAULT_TIMINGS.poll_interval_ms,
      env: 'SIGNER_POLL_INTERVAL_MS',
    },
    confirm_deadline_ms: {
      doc: 'After this long without a landed status a sign ends `unknown`.',
      format: 'positive-int',
      default: DEFAULT_TIMINGS.confirm_deadline_ms,
      env: 'SIGNER_CONFIRM_DEADLINE_MS',
    },
    max_rpc_failures: {
      doc: 'RPC failures in a row during confirmation before `unknown`.',
      format: 'positive-int',
      default: DEFAULT_TIMINGS.max_rpc_failures,
      env: 'SIGNER_MAX_RPC_FAILURES',
    },
    rebroadcast_every: {
      doc: 'Rebroadcast the transaction every N polls.',
      format: 'positive-int',
      default: DEFAULT_TIMINGS.rebroadcast_every,
      env: 'SIGNER_REBROADCAST_EVERY',
    },
    metadata_attempts: {
      doc: "Attempts to fetch a landed transaction's metadata.",
      format: 'positive-int',
      default: DEFAULT_TIMINGS.metadata_attempts,
      env: 'SIGNER_METADATA_ATTEMPTS',
    },
    approval_timeout_ms: {
      doc: "How long a `confirm` key's sign waits for its operators' approval (`sa-forge-signer approvals approve`); then it is refused (`approval`). It may be longer than an MCP client's request timeout (60 s by default in the official SDK): an agent whose call timed out signs the same payload again and waits on the same approval (docs/policy.md, \"Approvals by quorum\").",
      format: 'positive-int',
      default: DEFAULT_TIMINGS.approval_timeout_ms,
      env: 'SIGNER_APPROVAL_TIMEOUT_MS',
    },
    approval_poll_ms: {
      doc: "How often a waiting sign looks for the operator's decision.",
      format: 'positive-int',
      default: DEFAULT_TIMINGS.approval_poll_ms,
      env: 'SIGNER_APPROVAL_POLL_MS',
    },
    rpc_retries: {
      doc: 'Retries of an RPC call that failed transiently (HTTP 429 or 5xx, a lost connection, a timeout), for reads and re-sends of the same signed transaction; never for a call that is not idempotent. 0 turns retries off.',
      format: 'nat-strict',
      default: DEFAULT_TIMINGS.rpc_retries,
      env: 'SIGNER_RPC_RETRIES',
    },
    rpc_backoff_base_ms: {
      doc: 'Backoff before the first retry is a random wait below this; the ceiling doubles with each retry (full jitter).',
      format: 'positive-int',
      default: DEFAULT_TIMINGS.rpc_backoff_base_ms,
      env: 'SIGNER_RPC_BACKOFF_BASE_MS',
    },
    rpc_backoff_max_ms: {
      doc: 'Largest backoff ceiling.',
      format: 'positive-int',
      default: DEFAULT_TIMINGS.rpc_backoff_max_ms,
      env: 'SIGNER_RPC_BACKOFF_MAX_MS',
    },
    rpc_retry_after_max_ms: {
      doc: "Longest Retry-After (seconds or an HTTP date) an endpoint's answer is waited out for; a longer one is shortened to this.",
      format: 'nat-strict',
      default: DEFAULT_TIMINGS.rpc_retry_after_max_ms,
      env: 'SIGNER_RPC_RETRY_AFTER_MAX_MS',
    },
    rpc_retry_budget_ms: {
      doc: 'No retry starts, and no wait runs, later than this after an RPC call began.',
      format: 'nat-strict',
      default: DEFAULT_TIMINGS.rpc_retry_budget_ms,
      env: 'SIGNER_RPC_RETRY_BUDGET_MS',
    },
    rpc_endpoint_cooldown_ms: {
      doc: 'With several endpoints: one that fails goes behind the healthy ones for this long (doubling with each failure in a row, up to 16 times, and at least its Retry-After).',
      format: 'positive-int',
      default: DEFAULT_TIMINGS.rpc_endpoint_cooldown_ms,
      env: 'SIGNER_RPC_ENDPOINT_COOLDOWN_MS',
    },
  },
  serve: {
    listen: {
      doc: 'Address of the MCP service (host:port). Bind 127.0.0.1 unless a container or pod network fronts it.',
      format: 'listen-address',
      default: '127.0.0.1:8790',
      env: 'SIGNER_LISTEN',
    },
    allowed_hosts: {
      doc: 'Host names (or host:port) the Host and Origin headers may name; the DNS-rebinding guard. Comma-separated in the env var.',
      format: 'string-list',
      default: ['127.0.0.1', 'localhost'],
      env: 'SIGNER_ALLOWED_HOSTS',
    },
    tokens: {
      doc: 'Bearer tokens: a list of {name, sha256, keys}. Only the sha256 of a token is configured (`sa-forge-signer token new`).',
      format: 'object-list',
      default: [] as unknown[],
    },
    tokens_file: {
      doc: 'A YAML or JSON file holding more tokens (the same list form), merged with `tokens`; for mounted secrets.',
      format: 'string-or-null',
      default: null as string | null,
      nullable: true,
      env: 'SIGNER_TOKENS_FILE',
    },
    max_in_flight: {
      doc: 'Requests handled at once; more are answered 503 with Retry-After.',
      format: 'positive-int',
      default: 32,
      env: 'SIGNER_MAX_IN_FLIGHT',
    },
    max_in_flight_per_token: {
      doc: "One token's share of max_in_flight: more of its requests at once are answered 503 with Retry-After while other tokens are served. As many of its signs may wait for an operator's approval besides, holding no place. `halt` and the lists never need a place.",
      format: 'positive-int',
      default: 16,
      env: 'SIGNER_MAX_IN_FLIGHT_PER_TOKEN',
    },
    rate_limit_per_minute: {
      doc: 'HTTP requests per minute per token; more are answered 429 with Retry-After.',
      format: 'positive-int',
      default: 600,
      env: 'SIGNER_HTTP_RATE_LIMIT_PER_MINUTE',
    },
    body_limit_bytes: {
      doc: 'Largest request body; larger is answered 413. The body is parsed on the event loop before any payload bound can see it, so its size bounds that work: the largest payload a 1232-byte transaction needs is far below 64 KiB.',
      format: 'positive-int',
      default: 65_536,
      env: 'SIGNER_BODY_LIMIT_BYTES',
    },
    body_timeout_ms: {
      doc: 'A request body must arrive within this long of its headers; a slower one is answered 408 and its connection closed.',
      format: 'positive-int',
      default: DEFAULT_SOCKET_LIMITS.body_timeout_ms,
      env: 'SIGNER_BODY_TIMEOUT_MS',
    },
    headers_timeout_ms: {
      doc: 'A connection must send complete request headers within this long (also on a new connection that sends nothing); else 408 and closed.',
      format: 'positive-int',
      default: DEFAULT_SOCKET_LIMITS.headers_timeout_ms,
      env: 'SIGNER_HEADERS_TIMEOUT_MS',
    },
    keep_alive_timeout_ms: {
      doc: "An idle kept-alive connection is closed after this long. Behind a load balancer, set it above the balancer's idle timeout.",
      format: 'positive-int',
      default: DEFAULT_SOCKET_LIMITS.keep_alive_timeout_ms,
      env: 'SIGNER_KEEP_ALIVE_TIMEOUT_MS',
    },
    max_connections: {
      doc: 'Open connections at most; more are refused at accept.',
      format: 'positive-int',
      default: DEFAULT_SOCKET_LIMITS.max_connections,
      env: 'SIGNER_MAX_CONNECTIONS',
    },
    drain_ms: {
      doc: 'On SIGTERM/SIGINT, how long running requests (signs) may finish: 150 s confirmation + 4 × 15 s RPC + 10 s. Give the container at least 10 s more.',
      format: 'nat-strict',
      default: 220_000,
      env: 'SIGNER_DRAIN_MS',
    },
    param_headers: {
      doc: 'Annotate the tools\' `key` argument with x-mcp-header "Key" (SEP-2243), so clients send Mcp-Param-Key; turn off for clients that cannot send custom headers.',
      format: 'bool-strict',
      default: true,
      env: 'SIGNER_PARAM_HEADERS',
    },
    metrics: {
      doc: 'Prometheus /metrics listener (host:port), separate from the service; null turns it off.',
      format: 'listen-address-or-off',
      default: '127.0.0.1:9791' as string | null,
      nullable: true,
      env: 'SIGNER_METRICS_LISTEN',
    },
    operator: {
      listen: {
        doc: 'The operator console (host:port), a listener of its own where operators log in with a passkey and approve signs (docs/operators.md); null turns it off. Keep it on loopback, or behind a TLS proxy and set public_url.',
        format: 'listen-address-or-off',
        default: null as string | null,
        nullable: true,
        env: 'SIGNER_OPERATOR_LISTEN',
      },
      public_url: {
        doc: "The console's address as operators' browsers open it (scheme://host[:port], no path): passkeys are bound to its host, enrollment links point at it, and https makes the session cookie Secure. null: http://localhost:PORT of the listener (browsers allow passkeys over plain http only on localhost).",
        format: 'string-or-null',
        default: null as string | null,
        nullable: true,
        env: 'SIGNER_OPERATOR_PUBLIC_URL',
      },
      session_secret_file: {
        doc: 'File holding the secret (32 characters or more) that seals console session cookies, the same for every replica (a mounted secret); null: one is generated once and kept in the ledger, which every replica shares.',
        format: 'string-or-null',
        default: null as string | null,
        nullable: true,
        env: 'SIGNER_OPERATOR_SESSION_SECRET_FILE',
      },
      session_ttl_ms: {
        doc: 'How long a console login lasts; then the operator logs in with the passkey again.',
        format: 'positive-int',
        default: 900_000,
        env: 'SIGNER_OPERATOR_SESSION_TTL_MS',
      },
      enrollment_ttl_ms: {
        doc: 'How long an enrollment link from `sa-forge-signer operator enroll` stays usable (once).',
        format: 'positive-int',
        default: 600_000,
        env: 'SIGNER_OPERATOR_ENROLLMENT_TTL_MS',
      },
    },
  },
  notify: {
    doc: "Webhooks told of approvals requested and decided, keys halted and resumed, and signs refused by a cap: a list of {url, events, secret_file, format} (docs/notifications.md). Delivered from a durable outbox in the ledger, signed the Standard Webhooks way, never on a sign's path.",
    format: 'object-list',
    default: [] as unknown[],
  },
  notify_delivery: {
    timeout_ms: {
      doc: 'One delivery attempt: a receiver that has not answered within this long is cut off, and the attempt counts as failed.',
      format: 'positive-int',
      default: NOTIFY_DELIVERY_DEFAULTS.timeout_ms,
      env: 'SIGNER_NOTIFY_TIMEOUT_MS',
    },
    max_attempts: {
      doc: 'Attempts of one notification before it is marked failed (visible in `notify list`, the metrics and the console).',
      format: 'positive-int',
      default: NOTIFY_DELIVERY_DEFAULTS.max_attempts,
      env: 'SIGNER_NOTIFY_MAX_ATTEMPTS',
    },
    max_age_hours: {
      doc: 'A notification not delivered this many hours after its event is marked failed, whatever its attempts.',
      format: 'positive-int',
      default: NOTIFY_DELIVERY_DEFAULTS.max_age_hours,
      env: 'SIGNER_NOTIFY_MAX_AGE_HOURS',
    },
    backoff_base_ms: {
      doc: 'Ceiling of the wait before the first retry; it doubles per retry (a random wait below it: full jitter).',
      format: 'positive-int',
      default: NOTIFY_DELIVERY_DEFAULTS.backoff_base_ms,
      env: 'SIGNER_NOTIFY_BACKOFF_BASE_MS',
    },
    backoff_max_ms: {
      doc: 'Largest ceiling of the wait between two attempts.',
      format: 'positive-int',
      default: NOTIFY_DELIVERY_DEFAULTS.backoff_max_ms,
      env: 'SIGNER_NOTIFY_BACKOFF_MAX_MS',
    },
    poll_ms: {
      doc: "How often the outbox is read for due notifications (those another process wrote, such as a CLI halt, and retries); this process's own events are sent at once.",
      format: 'positive-int',
      default: NOTIFY_DELIVERY_DEFAULTS.poll_ms,
      env: 'SIGNER_NOTIFY_POLL_MS',
    },
  },
  localnet: {
    game_programs: {
      doc: '`cluster: local` only: programs deployed on the embedded chain that count as game programs, a list of {label, address}.',
      format: 'object-list',
      default: [] as unknown[],
    },
    player_profile: {
      doc: '`cluster: local` only: the Player Profile program on the embedded chain (for the `vault` check), or null.',
      format: 'address-or-null',
      default: null as string | null,
      nullable: true,
    },
    fund: {
      doc: '`cluster: local` only: accounts the embedded chain funds at start, a list of {address, lamports}.',
      format: 'object-list',
      default: [] as unknown[],
    },
    block_ms: {
      doc: '`cluster: local` only: how often the embedded chain makes a block, in ms (a real cluster: about 400).',
      format: 'positive-int',
      default: 400,
      env: 'SIGNER_LOCALNET_BLOCK_MS',
    },
    confirm_after_blocks: {
      doc: '`cluster: local` only: blocks after landing until a transaction is `confirmed` (a real cluster: about 2; finalized comes with it or later).',
      format: 'positive-int',
      default: 1,
      env: 'SIGNER_LOCALNET_CONFIRM_BLOCKS',
    },
  },
};

/** One entry of `keys:` (the entry's name is the key name). */
export const keySchema = {
  class: {
    doc: '`session` (day-to-day play, approval auto by default) or `wallet` (the profile authority, confirm by default).',
    format: ['session', 'wallet'],
    default: null as KeyClass | null,
  },
  store: {
    doc: 'Where the secret half is kept: `file` (a plaintext keypair file in key_dir), `encrypted` (an age file sealed with a passphrase) or `pkcs11` (inside an HSM token). docs/keys.md.',
    format: [...KEY_STORE_KINDS],
    default: 'file' as KeyStoreKind,
  },
  pubkey: {
    doc: "The key's public key (base58); its store must hold it (checked at start).",
    format: 'address',
    default: null as string | null,
  },
  profile: {
    doc: 'Player profile address, informational (shown by key_show).',
    format: 'address-or-null',
    default: null as string | null,
    nullable: true,
  },
  approval: {
    doc: '`auto`, `confirm` (an operator approves each sign) or `deny`; null: session → auto, wallet → confirm.',
    format: ['auto', 'confirm', 'deny', null],
    default: null as ApprovalMode | null,
    nullable: true,
  },
  approvals: {
    required: {
      doc: 'With approval `confirm`: how many distinct approvers must approve a sign (any one of them rejecting refuses it); 1 to the number of approvers.',
      format: 'positive-int',
      default: 1,
    },
    approvers: {
      doc: 'With approval `confirm`: the operators (names under `operators`) whose votes count; []: every configured operator.',
      format: 'string-list',
      default: [] as string[],
    },
  },
  transfer_to: {
    doc: 'Allowed System Transfer destinations (also trusted token-account owners).',
    format: 'address-list',
    default: [] as string[],
  },
  extra_programs: {
    doc: 'More top-level programs this key may call (never SPL Token or Token-2022).',
    format: 'address-list',
    default: [] as string[],
  },
  rate_limit_per_minute: { doc: 'Signs per minute for this key.', format: 'nat-strict', default: 30 },
  daily_lamport_cap: {
    doc: 'Lamports this key may spend or reserve in 24 h.',
    format: 'nat-strict',
    default: 50_000_000,
  },
  per_tx_lamports: {
    doc: 'Most lamports one transaction may cost this key, fee included (from the simulation); null: no per-transaction cap.',
    format: 'nat-or-null',
    default: null as number | null,
    nullable: true,
  },
  max_fee_lamports: {
    doc: 'Most lamports a transaction may pay in fees (base fee + priority fee from its ComputeBudget instructions); null: no fee cap.',
    format: 'nat-or-null',
    default: null as number | null,
    nullable: true,
  },
  approve_above_lamports: {
    doc: 'With approval `confirm`: a spend at or below it signs without an operator, above it an operator approves; null: every sign asks.',
    format: 'nat-or-null',
    default: null as number | null,
    nullable: true,
  },
  allow_unattended: {
    doc: 'Lets a wallet key be `auto` or listed on a token: throwaway testnet keys only.',
    format: 'bool-strict',
    default: false,
  },
  sign_only: {
    doc: 'Lets `sign` with mode "sign_only" return signed bytes for the caller to send (docs/payloads.md).',
    format: 'bool-strict',
    default: true,
  },
  writable_allow: {
    doc: 'When set, the only accounts besides the key and transfer_to that a transaction may write (token accounts included); null: any.',
    format: 'address-list-or-null',
    default: null as string[] | null,
    nullable: true,
  },
  tokens: {
    doc: 'Mints this key may spend, a list of {mint, program, per_tx, per_day, destinations, per_destination_per_day, approve_above} (amounts in base units; docs/policy.md, "Tokens").',
    format: 'object-list',
    default: [] as unknown[],
  },
  sign_messages: {
    doc: 'Lets `sign` sign off-chain messages and sign-in texts with this key (payload "message", docs/payloads.md). Off by default: such a signature can log in or authorise anything that trusts the key.',
    format: 'bool-strict',
    default: false,
  },
  allow_token_ops: {
    doc: `Token authority operations this key may perform: any of ${TOKEN_OPS.join(', ')} (docs/policy.md, "Token authority").`,
    format: 'token-ops',
    default: [] as TokenOp[],
  },
};

/** One entry of `operators:`. */
export const operatorSchema = {
  name: {
    doc: "The operator's name ([a-z0-9_-]{1,32}), unique: what votes, `approvals approve --as` and the audit show.",
    format: 'non-empty-string',
    default: null as string | null,
  },
  role: {
    doc: '`approver` (votes on approvals) or `admin` (also halts keys and resumes halts in the operator console).',
    format: [...OPERATOR_ROLES],
    default: 'approver' as OperatorRole,
  },
};

/** One entry of a key's `tokens:`. */
export const tokenPolicySchema = {
  mint: { doc: 'The mint (base58).', format: 'address', default: null as string | null },
  program: {
    doc: '`spl-token` or `token-2022`: the program that owns the mint.',
    format: ['spl-token', 'token-2022'],
    default: 'spl-token' as 'spl-token' | 'token-2022',
  },
  per_tx: {
    doc: 'Most one transaction may move out of the key’s accounts of this mint, in base units; null: only per_day.',
    format: 'base-units-or-null',
    default: null as string | number | null,
    nullable: true,
  },
  per_day: {
    doc: 'Most the key may spend or reserve of this mint in 24 h, in base units.',
    format: 'base-units',
    default: null as string | number | null,
  },
  destinations: {
    doc: 'Owners whose token accounts of this mint may receive from the key; null: any owner.',
    format: 'address-list-or-null',
    default: null as string[] | null,
    nullable: true,
  },
  per_destination_per_day: {
    doc: 'Most one owner may receive of this mint from this key in 24 h, in base units; null: no such cap.',
    format: 'base-units-or-null',
    default: null as string | number | null,
    nullable: true,
  },
  approve_above: {
    doc: 'With approval `confirm`: a spend of this mint at or below it signs without an operator, above it an operator approves; null: every spend asks.',
    format: 'base-units-or-null',
    default: null as string | number | null,
    nullable: true,
  },
};

/** One entry of `serve.tokens` (or of `serve.tokens_file`). */
export const tokenSchema = {
  name: {
    doc: 'Token name ([a-z0-9_-]{1,64}), unique; it is what logs, metrics and the audit log show.',
    format: 'non-empty-string',
    default: null as string | null,
  },
  sha256: {
    doc: 'sha256 of the token string, 64 lowercase hex characters.',
    format: 'non-empty-string',
    default: null as string | null,
  },
  keys: { doc: 'The configured keys this token may use.', format: 'string-list', default: null as string[] | null },
};

/** One entry of `notify:`. */
export const notifyHookSchema = {
  url: {
    doc: 'Where the events are POSTed: an http:// or https:// URL. It is never logged or shown; logs, metrics and `notify list` name the hook by its host and a hash of the URL.',
    format: 'non-empty-string',
    default: null as string | null,
    sensitive: true,
  },
  events: {
    doc: `The events this hook is told of, any of ${NOTIFY_EVENTS.join(', ')}; the default is all of them.`,
    format: 'string-list',
    default: [...NOTIFY_EVENTS] as string[],
  },
  secret_file: {
    doc: 'File holding the signing secret in the Standard Webhooks form `whsec_<base64>` (a mounted secret; surrounding whitespace is ignored), read at start. Needed by format `standard`; optional for `slack`. Never put the secret in the config.',
    format: 'string-or-null',
    default: null as string | null,
    nullable: true,
  },
  format: {
    doc: '`standard`: the event as JSON `{type, timestamp, data}`; `slack`: a Slack-compatible `{text}` (an incoming webhook). Both carry the Standard Webhooks headers when a secret is set.',
    format: ['standard', 'slack'],
    default: 'standard' as NotifyFormat,
  },
};

/** One entry of `clusters:`. */
export const clusterSchema = {
  genesis_hash: {
    doc: "The cluster's genesis hash (base58); the RPC must report it.",
    format: 'non-empty-string',
    default: null as string | null,
  },
  rpc_url: {
    doc: 'Default RPC endpoint.',
    format: 'http-url-or-null',
    default: null as string | null,
    sensitive: true,
  },
  rpc_urls: {
    doc: 'Default RPC endpoints in order of preference, instead of rpc_url (docs/chain.md).',
    format: 'http-url-list',
    default: [] as string[],
    sensitive: true,
  },
  commitment: {
    doc: '`confirmed` or `finalized`: the commitment reads use and a transaction must reach to count as landed.',
    format: ['confirmed', 'finalized'],
    default: 'confirmed' as ClusterCommitment,
  },
  explorer: {
    doc: 'Explorer prefix the signature is appended to, or null.',
    format: 'string-or-null',
    default: null as string | null,
    nullable: true,
  },
  programs: {
    doc: 'Top-level allow-list for every key, a list of {label, address}.',
    format: 'object-list',
    default: [] as unknown[],
  },
  game_programs: {
    doc: 'Programs whose accounts may own token accounts the signer creates (ata_owners).',
    format: 'address-list',
    default: [] as string[],
  },
  player_profile: {
    doc: 'Player Profile program (vault check), or null.',
    format: 'address-or-null',
    default: null as string | null,
    nullable: true,
  },
};

export const programEntrySchema = {
  label: { doc: 'A short name for the program.', format: 'non-empty-string', default: null as string | null },
  address: { doc: 'Program id (base58).', format: 'address', default: null as string | null },
};

export const fundEntrySchema = {
  address: { doc: 'Account to fund (base58).', format: 'address', default: null as string | null },
  lamports: { doc: 'Lamports to give it.', format: 'nat-strict', default: null as number | null },
};
