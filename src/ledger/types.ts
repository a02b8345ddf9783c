/**
 * The ledger: hash-chained audit entries, halts and approvals, plus the per-key lock.
 * Two stores implement it (SQLite for one process, PostgreSQL for several replicas) and one contract
 * test suite runs against both. Every write resolves only once it is durable.
 */

import type { OperatorStore } from './operators';

/**
 * Audit entry fields in their serialisation order (docs/operations.md, "Audit log"). Options are null, never omitted.
 * `sign-message`: one entry per off-chain message or sign-in text a key was asked to sign (docs/payloads.md).
 * `reload`: a policy a running service took over (key `*`, the policy hashes in detail; docs/policy.md, "Reload").
 * `revoke`: a credential block an operator revoked (key `*`, the reason as summary; docs/credentials.md).
 */
export type AuditCommand = 'sign' | 'sign-intent' | 'sign-message' | 'halt' | 'resume' | 'reload' | 'revoke';

export interface AuditEntryInput {
  ts: number; // unix seconds
  key: string;
  command: AuditCommand;
  payload_hash: string; // "" for halt/resume
  programs: string[];
  summary: string; // sign: the builder's summary; halt: the reason
  intent: string | null;
  outcome: string; // a report outcome, "pending" for intents, "halted"/"resumed"
  detail: string | null;
  signature: string | null;
  slot: number | null;
  balance_change: number | null; // finals: the actual change; intents: −reservation
  /** Token figures of a sign (docs/ledger.md); absent or null for every other entry and every sign that moved none. */
  tokens?: TokenFigure[] | null;
  /**
   * The lamports an intent's transaction pays each other account, from its simulation (the payments the policy
   * counts towards `per_destination_per_day_lamports`, signer/policy/rules/destination-cap.ts); absent or null for
   * every other entry and every intent that pays none.
   */
  lamport_credits?: Pick<LamportCredit, 'address' | 'lamports'>[] | null;
  /**
   * What an intent's transaction takes out of the key in dollars, valued at sign time with the prices read with its
   * simulation (micro-dollars as a decimal string; docs/pricing.md): the usage `usd.per_day` counts, never re-priced.
   * Absent or null for every other entry and every intent of a key without `usd` caps.
   */
  usd_micros?: string | null;
  /**
   * What each asset of that dollar value was valued at: the price as read, with its confidence, exponent, publish
   * time and account, so a later step judges the same sign at the same prices (the tripwire values a landed spend at
   * them; docs/pricing.md). Absent or null wherever `usd_micros` is.
   */
  usd_prices?: UsdPriceFigure[] | null;
  /**
   * The revocation ids of the credential blocks whose `per_day` budget an intent counts against (docs/credentials.md,
   * "Daily budgets"): each block's usage is the intents naming it and their finals, counted as a key's are. Absent
   * or null for every other entry and every intent of a sign no budgeted credential asked for.
   */
  budget_blocks?: string[] | null;
  /**
   * An intent's transaction as a watcher follows it after a restart; absent or null for every other entry. Kept in
   * columns of its own beside the entry, outside its hash: the entry's `detail` says the same for a reader, and
   * an entry hashes exactly as it did before this field existed.
   */
  watch?: IntentWatch | null;
}

/** What a later step reads of an intent to follow its transaction (signer/flow/watch-signed.ts). */
export interface IntentWatch {
  /** 'send': the signer sends it (a restarted engine ends it once it is an orphan); 'sign_only': the caller does. */
  mode: 'send' | 'sign_only';
  /** Past this finalized block height the transaction can no longer land. */
  last_valid_block_height: number;
  /** The fee payer when another account pays and sends it (its signature is then the id); null: the key. */
  fee_payer: string | null;
  /** A slot the chain had reached before the key signed: the transaction cannot land before it. Null: not known. */
  from_slot: number | null;
}

/**
 * One asset a sign was valued at (src/pricing/usd-spend.ts): what left the key of it and what that was worth, and the
 * checked price that valued it, exactly as read (integers as decimal strings: a Pyth price is an i64).
 */
