/**
 * The SQLite ledger store (better-sqlite3): the embedded default, one file shared by the service and CLI
 * processes on one host. The concerns are written once for both stores (sql-ledger.ts); sqlite-driver.ts runs
 * them, and this is what SQLite does its own way.
 *
 * Durability: WAL, and every write resolves only once the log is fsync'd after its commit (sqlite-wal-sync.ts:
 * group commit, the fsync off the event loop), and a process killed at any instant leaves the last committed
 * state (the chain always verifies).
 * Write transactions are BEGIN IMMEDIATE: an append reads the head record, inserts the next entry and moves the
 * head while holding the file, so appends from several processes form one chain. better-sqlite3 is synchronous, so
 * a transaction's work is stepped to its end without an await (sql/driver.ts) and writes within one process are
 * already serialised by the event loop; waiting for another process's write lock happens off it (sqlite-busy.ts).
 *
 * The per-key lock is an in-process FIFO mutex in front of a lock row with a lease (sqlite-locks.ts).
 */
import Database from 'better-sqlite3';
import { SignerError } from '../util/errors';
import { appendIn, headIn } from './audit-log';
import { validateEntryInput } from './hash-chain';
import { selfIdentity } from './liveness';
import { KeyedMutex } from './mutex';
import { usageBooksOver } from './reservations';
import { sqlLedger } from './sql-ledger';
import { sqliteDialect } from './sql/dialect';
import { get, stepSync, type Work } from './sql/driver';
import { SQLITE_MIGRATIONS, schemaTooNew } from './sql/migrations';
import { rowToHalt, type Row } from './sql/rows';
import { statements } from './sql/statements';
import { BUSY_SLICE_MS, retryWhileBusy } from './sqlite-busy';
import { SqliteDriver, execPrepared, ledgerError } from './sqlite-driver';
import { lockError, sqliteKeyLocks, type HeldRow } from './sqlite-locks';
import { WalSync } from './sqlite-wal-sync';
import type { Ledger, ReserveDecision, ReserveRequest, ReserveView } from './types';

export interface SqliteLedgerOptions {
  /** How long an operation waits in all for another process's write transaction (off the event loop). Default 5000. */
  busyTimeoutMs?: number;
  /** How often a waiter re-checks a key lock held by another process. Default 20. */
  lockPollMs?: number;
  /** How long a key lock's lease lasts unless renewed (renewed every third of it while held). Default 30000. */
  lockLeaseMs?: number;
}

const SQL = statements(sqliteDialect);

/** $1 key: who holds the key's lock row, if anyone. */
const LOCK_OWNER = 'SELECT owner_id FROM key_locks WHERE key = $1';

/**
 * Opens (creating if needed) the ledger file and brings its schema up to date. The caller creates the folder
 * with the mode it wants.
 */
export async function openSqliteLedger(file: string, opts: SqliteLedgerOptions = {}): Promise<Ledger> {
  const busyTimeoutMs = Math.max(0, Math.floor(opts.busyTimeoutMs ?? 5000));
  let db: Database.Database | undefined;
  let lockDb: Database.Database | undefined;
  try {
    db = new Database(file);
    lockDb = new Database(file);
    for (const conn of [db, lockDb]) conn.pragma(`busy_timeout = ${BUSY_SLICE_MS}`);
    const main = db;
    await retryWhileBusy(
      () => main.pragma('journal_mode = WAL'),
      busyTimeoutMs,
      () => 'cannot open',
    );
    // Commits do not wait for the disk on the event loop; every write waits for WalSync's fsync instead.
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    await retryWhileBusy(
      () => migrate(main),
      busyTimeoutMs,
      () => 'cannot prepare the schema',
    );
    lockDb.pragma('synchronous = OFF');
    return sqliteLedger(db, lockDb, busyTimeoutMs, opts);
  } catch (e) {
    try {
      lockDb?.close();
      db?.close();
    } catch {
      /* already failing */
    }
    throw ledgerError(`cannot open ${file}`, e);
  }
}

