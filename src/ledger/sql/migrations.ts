/**
 * The schema of each store, as versioned migrations: index + 1 is the schema version a migration brings the
 * database to. A migration that shipped is never edited (a ledger in the field was built by it); a change is a
 * new one at the end. The two stores' column types differ (SQLite's INTEGER is 64-bit, PostgreSQL needs bigint),
 * so each has its own list; the statements that read and write them are shared (statements.ts).
 */
import { SignerError } from '../../util/errors';
import { GENESIS_PREV } from '../hash-chain';
import { POSTGRES_BUDGET_BLOCK_INDEX, SQLITE_BUDGET_BLOCK_INDEX } from './budget-blocks';
import type { Work } from './driver';
import { intentWatchMigration } from './intent-watch';
import { treasuryBaselinesTable } from './treasury-baselines';

/** SQL text, or work (driver.ts) for a conversion that is written once for both stores. */
export type Migration = string | (() => Work<void>);

/** What a message sign's approval says the message is (format, application domain, signatories). */
const MESSAGE_DESCRIPTION_COLUMN = 'ALTER TABLE approvals ADD COLUMN message_description TEXT';

/** Indexes for a key's sign entries by command and time, and for entries by signature. */
const USAGE_INDEXES = [
  'CREATE INDEX entries_key_command_ts ON entries (key, command, ts)',
  'CREATE INDEX entries_signature ON entries (signature, command)',
].join(';\n');

/**
 * Indexes no statement reads: a key's usage and its signatures in flight are kept in memory and loaded by key and
 * command (entries_key_command_ts), and each of these would cost a page written with every entry.
 */
const UNREAD_ENTRY_INDEXES = ['DROP INDEX IF EXISTS entries_signature', 'DROP INDEX IF EXISTS entries_key_ts'].join(
  ';\n',
);

/**
 * Token figures of signs and of the approvals that show them (JSON text; NULL where nothing moved), and the text of
 * a message an operator is asked to approve (sign-message), shown by `approvals list`.
 */
const TOKEN_AND_MESSAGE_COLUMNS = [
  'ALTER TABLE entries ADD COLUMN tokens TEXT',
  'ALTER TABLE approvals ADD COLUMN tokens TEXT',
  'ALTER TABLE approvals ADD COLUMN message TEXT',
].join(';\n');

/**
 * Approvals by quorum: how many distinct approvers it takes (1 for every request before), who may vote (JSON list;
 * NULL: anyone, as before), the votes cast (JSON list), and which sign waits on it (a later sign of the same payload
 * takes the request over). The index finds a pending request for the same key and payload.
 */
const QUORUM_COLUMNS = [
  'ALTER TABLE approvals ADD COLUMN required INTEGER NOT NULL DEFAULT 1',
  'ALTER TABLE approvals ADD COLUMN approvers TEXT',
  "ALTER TABLE approvals ADD COLUMN votes TEXT NOT NULL DEFAULT '[]'",
  'ALTER TABLE approvals ADD COLUMN waiter TEXT',
  'CREATE INDEX approvals_key_payload ON approvals (key, payload_hash, status)',
].join(';\n');

/**
 * The lamports an intent's transaction pays each other account (JSON text; NULL where it pays none): the usage the
 * SOL per-destination cap reads.
 */
const LAMPORT_CREDITS_COLUMN = 'ALTER TABLE entries ADD COLUMN lamport_credits TEXT';

/**
 * What an intent's transaction is worth in dollars at sign time (micro-dollars as decimal text, exact beyond 2^53;
 * NULL for a key without `usd` caps): the usage `usd.per_day` reads.
 */
const USD_MICROS_COLUMN = 'ALTER TABLE entries ADD COLUMN usd_micros TEXT';

/** The prices that value was reached at (JSON text; NULL where `usd_micros` is): what the tripwire judges a landing by. */
const USD_PRICES_COLUMN = 'ALTER TABLE entries ADD COLUMN usd_prices TEXT';

/** The dollar value an operator is asked to approve (a dollar string; NULL for a key without `usd` caps). */
const APPROVAL_USD_VALUE_COLUMN = 'ALTER TABLE approvals ADD COLUMN usd_value TEXT';

/**
 * The credential blocks whose `per_day` budget an intent counts against (JSON list of revocation ids; NULL for a
 * sign no budgeted credential asked for): the usage a block's budget reads, across every key it signed with.
 */
const BUDGET_BLOCKS_COLUMN = 'ALTER TABLE entries ADD COLUMN budget_blocks TEXT';

/**
 * The webhook outbox (src/notify/): one row per notification and hook, written when its event happens and claimed by
 * one deliverer at a time (claimed_by until claim_until, unix ms), so replicas sharing the ledger never both post it.
 */