export interface UsdPriceFigure {
  /** `SOL`, or the mint. */
  asset: string;
  decimals: number;
  /** Base units (lamports for SOL) the simulation took out of the key. */
  amount: string;
  /** Their value in micro-dollars, at price + confidence, rounded up. */
  usd_micros: string;
  /** The dollar price is `price × 10^exponent`, ± `conf` on that scale. */
  price: string;
  conf: string;
  exponent: number;
  /** Unix seconds the price was published at (Pyth's `publish_time`). */
  publish_time: number;
  /** The price account it was read from. */
  account: string;
}

/**
 * What a sign moves of one mint, from its simulation: the key's change (an intent's is the reservation) and what
 * each other owner receives. Amounts are base units as decimal strings (u64 does not fit a JSON number).
 */
export interface TokenFigure {
  mint: string;
  decimals: number | null;
  /** The key's balance change of this mint, all its accounts together: negative is a spend. */
  change: string;
  credits: { owner: string; amount: string }[];
  /**
   * The part of `change` made in token accounts the key spent from as their delegate (a treasury,
   * docs/treasury.md), by account: what lets reconciliation compare each account on its own. Absent when none.
   */
  delegated?: { account: string; change: string }[];
}

/**
 * Signs in the last minute and lamports spent or reserved in the last 24 h (how entries count: usage-book.ts), as
 * data: no cap is applied here. What an entry no figure bounds counts for is the policy's to say
 * (signer/policy/rules/daily-cap.ts), so the store only counts such entries.
 */
export interface KeyUsage {
  signsLastMinute: number;
  /** Lamports the entries with a figure spent or reserved. */
  lamports: number;
  /** Entries whose spend no figure bounds (an intent written without one, a final without its intent). */
  unbounded: number;
}

/** What a key spent or reserved of one mint in 24 h, and what each other owner received or will receive of it. */
export interface MintUsage {
  /** Base units of the mint the key spent or reserved. */
  spent: bigint;
  /** Base units each other owner received or has reserved to receive. */
  received: Map<string, bigint>;
}

export type TokenUsage = Map<string, MintUsage>;

/** A key's whole usage for its caps: the rate, lamports, what each other account received, and each mint. */
export interface Usage extends KeyUsage {
  /** Lamports each other account received (or has reserved to receive) from the key's transactions in 24 h. */
  received: Map<string, number>;
  tokens: TokenUsage;
  /** Micro-dollars the key's intents recorded as spent or reserved in 24 h, each at its own sign's valuation. */
  usdMicros: bigint;
}

/** The usage of a key nothing has been counted for: what the policy judges when the ledger has no usage to give. */
export function noUsage(): Usage {
  return { signsLastMinute: 0, lamports: 0, unbounded: 0, received: new Map(), tokens: new Map(), usdMicros: 0n };
}

export interface AuditEntry extends AuditEntryInput {
  prev: string; // 64 hex; 64 '0' for the first entry
  hash: string; // sha256 hex of the entry serialised with hash ""
}

/** An entry with its position in the chain (`seq`, the head record's count when it was appended). */
export interface SequencedEntry {
  seq: number;
  entry: AuditEntry;
}

export interface HaltRecord {
  key: string;
  reason: string;
  by: string; // who pulled the brake: "token:<name>" or "operator"
  ts: number;
  /**
   * The archived ledger this halt was recorded in before a fresh ledger took it over (the embedded default,
   * cli/halt-carry.ts), as a path under the state directory. Named in the halt's audit entry; the halts table does
   * not keep it, so a halt read back from a ledger has none.
   */
  carried_from?: string;
}

/**
 * `approved`: `required` distinct allowed approvers approved; `rejected`: one of them rejected; `abandoned`: the sign
 * waiting on it went away before a decision (its caller disconnected); nothing was sent, and votes are refused until
 * a sign of the same payload asks again before the deadline, which reopens it (pending, its votes kept).
 */
export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'expired' | 'abandoned';
export type ApprovalDecision = Exclude<ApprovalStatus, 'pending'>;
/** What an operator votes; the other decisions are the signer's (the deadline passed, the sign went away). */
export type VoteDecision = 'approved' | 'rejected';

/** Why a vote cast does not count (any more): its operator is not in the config now, or was revoked after it. */
export type NotCounted = 'not_configured' | 'revoked';

/** One operator's vote on an approval. */
export interface ApprovalVote {
  operator: string;
  decision: VoteDecision;
  ts: number;
  /** The passkey credential the operator voted with (the console's), null for the host's CLI. */
  credential: string | null;
  /** Set when the request was last judged and this vote did not count then (absent: it counted). */
  not_counted?: NotCounted;
}

