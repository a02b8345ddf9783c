/**
 * `timings`: how long the signer waits on the chain and on operators, and how it retries RPC calls. Every setting
 * has its default here and only here; the RPC client's own defaults are these (src/rpc/retry-defaults.ts).
 */
import { defaultsOf, section, type Infer } from '../setting';

export const timingsSchema = section({
  rpc_timeout_ms: {
    doc: 'Timeout of one RPC call.',
    format: 'positive-int',
    default: 15_000,
    env: 'SIGNER_RPC_TIMEOUT_MS',
  },
  poll_interval_ms: {
    doc: 'Pause between confirmation polls.',
    format: 'positive-int',
    default: 1_000,
    env: 'SIGNER_POLL_INTERVAL_MS',
  },
  confirm_deadline_ms: {
    doc: 'After this long without a landed status a sign ends `unknown`.',
    format: 'positive-int',
    default: 150_000,
    env: 'SIGNER_CONFIRM_DEADLINE_MS',
  },
  max_rpc_failures: {
    doc: 'RPC failures in a row during confirmation before `unknown`.',
    format: 'positive-int',
    default: 60,
    env: 'SIGNER_MAX_RPC_FAILURES',
  },
  rebroadcast_every: {
    doc: 'Rebroadcast the transaction every N polls.',
    format: 'positive-int',
    default: 3,
    env: 'SIGNER_REBROADCAST_EVERY',
  },
  metadata_attempts: {
    doc: "Attempts to fetch a landed transaction's metadata.",
    format: 'positive-int',
    default: 10,
    env: 'SIGNER_METADATA_ATTEMPTS',
  },
  approval_timeout_ms: {
    doc: "How long a `confirm` key's sign waits for its operators' approval (`sa-forge-signer approvals approve`); then it is refused (`approval`). It may be longer than an MCP client's request timeout (60 s by default in the official SDK): an agent whose call timed out signs the same payload again and waits on the same approval (docs/policy.md, \"Approvals by quorum\").",
    format: 'positive-int',
    default: 50_000,
    env: 'SIGNER_APPROVAL_TIMEOUT_MS',
  },
  approval_poll_ms: {
    doc: "How often a waiting sign looks for the operator's decision.",
    format: 'positive-int',
    default: 250,
    env: 'SIGNER_APPROVAL_POLL_MS',
  },
  credential_revocation_poll_ms: {
    doc: 'How often each process reads the credential revocations operators made in the console from the ledger: another replica refuses a block revoked elsewhere within this long (the process that wrote it, at once). Revocations in `serve.credentials.revoked` apply with a reload.',
    format: 'positive-int',
    default: 2_000,
    env: 'SIGNER_CREDENTIAL_REVOCATION_POLL_MS',
  },
  rpc_retries: {
    doc: 'Retries of an RPC call that failed transiently (HTTP 429 or 5xx, a lost connection, a timeout), for reads and re-sends of the same signed transaction; never for a call that is not idempotent. 0 turns retries off.',
    format: 'nat-strict',
    default: 3,
    env: 'SIGNER_RPC_RETRIES',
  },
  rpc_backoff_base_ms: {
    doc: 'Backoff before the first retry is a random wait below this; the ceiling doubles with each retry (full jitter).',
    format: 'positive-int',
    default: 200,
    env: 'SIGNER_RPC_BACKOFF_BASE_MS',
  },
  rpc_backoff_max_ms: {
    doc: 'Largest backoff ceiling.',
    format: 'positive-int',
    default: 5_000,
    env: 'SIGNER_RPC_BACKOFF_MAX_MS',
  },
  rpc_retry_after_max_ms: {
    doc: "Longest Retry-After (seconds or an HTTP date) an endpoint's answer is waited out for; a longer one is shortened to this.",
    format: 'nat-strict',
    default: 10_000,
    env: 'SIGNER_RPC_RETRY_AFTER_MAX_MS',
  },
  rpc_retry_budget_ms: {
    doc: 'No retry starts, and no wait runs, later than this after an RPC call began.',
    format: 'nat-strict',
    default: 20_000,
    env: 'SIGNER_RPC_RETRY_BUDGET_MS',
  },
  rpc_endpoint_cooldown_ms: {
    doc: 'With several endpoints: one that fails goes behind the healthy ones for this long (doubling with each failure in a row, up to 16 times, and at least its Retry-After).',
    format: 'positive-int',
    default: 30_000,
    env: 'SIGNER_RPC_ENDPOINT_COOLDOWN_MS',
  },
  ledger_failover_ms: {
    doc: 'PostgreSQL ledger: how long an operation waits for a writable server when the primary is lost (a failover, a restart) before it fails with `ledger_unavailable` (a sign then sends nothing). Look-ups back off from 50 ms to 1 s.',
    format: 'positive-int',
    default: 15_000,
    env: 'SIGNER_LEDGER_FAILOVER_MS',
  },
  treasury_reconcile_ms: {
    doc: "Pause between reconciliation passes over the treasury keys' allowances (docs/treasury.md); a spend the signer did not make is found within it.",
    format: 'positive-int',
    default: 600_000,
    env: 'SIGNER_TREASURY_RECONCILE_MS',
  },
  orphan_sweep_ms: {
    doc: 'Pause between looks at the ledger for sent transactions another process left without a final entry (a replica killed, a commit cut by a database failover); each is ended once it is an orphan, so its reservation does not wait for a restart.',
    format: 'positive-int',
    default: 60_000,
    env: 'SIGNER_ORPHAN_SWEEP_MS',
  },
});

export type Timings = Infer<typeof timingsSchema>;

export const DEFAULT_TIMINGS: Readonly<Timings> = Object.freeze(defaultsOf(timingsSchema));
