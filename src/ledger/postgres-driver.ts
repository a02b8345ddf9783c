/**
 * The PostgreSQL driver: runs the shared work (sql/driver.ts) on a pool, each statement a round trip and a
 * transaction on one checked-out connection, and applies the migrations.
 */
import { hostname } from 'node:os';
import { Client, Pool, type ClientConfig, type PoolClient, type PoolConfig } from 'pg';
import { SignerError } from '../util/errors';
import { asError, isConnectionLoss, ledgerError, type Connection } from './postgres-errors';
import { advisoryLockId, postgresDialect } from './sql/dialect';
import { stepAsync, type Result, type SqlDriver, type Statement, type Work } from './sql/driver';
import { POSTGRES_MIGRATIONS, schemaTooNew } from './sql/migrations';
import type { Row } from './sql/rows';

export interface PostgresLedgerOptions {
  /** Connections for reads and appends. */
  poolSize: number;
  /** Connections that can hold key locks at once (one per key being signed in this process). Default 32. */
  lockConnections?: number;
  /** Give up opening a connection after this long (database down or unreachable). Default 3000. */
  connectTimeoutMs?: number;
  /** Give up waiting for a free pooled connection after this long (a burst beyond the pool). Default 15000. */
  queueTimeoutMs?: number;
  /** Server-side and client-side bound on one statement (a key-lock wait is renewed after it). Default 15000. */
  statementTimeoutMs?: number;
}

const MIGRATION_LOCK = advisoryLockId('migrations');

/** Runs one statement of shared work on a client. */
export async function execOn(c: PoolClient | Pool, s: Statement): Promise<Result> {
  const res = await c.query<Row>(s.sql, postgresDialect.bind(s.values));
  return { rows: res.rows, changes: res.rowCount ?? 0 };
}

/** Runs work on a pool: each statement a round trip, a transaction on one checked-out connection. */
export class PostgresDriver implements SqlDriver {
  readonly dialect = postgresDialect;
  closed = false;
  readonly pool: Pool;
  readonly lockPool: Pool;

  constructor(url: string, opts: PostgresLedgerOptions) {
    const statementTimeout = opts.statementTimeoutMs ?? 15_000;
    // pg-pool uses one setting for two waits: a free connection in a busy pool, and opening a new one. A burst
    // of signs must queue for a busy pool, while a database that is down must fail fast, so the pool gets the
    // queue bound and each new connection its own, shorter, connect bound.
    const base: PoolConfig = {
      connectionString: url,
      connectionTimeoutMillis: opts.queueTimeoutMs ?? 15_000,
      Client: clientWithConnectTimeout(opts.connectTimeoutMs ?? 3_000),
      statement_timeout: statementTimeout,
      query_timeout: statementTimeout + 5_000,
      keepAlive: true,
      // Tells replicas apart in pg_stat_activity (and their locks in pg_locks).
      application_name: `sa-forge-signer@${hostname()}/${process.pid}`.slice(0, 63),
    };
    this.pool = new Pool({ ...base, max: Math.max(1, opts.poolSize), idleTimeoutMillis: 30_000 });
    this.lockPool = new Pool({ ...base, max: Math.max(1, opts.lockConnections ?? 32), idleTimeoutMillis: 30_000 });
    // An idle connection that the server drops emits 'error' on the pool; the pool discards it and reconnects
    // on demand. Without a listener Node would treat it as an uncaught exception.
    this.pool.on('error', () => undefined);
    this.lockPool.on('error', () => undefined);
  }

  checkOpen(): void {
    if (this.closed) throw new SignerError('ledger', 'PostgreSQL ledger: the ledger is closed');
  }

  /**
   * Each statement on a pooled connection. A read is retried once on a fresh connection when the first one turns
   * out to be dead (the database restarted while it sat idle in the pool).
   */
  async read<T>(what: string, work: () => Work<T>): Promise<T> {
    this.checkOpen();
    try {
      return await stepAsync(work(), (s) => execOn(this.pool, s).catch((e: unknown) => this.retryRead(e, s)));
    } catch (e) {
      throw ledgerError(what, e);
    }
  }

  private retryRead(e: unknown, s: Statement): Promise<Result> {
    if (!isConnectionLoss(e)) throw e;
    return execOn(this.pool, s);
  }

  /** Each statement committed on its own; a write is never retried blindly. */
  async autocommit<T>(what: string, work: () => Work<T>): Promise<T> {
    this.checkOpen();
    try {
      return await stepAsync(work(), (s) => execOn(this.pool, s));
    } catch (e) {
      throw ledgerError(what, e);
    }
  }

