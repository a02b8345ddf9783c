/**
 * The webhook outbox's statements and rows, shared by both stores (parameters `$1…$n` as in statements.ts). A claim
 * is one UPDATE over the due rows nobody holds: in PostgreSQL their selection is FOR UPDATE SKIP LOCKED, so two
 * replicas claiming at once take different rows; in SQLite the write transaction holds the whole file.
 */
import type { NotificationInput, NotificationRecord, NotificationSettlement, NotificationStatus } from '../types';
import type { Dialect } from './dialect';
import type { Row } from './rows';

const COLUMNS =
  'id, hook, event, key, body, created_at, status, attempts, next_at, claimed_by, claim_until, last_error, settled_at';

export interface OutboxStatements {
  /** $1 id, $2 hook, $3 event, $4 key, $5 body, $6 created_at, $7 next_at. */
  insert: string;
  /** $1 owner, $2 claim_until, $3 now, $4 limit; returns the claimed rows. */
  claim: string;
  /** $1 status, $2 attempts, $3 next_at, $4 last_error, $5 settled_at, $6 id, $7 owner. */
  settle: string;
  /** $1 limit; newest first. */
  list: string;
  /** $1 status, $2 limit; newest first. */
  listByStatus: string;
  /** → status, n. */
  counts: string;
  /** $1 settled before (unix ms). */
  prune: string;
}

export function outboxStatements(d: Dialect): OutboxStatements {
  return {
    // A notification already written under its id (an event told by two processes) is kept as it is.
    insert: `INSERT INTO notifications (${COLUMNS})
      VALUES ($1, $2, $3, $4, $5, $6, 'pending', 0, $7, NULL, NULL, NULL, NULL) ON CONFLICT (id) DO NOTHING`,
    claim: `UPDATE notifications SET claimed_by = $1, claim_until = $2
      WHERE id IN (SELECT id FROM notifications
                    WHERE status = 'pending' AND next_at <= $3 AND (claim_until IS NULL OR claim_until < $3)
                    ORDER BY next_at, created_at LIMIT $4 ${d.skipLocked})
      RETURNING ${COLUMNS}`,
    settle: `UPDATE notifications
      SET status = $1, attempts = $2, next_at = $3, last_error = $4, settled_at = $5, claimed_by = NULL, claim_until = NULL
      WHERE id = $6 AND claimed_by = $7`,
    list: `SELECT ${COLUMNS} FROM notifications ORDER BY created_at DESC, id DESC LIMIT $1`,
    listByStatus: `SELECT ${COLUMNS} FROM notifications WHERE status = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
    counts: 'SELECT status, count(*) AS n FROM notifications GROUP BY status',
    prune: "DELETE FROM notifications WHERE status = 'delivered' AND settled_at < $1",
  };
}

const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const strOrNull = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export function notificationRowValues(n: NotificationInput): unknown[] {
  return [n.id, n.hook, n.event, n.key, n.body, n.created_at, n.next_at];
}

export function settlementRowValues(id: string, owner: string, s: NotificationSettlement): unknown[] {
  return [s.status, s.attempts, s.next_at, s.last_error, s.settled_at, id, owner];
}

export function rowToNotification(r: Row): NotificationRecord {
  return {
    id: str(r.id),
    hook: str(r.hook),
    event: str(r.event),
    key: strOrNull(r.key),
    body: str(r.body),
    created_at: Number(r.created_at),
    next_at: Number(r.next_at),
    status: str(r.status) as NotificationStatus,
    attempts: Number(r.attempts),
    claimed_by: strOrNull(r.claimed_by),
    claim_until: numOrNull(r.claim_until),
    last_error: strOrNull(r.last_error),
    settled_at: numOrNull(r.settled_at),
  };
}

/** Counts by status, every status present (0 where no row has it). */
export function rowsToCounts(rows: readonly Row[]): Record<NotificationStatus, number> {
  const counts: Record<NotificationStatus, number> = { pending: 0, delivered: 0, failed: 0 };
  for (const r of rows) {
    const status = str(r.status);
    if (status === 'pending' || status === 'delivered' || status === 'failed') counts[status] = Number(r.n);
  }
  return counts;
}