function sqliteLedger(
  db: Database.Database,
  lockDb: Database.Database,
  busyTimeoutMs: number,
  opts: SqliteLedgerOptions,
): Ledger {
  const mutex = new KeyedMutex();
  /** Lock rows this handle holds (key → row), removed on close so no other process waits on them. */
  const heldRows = new Map<string, HeldRow>();
  const walSync = new WalSync(`${db.name}-wal`);
  const driver: SqliteDriver = new SqliteDriver(
    db,
    busyTimeoutMs,
    walSync,
    (seq, entry) => books.committed(seq, entry),
    () => books.reset(),
  );
  // The head record is a page of a local file: reading it first skips the entries read when nothing is new.
  const books = usageBooksOver(driver, { headFirst: true });
  const locks = sqliteKeyLocks(lockDb, {
    pollMs: opts.lockPollMs ?? 20,
    leaseMs: opts.lockLeaseMs ?? 30_000,
    busyTimeoutMs,
    me: selfIdentity(),
  });

  return sqlLedger(driver, books, {
    store: 'sqlite',

    /**
     * The lock row is read inside the append's write transaction: a takeover by another process is itself a
     * write, so it either committed before (and this sees another owner and writes nothing) or waits until this
     * commits (and the new holder's usage read sees this entry).
     */
    async appendFenced(input, alsoHeld = []) {
      validateEntryInput(input);
      const fences = [input.key, ...alsoHeld].map((name) => {
        const held = heldRows.get(name);
        if (!held)
          throw new SignerError('internal', `a fenced append for key ${input.key} without holding lock ${name}`);
        return { name, ownerId: held.ownerId };
      });
      return await driver.write('cannot append an audit entry', function* () {
        for (const { name, ownerId } of fences) {
          const row = yield* get(LOCK_OWNER, [name]);
          if (row?.owner_id !== ownerId)
            throw new SignerError(
              'ledger',
              `SQLite ledger: the lock on ${name === input.key ? `key ${name}` : name} was lost (its lease ran out and another process took it over); nothing was written or sent, retry`,
            );
        }
        return yield* appendIn(SQL, 'SQLite', input);
      });
    },

    /**
     * The gate in one BEGIN IMMEDIATE transaction. Holding the file's write lock keeps every other writer, in this
     * process or another, out from the reads to the commit, so no lock row is taken. It leaves the gate to the lock
     * (null) when the key's lock is held here or has a row in key_locks (whoever's, even a dead holder's: the lock
     * path takes that over), or when the head has moved past what this handle's usage books hold.
     */
    async reserveAtOnce<R>(request: ReserveRequest, decide: (view: ReserveView) => ReserveDecision<R>) {
      const { key, now } = request;
      const decided = await driver.write(
        'cannot append an audit entry',
        function* (): Work<{ result: R } | null> {
          if (mutex.isHeld(key) || (yield* get(LOCK_OWNER, [key]))) return null;
          const head = yield* headIn(SQL.readHead, 'SQLite');
          const book = books.currentAt(key, head.seq, now);
          if (!book) return null;
          const halt = yield* get(SQL.getHalt, [key]);
          const { intent, result } = decide({
            usage: book.usage(now),
            signatureInFlight: request.signature !== null && book.inFlight(request.signature),
            halt: halt ? rowToHalt(halt) : null,
          });
          if (intent) {
            validateEntryInput(intent);
            yield* appendIn(SQL, 'SQLite', intent);
          }
          return { result };
        },
        { syncIfAppended: true },
      );
      return decided === null ? null : decided.result;
    },

    async lockKey(key, signal) {
      const releaseLocal = await mutex.acquire(key, signal);
      let held: HeldRow;
      try {
        driver.checkOpen();
        held = await locks.acquire(key, signal);
        heldRows.set(key, held);
      } catch (e) {
        releaseLocal();
        throw lockError(`cannot take the lock on key ${key}`, e);
      }
      let released = false;
      return {
        release: async () => {
          if (released) return;
          released = true;
          held.stopRenewing();
          heldRows.delete(key);
          try {
            if (!driver.closed) await locks.release(key, held.ownerId);
          } catch (e) {
            // The row stays behind with our pid; it is taken over once this process exits. Still free local waiters.
            throw lockError(`cannot release the lock on key ${key}`, e);
          } finally {
            releaseLocal();
          }
        },
      };
    },

    async keyLocks() {
      driver.checkOpen();
      return locks.list().catch((e: unknown) => Promise.reject(lockError('cannot read the key locks', e)));
    },

    async clearKeyLock(key, clearOpts) {
      driver.checkOpen();
      return locks
        .clear(key, clearOpts.force)
        .catch((e: unknown) => Promise.reject(lockError(`cannot clear the lock on key ${key}`, e)));
    },

    close() {
      if (driver.closed) return Promise.resolve();
      driver.commitQueued();
      driver.closed = true;
      try {
        for (const [key, held] of heldRows) {
          held.stopRenewing();
          try {
            locks.releaseNow(key, held.ownerId);
          } catch {
            // The file is busy: the row stays until this process is gone or its lease runs out, then it is stale.
          }
        }
        heldRows.clear();
        lockDb.close();
        db.close();
        return walSync.close().catch((e: unknown) => Promise.reject(ledgerError('cannot close', e)));
      } catch (e) {
        return Promise.reject(ledgerError('cannot close', e));
      }
    },
  });
}

/** Applies pending migrations in one IMMEDIATE transaction, so two processes opening a new file at once are safe. */
function migrate(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
  db.transaction(() => {
    const row = db.prepare<[], { version: number }>('SELECT version FROM schema_version').get();
    const current = row?.version ?? 0;
    const known = SQLITE_MIGRATIONS.length;
    if (current > known) throw schemaTooNew('SQLite', current, known);
    for (const m of SQLITE_MIGRATIONS.slice(current)) {
      if (typeof m === 'string') db.exec(m);
      else stepSync(m(), (s) => execPrepared(db.prepare<[Record<string, unknown>], Row>(s.sql), s));
    }
    if (row === undefined) db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(known);
    else if (current !== known) db.prepare('UPDATE schema_version SET version = ?').run(known);
  }).immediate();
}