function outboxTable(int: string): string {
  return `CREATE TABLE notifications (
     id TEXT PRIMARY KEY,
     hook TEXT NOT NULL,
     event TEXT NOT NULL,
     key TEXT,
     body TEXT NOT NULL,
     created_at ${int} NOT NULL,
     status TEXT NOT NULL,
     attempts ${int} NOT NULL,
     next_at ${int} NOT NULL,
     claimed_by TEXT,
     claim_until ${int},
     last_error TEXT,
     settled_at ${int}
   );
   CREATE INDEX notifications_due ON notifications (status, next_at);
   CREATE INDEX notifications_created ON notifications (created_at)`;
}

/**
 * The operator console: passkeys, one-time enrollment links (their token's hash), single-use nonces of the WebAuthn
 * ceremonies and settings (the session secret when no file gives one); and what an approval shows an operator beyond
 * amounts: the programs called, the lamport credits and the fee payer (JSON text or NULL).
 */
function operatorConsole(integer: string): string {
  return [
    `CREATE TABLE operator_passkeys (
       credential_id text PRIMARY KEY,
       operator text NOT NULL,
       public_key text NOT NULL,
       counter ${integer} NOT NULL,
       transports text NOT NULL,
       created_at ${integer} NOT NULL,
       last_used_at ${integer}
     )`,
    'CREATE INDEX operator_passkeys_operator ON operator_passkeys (operator, created_at)',
    `CREATE TABLE operator_enrollments (
       token_hash text PRIMARY KEY,
       operator text NOT NULL,
       created_at ${integer} NOT NULL,
       expires_at ${integer} NOT NULL,
       used_at ${integer}
     )`,
    `CREATE TABLE operator_nonces (
       nonce text PRIMARY KEY,
       purpose text NOT NULL,
       subject text NOT NULL,
       expires_at ${integer} NOT NULL
     )`,
    'CREATE TABLE operator_settings (name text PRIMARY KEY, value text NOT NULL)',
    'ALTER TABLE approvals ADD COLUMN programs text',
    'ALTER TABLE approvals ADD COLUMN destinations text',
    'ALTER TABLE approvals ADD COLUMN fee_payer text',
  ].join(';\n');
}

/**
 * The console's logins, so logging out and revoking end them in every replica at once (only the hash of a session's
 * id: the cookie carries the id), and operators' revocations, so a revoked operator's votes stop counting.
 */
function operatorSessions(integer: string): string {
  return [
    `CREATE TABLE operator_sessions (
       id_hash text PRIMARY KEY,
       operator text NOT NULL,
       credential text NOT NULL,
       created_at ${integer} NOT NULL,
       expires_at ${integer} NOT NULL
     )`,
    'CREATE INDEX operator_sessions_operator ON operator_sessions (operator)',
    `CREATE TABLE operator_standing (
       operator text PRIMARY KEY,
       revoked_at ${integer},
       reinstated_at ${integer}
     )`,
  ].join(';\n');
}

/**
 * Credential blocks revoked by an operator (the console): each block's revocation id with who, when and why, read by
 * every replica's verifier besides `serve.credentials.revoked`. `name` is the issued root it was revoked by, if any.
 */
function credentialRevocations(integer: string): string {
  return `CREATE TABLE credential_revocations (
     revocation_id text PRIMARY KEY,
     name text,
     reason text NOT NULL,
     by text NOT NULL,
     ts ${integer} NOT NULL
   )`;
}

