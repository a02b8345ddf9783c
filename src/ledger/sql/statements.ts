/**
 * Every statement both stores run, written once for a dialect (dialect.ts names the differences). Parameters
 * are `$1…$n`, listed in each statement's comment in order; rows come back in the shapes rows.ts maps.
 */
import type { Dialect } from './dialect';

export const ENTRY_COLUMNS =
  'seq, ts, key, command, payload_hash, programs, summary, intent, outcome, detail, signature, slot, balance_change, prev, hash, tokens';
const ENTRY_PARAMS = Array.from({ length: 16 }, (_, i) => `$${i + 1}`).join(', ');
const APPROVAL_COLUMNS =
  'id, key, summary, payload_hash, balance_change, fee, compute_units, requested_by, ts, expires_at, status, decided_by, decided_at, tokens, message, message_description, programs, destinations, fee_payer';
const HALT_COLUMNS = 'key, reason, by, ts';

export interface Statements {
  /**
   * The head record (seq, hash): the last entry's sequence and hash, moved in the same transaction as an append.
   * Row-locked (where the dialect locks rows) until the transaction ends: for appends.
   */
  head: string;
  /** The head record, for a read that moves nothing. */
  readHead: string;
  /** $1 seq, $2 hash. */
  moveHead: string;
  /** Entry columns in ENTRY_COLUMNS order (rows.ts entryRowValues). */
  insertEntry: string;
  /** $1 key, $2 since. */
  signEntriesForKey: string;
  /** $1 key, $2 rate window start, $3 spend window start, $4 daily cap → rate, finals, orphans. */
  usage: string;
  /** $1 key, $2 signature → in_flight: 1 when an intent has that signature and no final entry has it yet, else 0. */
  signatureInFlight: string;
  /** $1 after seq, $2 last seq, $3 limit. */
  page: string;
  /** $1 limit; newest first. */
  tail: string;
  /** $1 key. */
  getHalt: string;
  listHalts: string;
  /** $1 key, $2 reason, $3 by, $4 ts. */
  insertHalt: string;
  /** $1 key; returns the lifted halt. */
  deleteHalt: string;
  /** APPROVAL_COLUMNS order without status and decision; returns the row, or nothing when the id is taken. */
  insertApproval: string;
  /** $1 id. */
  getApproval: string;
  /** $1 id; the row locked until the transaction ends, for a decision. */
  getApprovalForDecision: string;
  listApprovals: string;
  /** $1 status. */
  listApprovalsByStatus: string;
  /** $1 status, $2 decided_by, $3 decided_at, $4 id. */
  decideApproval: string;
}

export function statements(d: Dialect): Statements {
  return {
    head: `SELECT seq, hash FROM chain_head WHERE id = 1 ${d.forUpdate}`,
    readHead: 'SELECT seq, hash FROM chain_head WHERE id = 1',
    moveHead: 'UPDATE chain_head SET seq = $1, hash = $2 WHERE id = 1',
    insertEntry: `INSERT INTO entries (${ENTRY_COLUMNS}) VALUES (${ENTRY_PARAMS})`,
    signEntriesForKey: `SELECT ${ENTRY_COLUMNS} FROM entries
      WHERE key = $1 AND command IN ('sign', 'sign-intent', 'sign-message') AND ts >= $2 ORDER BY seq`,
    usage: usageSql(d),
    signatureInFlight: `SELECT CASE WHEN EXISTS (SELECT 1 FROM entries WHERE key = $1 AND signature = $2 AND command = 'sign-intent')
        AND NOT EXISTS (SELECT 1 FROM entries WHERE key = $1 AND signature = $2 AND command = 'sign') THEN 1 ELSE 0 END AS in_flight`,
    page: `SELECT ${ENTRY_COLUMNS} FROM entries WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT $3`,
    tail: `SELECT ${ENTRY_COLUMNS} FROM entries ORDER BY seq DESC LIMIT $1`,
    getHalt: `SELECT ${HALT_COLUMNS} FROM halts WHERE key = $1`,
    listHalts: `SELECT ${HALT_COLUMNS} FROM halts ORDER BY key`,
    insertHalt: `INSERT INTO halts (${HALT_COLUMNS}) VALUES ($1, $2, $3, $4)`,
    deleteHalt: `DELETE FROM halts WHERE key = $1 RETURNING ${HALT_COLUMNS}`,
    insertApproval: `INSERT INTO approvals (${APPROVAL_COLUMNS})
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'pending', NULL, NULL, $11, $12, $13, $14, $15, $16)
      ON CONFLICT (id) DO NOTHING RETURNING ${APPROVAL_COLUMNS}`,
    getApproval: `SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE id = $1`,
    getApprovalForDecision: `SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE id = $1 ${d.forUpdate}`,
    listApprovals: `SELECT ${APPROVAL_COLUMNS} FROM approvals ORDER BY ts, id`,
    listApprovalsByStatus: `SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE status = $1 ORDER BY ts, id`,
    decideApproval: 'UPDATE approvals SET status = $1, decided_by = $2, decided_at = $3 WHERE id = $4',
  };
}

/**
 * A key's usage (limits.ts's computeUsage) as one statement, so a sign does not read the key's whole day of
 * entries into JS: the database scans its indexes instead. The contract suite pins it to computeUsage.
 * The look-ups from a final to its intent (and back) go by signature.
 */
function usageSql(d: Dialect): string {
  const bySignature = d.indexedBy('entries_signature');
  const key = 'CAST($1 AS text)';
  const rateSince = 'CAST($2 AS bigint)';
  const since = 'CAST($3 AS bigint)';
  const cap = 'CAST($4 AS bigint)';
  const spend = (col: string) => `${d.greatest}(-(${col}), 0)`;
  return `SELECT
  (SELECT count(*) FROM entries WHERE key = ${key} AND ts >= ${rateSince}
      AND (command = 'sign-intent' OR (command = 'sign-message' AND outcome = 'signed'))) AS rate,
  (SELECT coalesce(sum(CASE
       WHEN f.outcome IN ('confirmed', 'failed') AND f.balance_change IS NOT NULL THEN ${spend('f.balance_change')}
       ELSE coalesce(
         (SELECT CASE WHEN i.balance_change IS NULL THEN ${cap} ELSE ${spend('i.balance_change')} END
            FROM entries i ${bySignature}
           WHERE i.key = ${key} AND i.command = 'sign-intent' AND i.ts >= ${since} AND i.signature = f.signature
           ORDER BY i.seq DESC LIMIT 1),
         ${cap})
     END), 0)
     FROM entries f
    WHERE f.key = ${key} AND f.command = 'sign' AND f.ts >= ${since}
      AND f.outcome IN ('confirmed', 'failed', 'unknown', 'expired')) AS finals,
  (SELECT coalesce(sum(CASE WHEN e.balance_change IS NULL THEN ${cap} ELSE ${spend('e.balance_change')} END), 0)
     FROM entries e
    WHERE e.key = ${key} AND e.command = 'sign-intent' AND e.ts >= ${since}
      AND (e.signature IS NULL OR NOT EXISTS (
            SELECT 1 FROM entries g ${bySignature}
             WHERE g.key = ${key} AND g.command = 'sign' AND g.ts >= ${since} AND g.signature = e.signature))) AS orphans`;
}
