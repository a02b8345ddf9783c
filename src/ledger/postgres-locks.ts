/**
 * PostgreSQL's per-key lock: `pg_advisory_lock(hash of key)` on a dedicated connection, held while a sign passes its
 * cap gate (usage read to durable intent, signer/flow/gate.ts); waiters queue in the server, first come first served
 * across replicas. Session advisory locks die with their connection, so the server frees the lock when a replica
 * dies or its connection is cut; the sign's intent is appended on that same connection (appendFenced), so a lock
 * lost that way is noticed before anything is sent. A local FIFO mutex in front keeps one connection per key per
 * process.
 */
import { SignerError, errorMessage } from '../util/errors';
import { appendIn } from './audit-log';
import { validateEntryInput } from './hash-chain';
import { KeyedMutex, cancelledError } from './mutex';
import { asError, isConnectionLoss, isStatementTimeout, ledgerError, type Connection } from './postgres-errors';
import { execOn, type PostgresDriver } from './postgres-driver';
import { advisoryLockId, postgresDialect } from './sql/dialect';
import { all, stepAsync } from './sql/driver';
import { statements } from './sql/statements';
import type { KeyLock, KeyLockInfo, KeyLocks } from './types';

const SQL = statements(postgresDialect);

export const keyLockId = (key: string): string => advisoryLockId(`key:${key}`);

interface HeldLock {
  conn: Connection;
  lockId: string;
  /** Set when a fenced append failed on the lock's connection: it is discarded on release, not pooled. */
  broken: Error | undefined;
  /** The backend holding it (pg_backend_pid on its connection), for an append on another lock's connection to check. */
  pid: number;
}

/** pg_locks shows a bigint advisory lock as two unsigned 32-bit halves: classid (high) and objid (low). */
function advisoryLockParts(lockId: string): [string, string] {
  const id = BigInt.asUintN(64, BigInt(lockId));
  return [(id >> 32n).toString(), (id & 0xffffffffn).toString()];
}

function lockLost(key: string, cause: unknown): SignerError {
  const why = cause === null ? '' : `: ${errorMessage(cause)}`;
  return new SignerError(
    'ledger',
    `PostgreSQL ledger: the lock on key ${key} was lost (its database connection closed)${why}; nothing was written or sent, retry`,
    { cause },
  );
}

/** The granted advisory lock `l` ($1 classid, $2 objid) in this database. */
const HELD_LOCK = `l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND l.classid::bigint = $1 AND l.objid::bigint = $2 AND l.objsubid = 1`;

