/**
 * The SQLite driver: runs the shared work (sql/driver.ts) on one better-sqlite3 connection, synchronously, each
 * statement prepared once; waits for another process's write lock off the event loop (sqlite-busy.ts), and for the
 * log's fsync after every write (sqlite-wal-sync.ts).
 *
 * Write transactions asked for before the event loop next polls for I/O run as one SQLite transaction, each in a
 * savepoint of its own (group commit one level up from the fsync's): taking the file's write lock and committing
 * cost more than a sign's statements, and under load several signs' intents and finals are asked for at once.
 * Each keeps its own outcome: one that fails is rolled back to its savepoint alone, and the others commit.
 */
import type Database from 'better-sqlite3';
import { SignerError, errorMessage, isSignerError } from '../util/errors';
import { sqliteDialect } from './sql/dialect';
import { stepSync, type Result, type SqlDriver, type Statement, type Work } from './sql/driver';
import type { Row } from './sql/rows';
import { retryWhileBusy } from './sqlite-busy';
import type { WalSync } from './sqlite-wal-sync';
import type { AuditEntry } from './types';

export function ledgerError(what: string, e: unknown): SignerError {
  if (isSignerError(e)) return e;
  return new SignerError('ledger', `SQLite ledger: ${what}: ${errorMessage(e)}`, { cause: e });
}

/** A write committed whose log could not be synced: it is not known to be on disk. */
function syncFailed(what: string, e: unknown): SignerError {
  return ledgerError(`${what}: cannot sync the log`, e);
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

/** A write transaction waiting for the next group. */
interface QueuedWrite {
  what: string;
  work: () => Work<unknown>;
  syncIfAppended: boolean;
  resolve(value: unknown): void;
  reject(e: unknown): void;
}

/** What one write of a group came to once the group committed: its value, or the error it alone failed with. */
type WriteOutcome = { write: QueuedWrite } & (
  { ok: true; value: unknown; appended: number } | { ok: false; error: unknown }
);

/** Runs work on one better-sqlite3 connection: synchronously, each statement prepared once. */
export class SqliteDriver implements SqlDriver {
  readonly dialect = sqliteDialect;
  closed = false;
  /** How many write transactions committed: fewer than the writes under load, where several share one. */
  transactions = 0;
  private readonly prepared = new Map<string, Database.Statement<[Record<string, unknown>], Row>>();
  /** Entries appended by the write under way, handed to `committed` once its savepoint is released. */
  private appendedInTx: { seq: number; entry: AuditEntry }[] = [];
  private queued: QueuedWrite[] = [];

  constructor(
    readonly db: Database.Database,
    private readonly busyTimeoutMs: number,
    private readonly walSync: WalSync,
    /**
     * Takes in an entry this handle wrote (the usage books, without reading it back), as soon as the write that
     * appended it is complete within its group, so a later write of the same group sees it.
     */
    private readonly committed: (seq: number, entry: AuditEntry) => void,
    /** Called when a group that handed entries to `committed` did not commit after all: they never happened. */
    private readonly uncommitted: () => void,
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
   * A write transaction: rolled back whole on any failure, so it is safe to retry when busy. It joins the writes
   * asked for before the event loop next polls for I/O in one BEGIN IMMEDIATE transaction, in a savepoint of its
   * own. Resolves once the commit is on disk; with `syncIfAppended`, a write that appended no entry (and wrote
   * nothing else) resolves at its commit.
   */
  write<T>(what: string, work: () => Work<T>, opts: { syncIfAppended?: boolean } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queued.push({
        what,
        work,
        syncIfAppended: opts.syncIfAppended === true,
        resolve,
        reject,
      });
      if (this.queued.length === 1) setImmediate(() => void this.writeGroup());
    });
  }

  /** Commits the queued writes as one transaction, then settles each with its own outcome. */
  private async writeGroup(): Promise<void> {
    const group = this.queued;
    this.queued = [];
    const [first] = group;
    if (first === undefined) return; // committed by close()
    let outcomes: WriteOutcome[];
    try {
      outcomes = await this.run(first.what, () => this.commitGroup(group));
    } catch (e) {
      for (const w of group) w.reject(ledgerError(w.what, e));
      return;
    }
    this.settle(outcomes);
  }

  /**
   * Commits the writes still queued now, on the caller's turn: a close must not drop a write asked for before it.
   * Another process holding the file fails them rather than making the close wait.
   */
  commitQueued(): void {
    const group = this.queued;
    this.queued = [];
    if (group.length === 0) return;
    let outcomes: WriteOutcome[];
    try {
      this.checkOpen();
      outcomes = this.commitGroup(group);
    } catch (e) {
      for (const w of group) w.reject(ledgerError(w.what, e));
      return;
    }
    this.settle(outcomes);
  }

  /** Each write of a committed group settled: at once, or once the log's fsync that follows the commit is done. */
  private settle(outcomes: WriteOutcome[]): void {
    let synced: Promise<void> | null = null;
    for (const outcome of outcomes) {
      const w = outcome.write;
      if (!outcome.ok) w.reject(ledgerError(w.what, outcome.error));
      else if (w.syncIfAppended && outcome.appended === 0) w.resolve(outcome.value);
      else {
        synced ??= this.walSync.durable();
        synced.then(
          () => w.resolve(outcome.value),
          (e: unknown) => w.reject(syncFailed(w.what, e)),
        );
      }
    }
  }

  /**
   * One BEGIN IMMEDIATE transaction over the group, each write in a savepoint; a lone write needs none. Runs again
   * from the start when another process held the file, so each write's work is started afresh.
   */
  private commitGroup(group: QueuedWrite[]): WriteOutcome[] {
    const lone = group.length === 1;
    const outcomes: WriteOutcome[] = [];
    try {
      this.db
        .transaction(() => {
          for (const w of group) {
            this.appendedInTx = [];
            if (lone) {
              outcomes.push(this.complete(w, stepSync(w.work(), this.exec)));
              continue;
            }
            this.exec({ sql: 'SAVEPOINT write', values: [] });
            try {
              const value = stepSync(w.work(), this.exec);
              this.exec({ sql: 'RELEASE write', values: [] });
              outcomes.push(this.complete(w, value));
            } catch (e) {
              // A failure that ended the whole transaction (the disk, not the write) fails the group.
              if (!this.db.inTransaction) throw e;
              this.exec({ sql: 'ROLLBACK TO write', values: [] });
              this.exec({ sql: 'RELEASE write', values: [] });
              outcomes.push({ write: w, ok: false, error: e });
            }
          }
        })
        .immediate();
    } catch (e) {
      if (outcomes.some((o) => o.ok && o.appended > 0)) this.uncommitted();
      throw e;
    } finally {
      this.appendedInTx = [];
    }
    this.transactions++;
    return outcomes;
  }

  /** A write done within its group: its entries handed to the usage books, its value kept for the commit. */
  private complete(write: QueuedWrite, value: unknown): WriteOutcome {
    for (const { seq, entry } of this.appendedInTx) this.committed(seq, entry);
    return { write, ok: true, value, appended: this.appendedInTx.length };
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
    return this.walSync.durable().catch((e: unknown) => Promise.reject(syncFailed(what, e)));
  }
}