export interface ApprovalRequest {
  key: string;
  summary: string;
  payload_hash: string;
  balance_change: number | null;
  fee: number | null;
  compute_units: number | null;
  /** The token figures the operator approves (absent: none). */
  tokens?: TokenFigure[] | null;
  requested_by: string;
  ts: number;
  expires_at: number; // unix seconds
  /** Top-level programs the transaction calls (absent or null: a message sign). */
  programs?: string[] | null;
  /** Accounts other than the key that the simulation credits with lamports (absent or null: none or not known). */
  destinations?: LamportCredit[] | null;
  /** Who pays the fee: the key, or another account (absent or null: a message sign). */
  fee_payer?: string | null;
  /** A message sign: the text that would be signed (the agent's, untrusted); null for a transaction. */
  message?: string | null;
  /**
   * A message sign: what the signer read the bytes as (a sign-in text, or an off-chain message with its version,
   * application domain, format and required signatories); null for a transaction.
   */
  message_description?: string | null;
  /** Distinct approvers whose approval it takes; absent means 1. */
  required?: number;
  /** The operators whose votes count (the key's approvers); absent or null: anyone (no operators configured). */
  approvers?: string[] | null;
  /** Which sign waits on it (an opaque id of the waiting sign); absent or null: none named. */
  waiter?: string | null;
  /**
   * What the transaction takes out of the key in dollars ("4.00", at price + confidence) for a key with `usd` caps,
   * from the simulation the operator is asked about; absent or null: the key is not priced, or a message sign.
   */
  usd_value?: string | null;
}

/** An account the simulation credits with lamports. */
export interface LamportCredit {
  address: string;
  lamports: number;
  /** It did not exist before the transaction (absent in requests recorded without it). */
  created?: boolean;
  /** Its owner after the simulation (absent in requests recorded without it). */
  owner?: string;
}

export interface ApprovalRecord extends ApprovalRequest {
  id: string; // short, typeable by an operator
  status: ApprovalStatus;
  /** Approved: the approvers whose votes made it, in vote order (comma-separated); rejected: who rejected. */
  decided_by: string | null;
  decided_at: number | null;
  required: number;
  approvers: string[] | null;
  waiter: string | null;
  /** Every vote cast, in order. */
  votes: ApprovalVote[];
}

/** What an outbox row says of its delivery: waiting (first try or a retry), done, or given up on. */
export type NotificationStatus = 'pending' | 'delivered' | 'failed';

/**
 * One notification for one webhook, as the outbox stores it (src/notify/ writes and delivers them). `id` is the
 * Standard Webhooks message id the receiver deduplicates by; times are unix milliseconds.
 */
export interface NotificationInput {
  id: string;
  /** The hook it goes to (its id: host and a hash of its URL, never the URL itself). */
  hook: string;
  event: string;
  key: string | null;
  /** The event as JSON text: the same for every attempt, so a retry carries the same signed content. */
  body: string;
  created_at: number;
  /** When the first attempt is due. */
  next_at: number;
}

export interface NotificationRecord extends NotificationInput {
  status: NotificationStatus;
  attempts: number;
  /** The deliverer holding it now (its claim runs to claim_until), null when none does. */
  claimed_by: string | null;
  claim_until: number | null;
  /** Why the last attempt failed (a status code, a timeout), null when none has. */
  last_error: string | null;
  /** When it was delivered or given up on. */
  settled_at: number | null;
}

/** What a deliverer records after an attempt: the row's new state. */
export interface NotificationSettlement {
  status: NotificationStatus;
  attempts: number;
  next_at: number;
  last_error: string | null;
  settled_at: number | null;
}

/** The head record: the sequence number and hash of the last entry, kept beside the chain and moved with it. */
export interface ChainHead {
  seq: number;
  hash: string; // GENESIS_PREV when the chain is empty
}

/** A key lock as an operator sees it (`sa-forge-signer locks list`). */
export interface KeyLockInfo {
  key: string;
  /** Who holds it: host/pid for SQLite, the replica's application name and backend pid for PostgreSQL. */
  holder: string;
  /** Unix ms when it was taken, when the store knows. */
  acquired_at_ms: number | null;
  /** Unix ms the lease runs to (SQLite); null where the lock has no lease (PostgreSQL, or an older signer's). */
  lease_until_ms: number | null;
  /** 'stale': its holder is gone or its lease ran out, so the next waiter takes it over. */
  state: 'held' | 'stale';
}

