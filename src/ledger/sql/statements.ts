/**
 * Every statement both stores run, written once for a dialect (dialect.ts names the differences). Parameters
 * are `$1…$n`, listed in each statement's comment in order; rows come back in the shapes rows.ts maps.
 */
import type { Dialect } from './dialect';

export const ENTRY_COLUMNS =
  'seq, ts, key, command, payload_hash, programs, summary, intent, outcome, detail, signature, slot, balance_change, prev, hash, tokens, send_mode, last_valid_block_height, fee_payer, from_slot, lamport_credits, usd_micros, usd_prices, budget_blocks';
const ENTRY_PARAMS = Array.from({ length: ENTRY_COLUMNS.split(',').length }, (_, i) => `$${i + 1}`).join(', ');
const APPROVAL_COLUMNS =
  'id, key, summary, payload_hash, balance_change, fee, compute_units, requested_by, ts, expires_at, status, decided_by, decided_at, tokens, message, message_description, required, approvers, votes, waiter, programs, destinations, fee_payer, usd_value';
const HALT_COLUMNS = 'key, reason, by, ts';
/** The entries a key's usage is counted from. */
const SIGN_COMMANDS = "'sign', 'sign-intent', 'sign-message'";

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
  /** $1 after seq, $2 limit: every key's sign entries after a sequence number, for the usage books. */
  signEntriesAfter: string;
  /** $1 key, $2 since, $3 through seq: one key's sign entries, to load its usage book. */
  keySignEntries: string;
  /**
   * $1 revocation id, $2 since, $3 through seq: the intents naming a credential block in their budget_blocks (by the
   * index, budget-blocks.ts) and the finals of those intents, to load the block's usage book.
   */
  blockSignEntries: string;
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
  /**
   * APPROVAL_COLUMNS order without status, decision and votes (rows.ts approvalRowValues); returns the row, or
   * nothing when the id is taken.
   */
  insertApproval: string;
  /** $1 id. */
  getApproval: string;
  /** $1 id; the row locked until the transaction ends, for a decision. */
  getApprovalForDecision: string;
  listApprovals: string;
  /** $1 status. */
  listApprovalsByStatus: string;
  /** $1 status, $2 decided_by, $3 decided_at, $4 votes (JSON), $5 id (rows.ts decisionRowValues). */
  decideApproval: string;
  /**
   * $1 key, $2 payload hash, $3 now: the newest unexpired request for that payload that is still open to a sign
   * asking again (pending, or abandoned by the sign that waited on it), row-locked until the transaction ends.
   */
  openForPayload: string;
  /** $1 waiter, $2 id: a sign waits on the request (again): pending, undecided. */
  reopenFor: string;
}

export function statements(d: Dialect): Statements {
  return {
    head: `SELECT seq, hash FROM chain_head WHERE id = 1 ${d.forUpdate}`,
    readHead: 'SELECT seq, hash FROM chain_head WHERE id = 1',
    moveHead: 'UPDATE chain_head SET seq = $1, hash = $2 WHERE id = 1',
    insertEntry: `INSERT INTO entries (${ENTRY_COLUMNS}) VALUES (${ENTRY_PARAMS})`,
    signEntriesForKey: `SELECT ${ENTRY_COLUMNS} FROM entries
      WHERE key = $1 AND command IN (${SIGN_COMMANDS}) AND ts >= $2 ORDER BY seq`,
    signEntriesAfter: `SELECT ${ENTRY_COLUMNS} FROM entries
      WHERE seq > $1 AND command IN (${SIGN_COMMANDS}) ORDER BY seq LIMIT $2`,
    keySignEntries: `SELECT ${ENTRY_COLUMNS} FROM entries
      WHERE key = $1 AND command IN (${SIGN_COMMANDS}) AND ts >= $2 AND seq <= $3 ORDER BY seq`,
    // A final is written by its intent's key, after it: it is looked for among those keys' signs from the first
    // intent on, by signature, over whichever index a store's planner finds cheaper (entries_key_command_ts, or the
    // sequence range). The intents are read once (MATERIALIZED), each lookup a set built once.
    blockSignEntries: `WITH intents AS MATERIALIZED (
        SELECT e.seq, e.key, e.signature FROM entry_budget_blocks b JOIN entries e ON e.seq = b.seq
        WHERE b.revocation_id = $1 AND b.ts >= $2 AND e.ts >= $2)
      SELECT ${ENTRY_COLUMNS} FROM entries
        WHERE seq IN (SELECT seq FROM intents) AND seq <= $3
      UNION ALL
      SELECT ${ENTRY_COLUMNS} FROM entries
        WHERE key IN (SELECT key FROM intents) AND command = 'sign' AND ts >= $2
          AND seq > (SELECT min(seq) FROM intents) AND seq <= $3
          AND signature IN (SELECT signature FROM intents)
      ORDER BY seq`,
    page: `SELECT ${ENTRY_COLUMNS} FROM entries WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT $3`,
    tail: `SELECT ${ENTRY_COLUMNS} FROM entries ORDER BY seq DESC LIMIT $1`,
    getHalt: `SELECT ${HALT_COLUMNS} FROM halts WHERE key = $1`,
    listHalts: `SELECT ${HALT_COLUMNS} FROM halts ORDER BY key`,
    insertHalt: `INSERT INTO halts (${HALT_COLUMNS}) VALUES ($1, $2, $3, $4)`,
    deleteHalt: `DELETE FROM halts WHERE key = $1 RETURNING ${HALT_COLUMNS}`,
    insertApproval: `INSERT INTO approvals (${APPROVAL_COLUMNS})
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'pending', NULL, NULL, $11, $12, $13, $14, $15, '[]', $16, $17, $18, $19, $20)
      ON CONFLICT (id) DO NOTHING RETURNING ${APPROVAL_COLUMNS}`,
    getApproval: `SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE id = $1`,
    getApprovalForDecision: `SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE id = $1 ${d.forUpdate}`,
    listApprovals: `SELECT ${APPROVAL_COLUMNS} FROM approvals ORDER BY ts, id`,
    listApprovalsByStatus: `SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE status = $1 ORDER BY ts, id`,
    decideApproval: 'UPDATE approvals SET status = $1, decided_by = $2, decided_at = $3, votes = $4 WHERE id = $5',
    openForPayload: `SELECT ${APPROVAL_COLUMNS} FROM approvals
      WHERE key = $1 AND payload_hash = $2 AND status IN ('pending', 'abandoned') AND expires_at >= $3
      ORDER BY ts DESC, id LIMIT 1 ${d.forUpdate}`,
    reopenFor:
      "UPDATE approvals SET waiter = $1, status = 'pending', decided_by = NULL, decided_at = NULL WHERE id = $2",
  };
}
