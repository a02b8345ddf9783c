/**
 * The treasury reconciliation's baselines (src/treasury/reconcile.ts): one row per key and treasury account, the
 * allowance a pass read and the ledger position it is consistent with, so a restart or another replica judges the
 * next pass against it. Data only: what the numbers mean is the reconciler's. A move is a compare-and-set on the
 * row the pass read, one statement, so two replicas passing at once never write over each other's newer row: the
 * second finds the row changed and writes nothing (its verdict was judged against the row it read, so it stands).
 */
import type { TreasuryBaseline } from '../types';
import type { Row } from './rows';

const COLUMNS = 'key, account, mint, delegate, amount, ts, seq';

/** The table: the amount as decimal text (exact beyond 2^53, as `usd_micros`). */
export function treasuryBaselinesTable(integer: string): string {
  return `CREATE TABLE treasury_baselines (
     key text NOT NULL,
     account text NOT NULL,
     mint text NOT NULL,
     delegate text NOT NULL,
     amount text NOT NULL,
     ts ${integer} NOT NULL,
     seq ${integer} NOT NULL,
     PRIMARY KEY (key, account)
   )`;
}

/** The row as it was read: a move or drop happens only while the stored row still says all of it. */
const SAME_ROW = 'key = $1 AND account = $2 AND mint = $3 AND delegate = $4 AND amount = $5 AND ts = $6 AND seq = $7';

export const TREASURY_BASELINE_SQL = {
  /** $1 key. */
  list: `SELECT ${COLUMNS} FROM treasury_baselines WHERE key = $1 ORDER BY account`,
  /** COLUMNS order; nothing when the key and account already have a row. */
  insert: `INSERT INTO treasury_baselines (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
    ON CONFLICT (key, account) DO NOTHING`,
  /** $1…$7 the row read (COLUMNS order), $8 mint, $9 delegate, $10 amount, $11 ts, $12 seq. */
  move: `UPDATE treasury_baselines SET mint = $8, delegate = $9, amount = $10, ts = $11, seq = $12 WHERE ${SAME_ROW}`,
  /** $1…$7 the row read. */
  drop: `DELETE FROM treasury_baselines WHERE ${SAME_ROW}`,
};

export function baselineRowValues(b: TreasuryBaseline): unknown[] {
  return [b.key, b.account, b.mint, b.delegate, b.amount.toString(), b.ts, b.seq];
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

export function rowToBaseline(r: Row): TreasuryBaseline {
  return {
    key: text(r.key),
    account: text(r.account),
    mint: text(r.mint),
    delegate: text(r.delegate),
    amount: BigInt(text(r.amount)),
    ts: Number(r.ts),
    seq: Number(r.seq),
  };
}