export type ClearLockResult = 'cleared' | 'not held' | 'live';

export type VerifyResult = { ok: true; entries: number } | { ok: false; entries: number; line: number; reason: string };

/**
 * Held while a sign passes its cap gate (usage read to durable intent); released on every path. A dead holder's lock
 * is freed (server-side or by liveness).
 */
export interface KeyLock {
  release(): Promise<void>;
}

/** What the cap gate asks the ledger about one key (Ledger.reserveAtOnce). */
export interface ReserveRequest {
  key: string;
  now: number;
  /** The transaction's signature, looked up among the key's intents in flight; null: none to look up. */
  signature: string | null;
}

/** What the cap gate decides on, read in the same transaction as its intent is appended. */
export interface ReserveView {
  usage: Usage;
  signatureInFlight: boolean;
  halt: HaltRecord | null;
}

/** The gate's answer: an intent to append (then `result` is what the caller gets back), or none. */
export interface ReserveDecision<R> {
  intent: AuditEntryInput | null;
  result: R;
}

/**
 * The ledger, by concern. The concerns every store writes the same way (audit log, usage, halts, approvals,
 * outbox, operators) are written once over a driver (sql/driver.ts); what the databases do differently (the key
 * locks, an append fenced by one, the gate in one transaction) is each store's own.
 */
export interface AuditLog {
  /** Appends one entry at the end of the single chain; durable before it resolves. */
  append(entry: AuditEntryInput): Promise<AuditEntry>;
  /** This key's sign, sign-intent and sign-message entries with ts >= since, in chain order (for limits). */
  signEntriesForKey(key: string, since: number): Promise<AuditEntry[]>;
  /**
   * The same entries with their chain positions, and the head's position, read from one snapshot: every entry of
   * the key at or below `head` is among them (from `since` on), none written later is.
   */
  sequencedSignEntries(key: string, since: number): Promise<{ head: number; entries: SequencedEntry[] }>;
  /**
   * Walks the chain and checks it against the head record (a truncated tail or a deleted last entry fails) and
   * the halts table against the chain's halt and resume entries (a deleted or forged halt row fails).
   */
  verify(): Promise<VerifyResult>;
  head(): Promise<ChainHead>;
  tail(n: number): Promise<AuditEntry[]>;
  /** Every entry in chain order. */
  entries(): AsyncIterable<AuditEntry>;
}

/** What the cap gate reads of a key's usage, and the gate itself where a store can run it as one transaction. */
export interface Reservations {
  /**
   * The key's usage at `now` for its caps, as usageOf (usage-book.ts) would count its entries. Each store keeps
   * the usage of the keys it was asked about in memory and reads only the entries written since its last read
   * (by any process or replica), so the cost does not grow with the key's day of entries.
   */
  keyUsage(key: string, now: number): Promise<Usage>;
  /**
   * Whether the key has an intent with this signature and no final entry for it yet: the same transaction is
   * signed and in flight (or watched). Read under the key's lock at the cap gate.
   */
  signatureInFlight(key: string, signature: string): Promise<boolean>;
  /**
   * A credential block's usage at `now` for its `per_day` budget: the intents that name it in `budget_blocks`
   * (whichever key signed them) and their finals, counted as a key's entries are (usage-book.ts). Kept in memory
   * and read afresh like keyUsage; read under the block's budget lock (budgetLockName) at the gate.
   */
  blockUsage(revocationId: string, now: number): Promise<Usage>;
  /**
   * The cap gate as one write transaction, when the store can decide it without the key's lock: the key's usage,
   * whether `signature` is in flight and its halt are read, `decide` is called on them, and the intent it returns
   * is appended, with no other writer of the key in between; resolves once that intent is durable. Resolves null
   * (having written nothing and called nothing) when the gate must take the key's lock instead: the store has no
   * such transaction, the key's lock is held, or this handle has not read what other writers appended. `decide`
   * may run more than once (a transaction retried while the file is busy) and must give the same answer each time.
   */
  reserveAtOnce<R>(request: ReserveRequest, decide: (view: ReserveView) => ReserveDecision<R>): Promise<R | null>;
}

