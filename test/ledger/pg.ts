/** Fresh PostgreSQL databases for the ledger tests, on the machine's server (127.0.0.1:5432, user postgres). */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { keyLockId } from '../../src/ledger/postgres';

export const PG_HOST = '127.0.0.1';
export const PG_PORT = 5432;
const ADMIN_URL = `postgres://postgres@${PG_HOST}:${PG_PORT}/test`;

export const dbUrl = (name: string, port = PG_PORT) => `postgres://postgres@${PG_HOST}:${port}/${name}`;

/** Runs fn with a short-lived admin connection to the `test` database. */
export async function admin<T>(fn: (c: Client) => Promise<T>, url = ADMIN_URL): Promise<T> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export async function createDatabase(): Promise<string> {
  const name = `ledger_t_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  return name;
}

/** Drops a test database, retrying while a client that is still reconnecting to it gets in the way. */
export async function dropDatabase(name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
      return;
    } catch (e) {
      if (attempt >= 10) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * Waits until no server backend of process `pid` remains in database `db`. A killed client's last COMMIT may
 * still be running on the server after the client is gone; this waits for it to settle.
 */
export async function waitForBackendsGone(db: string, pid: number): Promise<void> {
  for (;;) {
    const res = await admin((c) =>
      c.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE $2', [
        db,
        `%/${pid}`,
      ]),
    );
    if ((res.rows[0] as { n: number }).n === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The backend pids holding the advisory lock of `key` in database `db` (bigint form: classid/objid halves). */
export async function lockHolders(db: string, key: string): Promise<number[]> {
  const id = BigInt.asUintN(64, BigInt(keyLockId(key)));
  const res = await admin((c) =>
    c.query(
      `SELECT l.pid FROM pg_locks l JOIN pg_database d ON d.oid = l.database
        WHERE l.locktype = 'advisory' AND l.granted AND d.datname = $1 AND l.classid = $2 AND l.objid = $3 AND l.objsubid = 1`,
      [db, Number(id >> 32n), Number(id & 0xffffffffn)],
    ),
  );
  return res.rows.map((r: { pid: number }) => r.pid);
}

/** Ends the server backends holding `key`'s advisory lock (as a dropped connection or a DBA would). */
export async function terminateLockHolders(db: string, key: string): Promise<number> {
  const pids = await lockHolders(db, key);
  for (const pid of pids) await admin((c) => c.query('SELECT pg_terminate_backend($1)', [pid]));
  return pids.length;
}
