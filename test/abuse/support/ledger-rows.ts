/**
 * The ledger as rows, read straight from the SQLite file (read-only, beside a running service): for the secret
 * scan (every row of every table) and for cheap "did anything change" counts in hot fuzz loops.
 */
import Database from 'better-sqlite3';
import { recordArtefact } from './record';

const TABLES = ['entries', 'halts', 'approvals'] as const;

/** Records every row of the audit, halt and approval tables as JSON lines; returns the row count. */
export function recordLedgerRows(sqlitePath: string, suite: string): number {
  const db = new Database(sqlitePath, { readonly: true, fileMustExist: true });
  try {
    let n = 0;
    const lines: string[] = [];
    for (const t of TABLES) {
      for (const row of db.prepare(`SELECT * FROM ${t}`).all()) {
        lines.push(JSON.stringify({ table: t, ...(row as object) }));
        n++;
      }
    }
    recordArtefact(suite, 'ledger', lines.join('\n'));
    return n;
  } finally {
    db.close();
  }
}

/** A fingerprint of everything a request could change: row counts and the last audit hash. */
export class LedgerWatch {
  private readonly db: Database.Database;
  private readonly stmt: Database.Statement;

  constructor(sqlitePath: string) {
    this.db = new Database(sqlitePath, { readonly: true, fileMustExist: true });
    this.stmt = this.db.prepare(
      `SELECT (SELECT count(*) FROM entries) AS entries, (SELECT count(*) FROM halts) AS halts,
              (SELECT count(*) FROM approvals) AS approvals, (SELECT coalesce(max(rowid), 0) FROM entries) AS last`,
    );
  }

  fingerprint(): string {
    const r = this.stmt.get() as { entries: number; halts: number; approvals: number; last: number };
    return `${r.entries}/${r.halts}/${r.approvals}/${r.last}`;
  }

  close(): void {
    this.db.close();
  }
}
