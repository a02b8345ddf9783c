/**
 * The SQLite store's per-key lock across processes: a row in `key_locks` naming its holder (host, pid, process
 * start time, a random owner id) with a lease. The holder renews the lease while it holds the lock; a waiter
 * polls and takes the row over when the holder is gone: a dead process on this host (liveness.ts), or, on any
 * host, a lease that ran out (a holder on another host sharing the file cannot be checked any other way).
 * Taking over a live but stalled holder is safe for the cap: its intent append is fenced on the lock row
 * (the SQLite store's appendFenced), so it sends nothing it had not recorded before the takeover.
 *
 * Lock rows go through their own connection with synchronous=OFF: a lock needs exclusion, not durability (after
 * a crash its holder is dead and the row is taken over anyway), so taking and releasing a lock costs no fsync.
 */
import type Database from 'better-sqlite3';
import { SignerError, errorMessage } from '../util/errors';
import { newOwnerId } from './ids';
import { holderAlive, type ProcessIdentity } from './liveness';
import { cancelledError, sleep } from './mutex';
import { sqliteDialect } from './sql/dialect';
import { retryWhileBusy } from './sqlite-busy';
import type { ClearLockResult, KeyLockInfo } from './types';

export interface SqliteLockOptions {
  pollMs: number;
  leaseMs: number;
  busyTimeoutMs: number;
  me: ProcessIdentity;
}

interface LockRow {
  key: string;
  owner_id: string;
  host: string;
  pid: number;
  start: string | null;
  acquired_at: number;
  lease_until_ms: number | null;
}

const COLUMNS = 'key, owner_id, host, pid, start, acquired_at, lease_until_ms';

/** Stale: the holder is a dead process on this host, or its lease (when it has one) ran out. */
export function lockIsStale(row: Pick<LockRow, 'host' | 'pid' | 'start' | 'lease_until_ms'>, nowMs: number): boolean {
  if (row.lease_until_ms !== null && row.lease_until_ms < nowMs) return true;
  return !holderAlive({ host: row.host, pid: row.pid, start: row.start });
}

export interface HeldRow {
  ownerId: string;
  /** Stops renewing the lease (on release or close). */
  stopRenewing(): void;
}

export function sqliteKeyLocks(db: Database.Database, opts: SqliteLockOptions) {
  const bind = sqliteDialect.bind;
  const get = db.prepare<[Record<string, unknown>], LockRow>(`SELECT ${COLUMNS} FROM key_locks WHERE key = $1`);
  const all = db.prepare<[], LockRow>(`SELECT ${COLUMNS} FROM key_locks ORDER BY key`);
  const put = db.prepare<[Record<string, unknown>]>(
    `INSERT INTO key_locks (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (key) DO UPDATE SET owner_id = excluded.owner_id, host = excluded.host, pid = excluded.pid,
       start = excluded.start, acquired_at = excluded.acquired_at, lease_until_ms = excluded.lease_until_ms`,
  );
  const putIfFree = db.prepare<[Record<string, unknown>]>(
    `INSERT INTO key_locks (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (key) DO NOTHING`,
  );
  const renew = db.prepare<[Record<string, unknown>]>(
    'UPDATE key_locks SET lease_until_ms = $1 WHERE key = $2 AND owner_id = $3',
  );
  const remove = db.prepare<[Record<string, unknown>]>('DELETE FROM key_locks WHERE key = $1 AND owner_id = $2');
  const withBusy = <T>(what: string, fn: () => T) => retryWhileBusy(fn, opts.busyTimeoutMs, () => what);

  const rowOf = (key: string, ownerId: string, now: number) => {
    const { host, pid, start } = opts.me;
    return bind([key, ownerId, host, pid, start, Math.floor(now / 1000), now + opts.leaseMs]);
  };

  const take = db.transaction((key: string, ownerId: string): boolean => {
    const row = get.get(bind([key]));
    const now = Date.now();
    if (row && !lockIsStale(row, now)) return false;
    put.run(rowOf(key, ownerId, now));
    return true;
  });

  function startRenewing(key: string, ownerId: string): () => void {
    let busy = false;
    const timer = setInterval(
      () => {
        if (busy) return;
        busy = true;
        withBusy(`cannot renew the lock on key ${key}`, () =>
          renew.run(bind([Date.now() + opts.leaseMs, key, ownerId])),
        )
          .then((r) => {
            // Taken over (our lease ran out while we were stalled): stop; the fenced append refuses from now on.
            if (r.changes === 0) clearInterval(timer);
          })
          .catch(() => undefined) // the next tick tries again; the fence still guards the intent
          .finally(() => (busy = false));
      },
      Math.max(1, Math.floor(opts.leaseMs / 3)),
    );
    timer.unref();
    return () => clearInterval(timer);
  }

  return {
    /** Polls until the lock row is ours, then renews its lease until stopRenewing. */
    async acquire(key: string, signal?: AbortSignal): Promise<HeldRow> {
      const ownerId = newOwnerId();
      if (signal?.aborted) throw cancelledError(key);
      // A free lock has no row: one statement takes it. Only the first attempt tries this; waiters poll with reads.
      const free = await withBusy(`cannot take the lock on key ${key}`, () =>
        putIfFree.run(rowOf(key, ownerId, Date.now())),
      );
      if (free.changes === 1) return { ownerId, stopRenewing: startRenewing(key, ownerId) };
      for (;;) {
        if (signal?.aborted) throw cancelledError(key);
        // A cheap read first, so waiters do not queue for the write lock while the holder is alive.
        const row = await withBusy('cannot read the key lock', () => get.get(bind([key])));
        if (!row || lockIsStale(row, Date.now())) {
          if (await withBusy(`cannot take the lock on key ${key}`, () => take.immediate(key, ownerId)))
            return { ownerId, stopRenewing: startRenewing(key, ownerId) };
        }
        await sleep(opts.pollMs, signal, () => cancelledError(key));
      }
    },

    async release(key: string, ownerId: string): Promise<void> {
      await withBusy(`cannot release the lock on key ${key}`, () => remove.run(bind([key, ownerId])));
    },

    /** Synchronous release for close(): one short statement, no waiting beyond the busy slice. */
    releaseNow(key: string, ownerId: string): void {
      remove.run(bind([key, ownerId]));
    },

    async list(): Promise<KeyLockInfo[]> {
      const rows = await withBusy('cannot read the key locks', () => all.all());
      const now = Date.now();
      return rows.map((r) => ({
        key: r.key,
        holder: `${r.host}/${r.pid}`,
        acquired_at_ms: r.acquired_at * 1000,
        lease_until_ms: r.lease_until_ms,
        state: lockIsStale(r, now) ? 'stale' : 'held',
      }));
    },

    async clear(key: string, force: boolean): Promise<ClearLockResult> {
      const row = await withBusy('cannot read the key lock', () => get.get(bind([key])));
      if (!row) return 'not held';
      if (!force && !lockIsStale(row, Date.now())) return 'live';
      await withBusy(`cannot clear the lock on key ${key}`, () => remove.run(bind([key, row.owner_id])));
      return 'cleared';
    },
  };
}

export type SqliteKeyLocks = ReturnType<typeof sqliteKeyLocks>;

export function lockError(what: string, e: unknown): SignerError {
  if (e instanceof SignerError) return e;
  return new SignerError('ledger', `SQLite ledger: ${what}: ${errorMessage(e)}`, { cause: e });
}