export function postgresKeyLocks(driver: PostgresDriver): { parts: KeyLocks; releaseAll(): Promise<void> } {
  const mutex = new KeyedMutex();
  const heldLocks = new Set<KeyLock>();
  /** The lock this handle holds per key (the local mutex allows one), for fenced appends. */
  const heldByKey = new Map<string, HeldLock>();

  /**
   * Waits for the advisory lock on a dedicated connection with the blocking pg_advisory_lock, so waiters queue in
   * the server in the order they asked and the lock passes to the next one the moment it is freed. (Polling
   * pg_try_advisory_lock let the replica that had just released take the lock again before the other's next poll:
   * under load a replica starved, and every poll was a round trip.) A wait that reaches the statement timeout is
   * queued again on a fresh connection. A connection that turns out dead before the lock is taken is replaced once
   * (the server freed whatever it held). On failure or abort the connection is destroyed rather than pooled, so a
   * lock it might hold, or a wait it left queued, is dropped by the server.
   */
  async function takeAdvisoryLock(
    key: string,
    lockId: string,
    signal?: AbortSignal,
  ): Promise<{ conn: Connection; pid: number }> {
    for (let attempt = 0; ; attempt++) {
      let conn: Connection | undefined;
      try {
        conn = await abortable(driver.connect(driver.lockPool), signal, key, (c) => c.done());
        const res = await abortable(
          conn.client.query<{ pid: number }>('SELECT pg_advisory_lock($1::bigint), pg_backend_pid() AS pid', [lockId]),
          signal,
          key,
          () => undefined,
        );
        return { conn, pid: res.rows[0]?.pid ?? -1 };
      } catch (e) {
        conn?.done(asError(e));
        if (e instanceof SignerError) throw e;
        if (conn && isStatementTimeout(e)) {
          attempt = -1; // still waiting behind a long sign, not a failure
          continue;
        }
        if (attempt === 0 && conn && isConnectionLoss(e)) continue;
        throw ledgerError(`cannot take the lock on key ${key}`, e);
      }
    }
  }

  const parts: KeyLocks = {
    async lockKey(key, signal) {
      driver.checkOpen();
      const releaseLocal = await mutex.acquire(key, signal);
      const lockId = keyLockId(key);
      let conn: Connection;
      let pid: number;
      try {
        ({ conn, pid } = await takeAdvisoryLock(key, lockId, signal));
      } catch (e) {
        releaseLocal();
        throw e;
      }
      const held: HeldLock = { conn, lockId, broken: undefined, pid };
      heldByKey.set(key, held);
      let released = false;
      const lock: KeyLock = {
        release: async () => {
          if (released) return;
          released = true;
          heldLocks.delete(lock);
          heldByKey.delete(key);
          let broken = held.broken;
          try {
            if (!broken) {
              const res = await conn.client.query<{ ok: boolean }>('SELECT pg_advisory_unlock($1::bigint) AS ok', [
                lockId,
              ]);
              if (res.rows[0]?.ok !== true) broken = new Error('the advisory lock was not held');
            }
          } catch (e) {
            broken = asError(e); // the connection is gone, and with it the lock: nothing left to free
          } finally {
            conn.done(broken);
            releaseLocal();
          }
        },
      };
      heldLocks.add(lock);
      return lock;
    },

    /**
     * The append runs on the lock's own connection, so it can only commit on the backend that holds the session
     * advisory lock: once that backend is gone (terminated, or its connection cut) the lock is free for another
     * replica and this insert fails with it. The transaction also checks pg_locks for the lock on its own
     * backend, which catches a connection that no longer maps to the locking backend (a transaction-mode pooler).
     */
    async appendFenced(input, alsoHeld = []) {
      validateEntryInput(input);
      driver.checkOpen();
      const held = heldByKey.get(input.key);
      if (!held) throw new SignerError('internal', `a fenced append for key ${input.key} without holding its lock`);
      const others = alsoHeld.map((name) => {
        const other = heldByKey.get(name);
        if (!other)
          throw new SignerError('internal', `a fenced append for key ${input.key} without holding lock ${name}`);
        return { name, other };
      });
      const { client } = held.conn;
      try {
        await client.query('BEGIN');
        const owned = await client.query<{ held: boolean }>(
          `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = pg_backend_pid()
              AND classid::bigint = $1 AND objid::bigint = $2 AND objsubid = 1) AS held`,
          advisoryLockParts(held.lockId),
        );
        if (owned.rows[0]?.held !== true) throw lockLost(input.key, null);
        // A further lock (a credential block's budget) is held on a connection of its own: still granted to that
        // connection's backend, checked in this transaction, or this append could count on a decision another
        // replica, which took the lock over, also made.
        for (const { name, other } of others) {
          const still = await client.query<{ held: boolean }>(
            `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = $3
                AND classid::bigint = $1 AND objid::bigint = $2 AND objsubid = 1) AS held`,
            [...advisoryLockParts(other.lockId), other.pid],
          );
          if (still.rows[0]?.held !== true || other.broken) throw lockLost(name, null);
        }
        const entry = await stepAsync(appendIn(SQL, 'PostgreSQL', input), (s) => execOn(client, s));
        await client.query('COMMIT');
        return entry;
      } catch (e) {
        held.broken = asError(e);
        driver.connectionLost(held.conn.server, e);
        await client.query('ROLLBACK').catch(() => undefined);
        throw e instanceof SignerError ? e : lockLost(input.key, e);
      }
    },

    /**
     * The advisory locks held now on the configured keys, with the replica holding each (its application name
     * says host and pid). A dead replica's lock is freed by the server, so every one listed has a live connection.
     */
    async keyLocks(keys) {
      const out: KeyLockInfo[] = [];
      for (const key of keys) {
        const rows = await driver.read('cannot read the key locks', () =>
          all(
            `SELECT a.application_name, a.pid, (extract(epoch FROM a.backend_start) * 1000)::bigint AS since
               FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE ${HELD_LOCK}`,
            advisoryLockParts(keyLockId(key)),
          ),
        );
        for (const r of rows)
          out.push({
            key,
            holder: `${String(r.application_name)} (backend ${String(r.pid)})`,
            acquired_at_ms: null,
            lease_until_ms: null,
            state: 'held',
          });
      }
      return out;
    },

    /** Terminates the connection holding the key's lock; PostgreSQL has no stale locks, so only with force. */
    async clearKeyLock(key, opts) {
      const held = await parts.keyLocks([key]);
      if (held.length === 0) return 'not held';
      if (!opts.force) return 'live';
      await driver.autocommit(`cannot clear the lock on key ${key}`, () =>
        all(`SELECT pg_terminate_backend(l.pid) FROM pg_locks l WHERE ${HELD_LOCK}`, advisoryLockParts(keyLockId(key))),
      );
      return 'cleared';
    },
  };

  return {
    parts,
    releaseAll: async () => {
      await Promise.allSettled([...heldLocks].map((l) => l.release()));
    },
  };
}

/** Awaits p unless signal aborts first; a value that arrives after the abort is handed to `discard`. */
function abortable<T>(
  p: Promise<T>,
  signal: AbortSignal | undefined,
  key: string,
  discard: (v: T) => void,
): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) {
    p.then(discard, () => undefined);
    return Promise.reject(cancelledError(key));
  }
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const onAbort = () => {
      if (settled) return;
      settled = true;
      reject(cancelledError(key));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        if (settled) discard(v);
        else {
          settled = true;
          resolve(v);
        }
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        if (!settled) {
          settled = true;
          reject(asError(e));
        }
      },
    );
  });
}
