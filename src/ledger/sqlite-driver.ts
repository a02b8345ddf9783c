/**
 * The SQLite driver: runs the shared work (sql/driver.ts) on one better-sqlite3 connection, synchronously, each
 * statement prepared once; waits for another process's write lock off the event loop (sqlite-busy.ts), and for the
 * log's fsync after every write (sqlite-wal-sync.ts).
 */
import type Database from 'better-sqlite3';
import { SignerError, errorMessage } from '../util/errors';
import { sqliteDialect } from './sql/dialect';
import { stepSync, type Result, type SqlDriver, type Statement, type Work } from './sql/driver';
import type { Row } from './sql/rows';
import { retryWhileBusy } from './sqlite-busy';
import type { WalSync } from './sqlite-wal-sync';
import type { AuditEntry } from './types';

export function ledgerError(what: string, e: unknown): SignerError {
  if (e instanceof SignerError) return e;
  return new SignerError('ledger', `SQLite ledger: ${what}: ${errorMessage(e)}`, { cause: e });
}

/** Runs one statement of shared work on its prepared statement. */
export function execPrepared(stmt: Database.Statement<[Record<string, unknown>], Row>, s: Statement): Result {
  const values = sqliteDialect.bind(s.values);
  if (stmt.reader && s.first) {
    const row = stmt.get(values);
    return row ? { rows: [row], changes: 1 } : { rows: [], changes: 0 };
  }
  if (stmt.reader) {
    const rows = stmt.all(values);
    return { rows, changes: rows.length };
  }
  return { rows: [], changes: stmt.run(values).changes };
}

/** Runs work on one better-sqlite3 connection: synchronously, each statement prepared once. */
export class SqliteDriver implements SqlDriver {
  readonly dialect = sqliteDialect;
  closed = false;
  private readonly prepared = new Map<string, Database.Statement<[Record<string, unknown>], Row>>();
  /** Entries appended by the write transaction under way, handed to `committed` once it commits. */
  private appendedInTx: { seq: number; entry: AuditEntry }[] = [];

  constructor(
    readonly db: Database.Database,
    private readonly busyTimeoutMs: number,
    private readonly walSync: WalSync,
    /** Takes in an entry this handle committed (the usage books, without reading it back). */
    private readonly committed: (seq: number, entry: AuditEntry) => void,
  ) {}

  private exec = (s: Statement): Result => {
    let stmt = this.prepared.get(s.sql);
    if (!stmt) {
      stmt = this.db.prepare<[Record<string, unknown>], Row>(s.sql);
      this.prepared.set(s.sql, stmt);
    }
    if (s.appends) this.appendedInTx.push(s.appends);
    return execPrepared(stmt, s);
  };

  checkOpen(): void {
    if (this.closed) throw new SignerError('ledger', 'SQLite ledger: the ledger is closed');
  }

  /** Runs one synchronous step, retried off the event loop while another process holds the file. */
  async run<T>(what: string, fn: () => T): Promise<T> {
    this.checkOpen();
    try {
      return await retryWhileBusy(
        () => {
          this.checkOpen(); // closed while waiting out a busy file
          return fn();
        },
        this.busyTimeoutMs,
        () => what,
      );
    } catch (e) {
      throw ledgerError(what, e);
    }
  }

  read<T>(what: string, work: () => Work<T>): Promise<T> {
    return this.run(what, () => stepSync(work(), this.exec));
  }

  /**
   * A write transaction (BEGIN IMMEDIATE): rolled back whole on any failure, so it is safe to retry when busy.
   * Resolves once the commit is on disk; with `syncIfAppended`, a transaction that appended no entry (and wrote
   * nothing else) resolves at its commit.
   */
  async write<T>(what: string, work: () => Work<T>, opts: { syncIfAppended?: boolean } = {}): Promise<T> {
    let appended = 0;
    const result = await this.run(what, () => {
      this.appendedInTx = [];
      try {
        const r = this.db.transaction(() => stepSync(work(), this.exec)).immediate();
        for (const { seq, entry } of this.appendedInTx) this.committed(seq, entry);
        appended = this.appendedInTx.length;
        return r;
      } finally {
        this.appendedInTx = [];
      }
    });
    if (opts.syncIfAppended && appended === 0) return result;
    await this.durable(what);
    return result;
  }

  async autocommit<T>(what: string, work: () => Work<T>): Promise<T> {
    const result = await this.read(what, work);
    await this.durable(what);
    return result;
  }

  snapshot<T>(what: string, work: () => Work<T>): Promise<T> {
    return this.run(what, () => this.db.transaction(() => stepSync(work(), this.exec))());
  }

  private durable(what: string): Promise<void> {
    return this.walSync.durable().catch((e: unknown) => Promise.reject(ledgerError(`${what}: cannot sync the log`, e)));
  }
}