/** The per-key lock held while a sign passes its cap gate, and the append it fences. */
export interface KeyLocks {
  /** Waits for the per-key lock (across processes and replicas). Rejects with code 'cancelled' if signal aborts. */
  lockKey(key: string, signal?: AbortSignal): Promise<KeyLock>;
  /**
   * Appends like `append`, but only while this handle still holds the lock on `entry.key` (taken with lockKey),
   * checked in the same transaction as the insert: a lock lost in the meantime (its database connection died, or
   * its lease was taken over) makes this reject with a 'ledger' error and nothing is written. A sign writes its
   * intent this way, so it is never sent on a cap decision another holder may also have made. `alsoHeld` names
   * further locks this handle took with lockKey (a credential block's budget lock) that must still be held too.
   */
  appendFenced(entry: AuditEntryInput, alsoHeld?: readonly string[]): Promise<AuditEntry>;
  /** The key locks held now. `keys` names the configured keys (PostgreSQL's locks carry only a hash of the name). */
  keyLocks(keys: readonly string[]): Promise<KeyLockInfo[]>;
  /**
   * Frees a key lock for an operator. A stale one is cleared; a live one only with `force` (its holder's next
   * fenced append then fails, so nothing it has not yet recorded is sent).
   */
  clearKeyLock(key: string, opts: { force: boolean }): Promise<ClearLockResult>;
}

/** A credential block revoked in the ledger (docs/credentials.md, "Revoking"). */
export interface CredentialRevocation {
  /** The block's revocation id (hex). */
  revocation_id: string;
  /** The issued root it was revoked by name, or null when named by its id. */
  name: string | null;
  reason: string;
  /** Who revoked it: "operator:<name>". */
  by: string;
  ts: number;
}

export interface CredentialRevocations {
  /**
   * Records the revocation and its audit entry (command 'revoke') atomically. Revoking a revoked block keeps the
   * first record, and returns it.
   */
  revokeCredential(rec: CredentialRevocation): Promise<CredentialRevocation>;
  /** Every revocation, oldest first. */
  listCredentialRevocations(): Promise<CredentialRevocation[]>;
}

export interface Halts {
  getHalt(key: string): Promise<HaltRecord | null>;
  listHalts(): Promise<HaltRecord[]>;
  /** Records the halt and its audit entry (command 'halt') atomically. Halting a halted key keeps the first record. */
  halt(rec: HaltRecord): Promise<HaltRecord>;
  /** Clears the halt and appends a 'resume' entry; false when the key was not halted. */
  resume(key: string, by: string, ts: number): Promise<boolean>;
}

export interface Approvals {
  /** Records a new pending request (always a new one; a sign asks through requestApproval). */
  createApproval(req: ApprovalRequest): Promise<ApprovalRecord>;
  /**
   * A sign's request for approval. When an unexpired request for the same key and payload hash is pending, or was
   * abandoned by the sign that waited on it (its caller gave up), the same payload is being signed again: that
   * request is returned, pending, with its votes, `req.waiter` as its waiter and `joined` true. Otherwise a new one
   * is recorded. One write transaction, serialised per key and payload hash across replicas, so two signs of one
   * payload never open two requests.
   */
  requestApproval(req: ApprovalRequest & { waiter: string }): Promise<{ record: ApprovalRecord; joined: boolean }>;
  getApproval(id: string): Promise<ApprovalRecord | null>;
  listApprovals(filter?: { status?: ApprovalStatus }): Promise<ApprovalRecord[]>;
  /**
   * The one way to decide. `approved`/`rejected` is the vote of operator `by` (with the passkey `credential` it
   * used, null from the CLI): refused with a 'request_invalid' error when `by` is not one of the request's
   * approvers, not one of `voters` (the operators configured now; null or absent: none are) or revoked; counted
   * once per operator; the request becomes approved once `required` distinct approvers whose votes count now
   * approved (records.ts applyDecision), rejected as soon as one rejects. `expired`/`abandoned` are the signer's.
   * Only a pending, unexpired request changes (a vote after `expires_at` makes it expired); returns the record as
   * it stands afterwards, votes included. One write transaction (a row lock where the store has them), which also
   * reads the revocations, so concurrent votes all count and none slips past a revocation.
   */
  decideApproval(
    id: string,
    decision: ApprovalDecision,
    by: string,
    ts: number,
    credential?: string | null,
    voters?: readonly string[] | null,
  ): Promise<ApprovalRecord>;
  /**
   * An approved request as its sign takes it: judged again with whose votes count now (`voters` as in
   * decideApproval, and the revocations), in one write transaction; back to pending (or expired past its deadline)
   * when they no longer reach its quorum (records.ts recountDecision). Returns the record as it stands afterwards.
   */
  recountApproval(id: string, voters: readonly string[] | null, ts: number): Promise<ApprovalRecord>;
  /**
   * The sign waiting on a pending request went away: the request is abandoned if `waiter` is still the sign
   * waiting on it; if a later sign of the same payload took it over, it is left as it is. Returns the record.
   */
  leaveApproval(id: string, waiter: string, ts: number): Promise<ApprovalRecord>;
}