  /**
   * A checked-out connection with an error listener for as long as we hold it: a connection that dies while
   * checked out emits 'error', and without a listener Node would crash the process. The statement in flight
   * fails on its own, so the listener only has to exist.
   */
  async connect(pool: Pool): Promise<Connection> {
    const client = await pool.connect();
    const onError = () => undefined;
    client.on('error', onError);
    return {
      client,
      done: (err?: Error) => {
        client.removeListener('error', onError);
        client.release(err);
      },
    };
  }

  /**
   * A transaction on one pooled connection; a failed connection is discarded, not reused. If BEGIN itself fails
   * (a connection that died idle in the pool), nothing was done, so it retries once on a fresh one.
   */
  async write<T>(what: string, work: () => Work<T>): Promise<T> {
    this.checkOpen();
    for (let attempt = 0; ; attempt++) {
      let conn: Connection;
      try {
        conn = await this.connect(this.pool);
      } catch (e) {
        throw ledgerError(what, e);
      }
      const { client, done } = conn;
      try {
        await client.query('BEGIN');
      } catch (e) {
        done(e as Error);
        if (attempt === 0 && isConnectionLoss(e)) continue;
        throw ledgerError(what, e);
      }
      let broken: Error | undefined;
      try {
        const out = await stepAsync(work(), (s) => execOn(client, s));
        await client.query('COMMIT');
        return out;
      } catch (e) {
        // If ROLLBACK fails the connection is unusable: release it with the error so the pool destroys it.
        await client.query('ROLLBACK').catch((re: unknown) => {
          broken = asError(re);
        });
        throw ledgerError(what, e);
      } finally {
        done(broken);
      }
    }
  }

  /** A read-only REPEATABLE READ transaction: every statement sees one snapshot. */
  async snapshot<T>(what: string, work: () => Work<T>): Promise<T> {
    this.checkOpen();
    let conn: Connection;
    try {
      conn = await this.connect(this.pool);
    } catch (e) {
      throw ledgerError(what, e);
    }
    let broken: Error | undefined;
    try {
      await conn.client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const out = await stepAsync(work(), (s) => execOn(conn.client, s));
      await conn.client.query('COMMIT');
      return out;
    } catch (e) {
      broken = asError(e);
      throw ledgerError(what, e);
    } finally {
      conn.done(broken);
    }
  }

  /** Applies pending migrations, each in its own transaction, under a session advisory lock. */
  async migrate(): Promise<void> {
    const { client, done } = await this.connect(this.pool);
    let broken: Error | undefined;
    try {
      await client.query('SELECT pg_advisory_lock($1::bigint)', [MIGRATION_LOCK]);
      try {
        await client.query('CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)');
        const res = await client.query<{ version: number }>('SELECT version FROM schema_version');
        const current = res.rows[0]?.version ?? 0;
        if (current > POSTGRES_MIGRATIONS.length) throw schemaTooNew('PostgreSQL', current, POSTGRES_MIGRATIONS.length);
        for (const [v, migration] of POSTGRES_MIGRATIONS.entries()) {
          if (v < current) continue;
          await client.query('BEGIN');
          try {
            if (typeof migration === 'string') await client.query(migration);
            else await stepAsync(migration(), (s) => execOn(client, s));
            if (v === 0 && res.rows.length === 0) await client.query('INSERT INTO schema_version VALUES ($1)', [v + 1]);
            else await client.query('UPDATE schema_version SET version = $1', [v + 1]);
            await client.query('COMMIT');
          } catch (e) {
            await client.query('ROLLBACK').catch(() => undefined);
            throw e;
          }
        }
      } finally {
        await client.query('SELECT pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK]).catch((e: unknown) => {
          broken = asError(e);
        });
      }
    } catch (e) {
      broken = asError(e);
      throw e;
    } finally {
      done(broken);
    }
  }
}

/** A pg Client class whose connection attempts give up after `ms`, whatever the pool's own timeout. */
function clientWithConnectTimeout(ms: number): typeof Client {
  return class ConnectBoundedClient extends Client {
    constructor(config?: string | ClientConfig) {
      super(
        typeof config === 'string'
          ? { connectionString: config, connectionTimeoutMillis: ms }
          : { ...config, connectionTimeoutMillis: ms },
      );
    }
  };
}