export const SQLITE_MIGRATIONS: readonly Migration[] = [
  `CREATE TABLE entries (
     seq INTEGER PRIMARY KEY,
     ts INTEGER NOT NULL,
     key TEXT NOT NULL,
     command TEXT NOT NULL,
     payload_hash TEXT NOT NULL,
     programs TEXT NOT NULL,
     summary TEXT NOT NULL,
     intent TEXT,
     outcome TEXT NOT NULL,
     detail TEXT,
     signature TEXT,
     slot INTEGER,
     balance_change INTEGER,
     prev TEXT NOT NULL,
     hash TEXT NOT NULL
   );
   CREATE INDEX entries_key_ts ON entries (key, ts);
   CREATE TABLE halts (key TEXT PRIMARY KEY, reason TEXT NOT NULL, by TEXT NOT NULL, ts INTEGER NOT NULL);
   CREATE TABLE approvals (
     id TEXT PRIMARY KEY,
     key TEXT NOT NULL,
     summary TEXT NOT NULL,
     payload_hash TEXT NOT NULL,
     balance_change INTEGER,
     fee INTEGER,
     compute_units INTEGER,
     requested_by TEXT NOT NULL,
     ts INTEGER NOT NULL,
     expires_at INTEGER NOT NULL,
     status TEXT NOT NULL,
     decided_by TEXT,
     decided_at INTEGER
   );
   CREATE INDEX approvals_status ON approvals (status, ts);
   CREATE TABLE key_locks (
     key TEXT PRIMARY KEY,
     owner_id TEXT NOT NULL,
     host TEXT NOT NULL,
     pid INTEGER NOT NULL,
     start TEXT,
     acquired_at INTEGER NOT NULL
   );`,
  USAGE_INDEXES,
  // 3: the head record (as the PostgreSQL store has had from the start), seeded from the chain as it stands, so
  // a truncated tail or a deleted last entry is detected; and a lease on key locks, so a holder on another host
  // that died stops blocking the key once its lease runs out (a lock row without a lease is from an older signer).
  `CREATE TABLE chain_head (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL, hash TEXT NOT NULL);
   INSERT INTO chain_head (id, seq, hash)
     SELECT 1, coalesce((SELECT seq FROM entries ORDER BY seq DESC LIMIT 1), 0),
               coalesce((SELECT hash FROM entries ORDER BY seq DESC LIMIT 1), '${GENESIS_PREV}');
   ALTER TABLE key_locks ADD COLUMN lease_until_ms INTEGER;`,
  TOKEN_AND_MESSAGE_COLUMNS,
  MESSAGE_DESCRIPTION_COLUMN,
  QUORUM_COLUMNS,
  outboxTable('INTEGER'),
  operatorConsole('INTEGER'),
  UNREAD_ENTRY_INDEXES,
  operatorSessions('INTEGER'),
  intentWatchMigration('INTEGER'),
  LAMPORT_CREDITS_COLUMN,
  USD_MICROS_COLUMN,
  USD_PRICES_COLUMN,
  BUDGET_BLOCKS_COLUMN,
  APPROVAL_USD_VALUE_COLUMN,
  credentialRevocations('INTEGER'),
  SQLITE_BUDGET_BLOCK_INDEX,
  treasuryBaselinesTable('INTEGER'),
];

export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  `CREATE TABLE entries (
     seq bigint PRIMARY KEY,
     ts bigint NOT NULL,
     key text NOT NULL,
     command text NOT NULL,
     payload_hash text NOT NULL,
     programs text NOT NULL,
     summary text NOT NULL,
     intent text,
     outcome text NOT NULL,
     detail text,
     signature text,
     slot bigint,
     balance_change bigint,
     prev text NOT NULL,
     hash text NOT NULL
   );
   CREATE INDEX entries_key_ts ON entries (key, ts);
   CREATE TABLE chain_head (id smallint PRIMARY KEY CHECK (id = 1), seq bigint NOT NULL, hash text NOT NULL);
   INSERT INTO chain_head (id, seq, hash) VALUES (1, 0, '${GENESIS_PREV}');
   CREATE TABLE halts (key text PRIMARY KEY, reason text NOT NULL, by text NOT NULL, ts bigint NOT NULL);
   CREATE TABLE approvals (
     id text PRIMARY KEY,
     key text NOT NULL,
     summary text NOT NULL,
     payload_hash text NOT NULL,
     balance_change bigint,
     fee bigint,
     compute_units bigint,
     requested_by text NOT NULL,
     ts bigint NOT NULL,
     expires_at bigint NOT NULL,
     status text NOT NULL,
     decided_by text,
     decided_at bigint
   );
   CREATE INDEX approvals_status ON approvals (status, ts);`,
  USAGE_INDEXES,
  TOKEN_AND_MESSAGE_COLUMNS,
  MESSAGE_DESCRIPTION_COLUMN,
  QUORUM_COLUMNS,
  outboxTable('bigint'),
  operatorConsole('bigint'),
  UNREAD_ENTRY_INDEXES,
  operatorSessions('bigint'),
  intentWatchMigration('bigint'),
  LAMPORT_CREDITS_COLUMN,
  USD_MICROS_COLUMN,
  USD_PRICES_COLUMN,
  BUDGET_BLOCKS_COLUMN,
  APPROVAL_USD_VALUE_COLUMN,
  credentialRevocations('bigint'),
  POSTGRES_BUDGET_BLOCK_INDEX,
  treasuryBaselinesTable('bigint'),
];

/** The error for a database written by a newer signer: refusing is safer than guessing at its schema. */
export function schemaTooNew(store: 'SQLite' | 'PostgreSQL', current: number, known: number): SignerError {
  return new SignerError(
    'ledger',
    `${store} ledger: the ledger schema is version ${current}, newer than this signer understands (${known}): upgrade the signer`,
  );
}