/**
 * A treasury account's allowance as one reconciliation pass read it (src/treasury/reconcile.ts), with the ledger
 * position that pass read the key's entries up to before it read the chain.
 */
export interface TreasuryBaseline {
  /** The key's configured name. */
  key: string;
  /** The treasury token account. */
  account: string;
  mint: string;
  /** The delegate the allowance was read for (the key's pubkey then). */
  delegate: string;
  /** The delegated amount, base units. */
  amount: bigint;
  /** Unix seconds of the pass. */
  ts: number;
  /** The head record's seq when the pass read the ledger. */
  seq: number;
}

/** The reconciliation's baselines, shared by restarts and replicas: data only, judged by the reconciler. */
export interface TreasuryBaselines {
  /** The key's baselines, one per treasury account that has one. */
  treasuryBaselines(key: string): Promise<TreasuryBaseline[]>;
  /**
   * Compare-and-set: writes `next` for `prev`'s key and account only while the stored row is still `prev` (null:
   * while there is none); false, and nothing written, when another pass moved it first.
   */
  moveTreasuryBaseline(prev: TreasuryBaseline | null, next: TreasuryBaseline): Promise<boolean>;
  /** Deletes the row only while it is still `prev`; false when another pass moved or dropped it first. */
  dropTreasuryBaseline(prev: TreasuryBaseline): Promise<boolean>;
}

/** The webhook outbox (src/notify/ writes and delivers it). */
export interface Outbox {
  /** Writes notifications to the outbox (one transaction): durable before it resolves. */
  enqueueNotifications(rows: readonly NotificationInput[]): Promise<void>;
  /**
   * Claims up to `limit` pending notifications due at `now` (unix ms) whose earlier claim, if any, has run out:
   * each is held for `owner` until `now + leaseMs`, and no other deliverer (process or replica) claims it meanwhile.
   */
  claimNotifications(owner: string, now: number, leaseMs: number, limit: number): Promise<NotificationRecord[]>;
  /** Records an attempt's result and frees the claim; false (nothing written) when `owner` no longer holds it. */
  settleNotification(id: string, owner: string, state: NotificationSettlement): Promise<boolean>;
  /** The newest notifications first, of one status or all. */
  listNotifications(opts: { limit: number; status?: NotificationStatus }): Promise<NotificationRecord[]>;
  /** How many notifications stand in each status. */
  notificationCounts(): Promise<Record<NotificationStatus, number>>;
  /** Deletes delivered notifications settled before `before` (unix ms); returns how many. */
  pruneNotifications(before: number): Promise<number>;
}

/** The operator console's records (passkeys, enrollment links, nonces, settings) are in ./operators.ts. */
export interface Ledger
  extends
    AuditLog,
    Reservations,
    KeyLocks,
    Halts,
    CredentialRevocations,
    Approvals,
    Outbox,
    OperatorStore,
    TreasuryBaselines {
  readonly store: 'sqlite' | 'postgres';
  /** Cheap round trip for readiness. */
  ping(): Promise<void>;
  /** What the store cannot promise now (PostgreSQL: acknowledged writes that a failover could lose), or null. */
  warning?(): string | null;
  /**
   * PostgreSQL: calls `listener` when the ledger moves to a server on a newer timeline than the one it wrote to
   * (a failover, after which the last commits of an asynchronous primary may be missing). Absent: no failover.
   */
  onFailover?(listener: (timeline: number) => void): void;
  close(): Promise<void>;
}
