/**
 * The PostgreSQL driver: runs the shared work (sql/driver.ts) on a pool, each read on one checked-out connection
 * and each write a transaction on one, and applies the migrations. Every connection goes to the primary the
 * tracker (postgres-primary.ts) found, and is checked to be on it before its first use; a connection lost, or a
 * write refused because the server turned read-only, sends the tracker looking for the primary again.
 */
import { hostname } from 'node:os';
import { Client, Pool, type ClientConfig, type PoolClient, type PoolConfig } from 'pg';
import { SignerError } from '../util/errors';
import { asError, isConnectionLoss, isReadOnly, ledgerError, type Connection } from './postgres-errors';
import { PrimaryTracker, ledgerUnavailable, serverState } from './postgres-primary';
import type { PostgresServer } from './postgres-servers';
import { advisoryLockId, postgresDialect } from './sql/dialect';
import { get, stepAsync, type Result, type SqlDriver, type Statement, type Work } from './sql/driver';
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
  /** Give up looking for a writable server after this long (`timings.ledger_failover_ms`). Default 15000. */
  failoverMs?: number;
  /** The primary changed, or its replication warning did (for the log). */
  onPrimary?: (primary: PostgresServer, timeline: number, replicationWarning: string | null) => void;
}

const MIGRATION_LOCK = advisoryLockId('migrations');
/** How long a readiness ping waits for a primary being looked for. */
const PING_SEARCH_MS = 1_000;

/** Runs one statement of shared work on a client. */
export async function execOn(c: PoolClient | Pool, s: Statement): Promise<Result> {
  const res = await c.query<Row>(s.sql, postgresDialect.bind(s.values));
  return { rows: res.rows, changes: res.rowCount ?? 0 };
}

/** The server each pooled connection was opened to, and whether it was checked to be the primary. */
interface Bound {
  server: PostgresServer;
  checked: boolean;
}
const bound = new WeakMap<object, Bound>();

/** Runs work on a pool: a read or a transaction on one checked-out connection to the primary. */
export class PostgresDriver implements SqlDriver {
  readonly dialect = postgresDialect;
  closed = false;
  readonly pool: Pool;
  readonly lockPool: Pool;
  readonly primary: PrimaryTracker;
  readonly failoverMs: number;

  constructor(servers: readonly PostgresServer[], opts: PostgresLedgerOptions) {
    const statementTimeout = opts.statementTimeoutMs ?? 15_000;
    const connectTimeout = opts.connectTimeoutMs ?? 3_000;
    // Tells replicas apart in pg_stat_activity (and their locks in pg_locks).
    const applicationName = `sa-forge-signer@${hostname()}/${process.pid}`.slice(0, 63);
    this.failoverMs = opts.failoverMs ?? 15_000;
    this.primary = new PrimaryTracker(servers, {
      failoverMs: this.failoverMs,
      connectTimeoutMs: connectTimeout,
      applicationName,
      onChange: opts.onPrimary,
    });
    // pg-pool uses one setting for two waits: a free connection in a busy pool, and opening a new one. A burst
    // of signs must queue for a busy pool, while a database that is down must fail fast, so the pool gets the
    // queue bound and each new connection its own, shorter, connect bound.
    const base: PoolConfig = {
      connectionTimeoutMillis: opts.queueTimeoutMs ?? 15_000,
      Client: clientToPrimary(this.primary, connectTimeout),
      statement_timeout: statementTimeout,
      query_timeout: statementTimeout + 5_000,
      keepAlive: true,
      application_name: applicationName,
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
   * The primary answers. For /ready, which must answer quickly: while the primary is being looked for this waits
   * at most PING_SEARCH_MS for the search (which keeps running) and then rejects with ledger_unavailable.
   */
  async ping(): Promise<void> {
    this.checkOpen();
    if (this.primary.current() === null) {
      const search = this.primary.find();
      search.catch(() => undefined);
      let timer: NodeJS.Timeout | undefined;
      const found = await Promise.race([
        search.then(() => true),
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), PING_SEARCH_MS))),
      ]).finally(() => clearTimeout(timer));
      if (!found)
        throw new SignerError(
          'ledger_unavailable',
          'PostgreSQL ledger: no writable database server yet (a failover or restart is in progress); signs are refused until one answers',
        );
    }
    await this.read('not reachable', () => get('SELECT 1'), { wait: false });
  }

  /** A connection to `server` was lost, or the server refused a write: look for the primary again. */
  connectionLost(server: PostgresServer, e: unknown): void {
    if (isConnectionLoss(e) || isReadOnly(e)) this.primary.lost(server);
  }

  /**
   * Reads on one pooled connection. A read that loses its connection, or finds the server read-only, is run
   * again on the primary found next (reads change nothing), for as long as the failover window allows.
   */
  async read<T>(what: string, work: () => Work<T>, opts: { wait?: boolean } = {}): Promise<T> {
    this.checkOpen();
    const until = Date.now() + this.failoverMs;
    for (;;) {
      const conn = await this.connectOr(what, this.pool, opts.wait ?? true);
      let broken: Error | undefined;
      try {
        return await stepAsync(work(), (s) => execOn(conn.client, s));
      } catch (e) {
        broken = asError(e);
        this.connectionLost(conn.server, e);
        if ((opts.wait ?? true) && (isConnectionLoss(e) || isReadOnly(e)) && Date.now() < until) continue;
        throw ledgerError(what, e);
      } finally {
        conn.done(broken);
      }
    }
  }

  /** Each statement committed on its own; a write is never retried blindly. */
  async autocommit<T>(what: string, work: () => Work<T>): Promise<T> {
    this.checkOpen();
    const conn = await this.connectOr(what, this.pool);
    let broken: Error | undefined;
    try {
      return await stepAsync(work(), (s) => execOn(conn.client, s));
    } catch (e) {
      broken = asError(e);
      this.connectionLost(conn.server, e);
      throw ledgerError(what, e);
    } finally {
      conn.done(broken);
    }
  }

  /**
   * A connection from `pool` to the primary, looking for the primary first when it is not known (ledger_unavailable
   * after the failover window). A pooled connection opened to another server (a former primary) is discarded, and
   * a new one is checked to be writable and not behind the newest timeline before it is used. With `wait` false
   * a lost primary is not waited for (the search is left running).
   */
  async connect(pool: Pool, wait = true): Promise<Connection> {
    const until = Date.now() + this.failoverMs;
    let last: unknown = null;
    for (;;) {
      if (last !== null && Date.now() >= until)
        throw ledgerUnavailable(this.failoverMs, `the primary found refused connections: ${asError(last).message}`);
      if (!wait && this.primary.current() === null) throw asError(last ?? 'the primary is being looked for');
      const server = await this.primary.find();
      let client: PoolClient;
      try {
        client = await pool.connect();
      } catch (e) {
        if (!isConnectionLoss(e)) throw e;
        this.primary.lost(server);
        last = e;
        continue;
      }
      // A connection that dies while checked out emits 'error', and without a listener Node would crash the
      // process. The statement in flight fails on its own, so the listener only has to exist.
      const onError = () => undefined;
      client.on('error', onError);
      const done = (err?: Error) => {
        client.removeListener('error', onError);
        client.release(err);
      };
      const on = bound.get(client);
      if (on?.server !== server) {
        done(new Error('a connection to a server that is no longer the primary'));
        continue;
      }
      if (!on.checked) {
        try {
          if (!this.primary.admit(server, await serverState(client)))
            throw new Error(`${server.label} is not writable`);
          on.checked = true;
        } catch (e) {
          done(asError(e));
          this.primary.lost(server);
          last = e;
          continue;
        }
      }
      return { client, server, done };
    }
  }

  /** connect(), its failures as ledger errors (ledger_unavailable stays itself). */
  private async connectOr(what: string, pool: Pool, wait = true): Promise<Connection> {
    try {
      return await this.connect(pool, wait);
    } catch (e) {
      throw ledgerError(what, e);
    }
  }

  /**
   * A transaction on one pooled connection; a failed connection is discarded, not reused. A transaction that
   * failed before its COMMIT was sent committed nothing: when it failed because the connection was lost or the
   * server turned read-only, it runs again on the primary found next. One whose COMMIT was sent and not answered
   * may have committed: it fails (`ledger`), and the caller treats it as not acknowledged (a sign is not sent).
   */
  async write<T>(what: string, work: () => Work<T>): Promise<T> {
    this.checkOpen();
    const until = Date.now() + this.failoverMs;
    for (;;) {
      const conn = await this.connectOr(what, this.pool);
      const { client, done } = conn;
      let commitSent = false;
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const out = await stepAsync(work(), (s) => execOn(client, s));
        commitSent = true;
        await client.query('COMMIT');
        return out;
      } catch (e) {
        // If ROLLBACK fails the connection is unusable: release it with the error so the pool destroys it.
        if (!commitSent)
          await client.query('ROLLBACK').catch((re: unknown) => {
            broken = asError(re);
          });
        else broken = asError(e);
        this.connectionLost(conn.server, e);
        if (!commitSent && (isConnectionLoss(e) || isReadOnly(e)) && Date.now() < until) continue;
        throw ledgerError(what, e);
      } finally {
        done(broken);
      }
    }
  }

  /** A read-only REPEATABLE READ transaction: every statement sees one snapshot. */
  async snapshot<T>(what: string, work: () => Work<T>): Promise<T> {
    this.checkOpen();
    const conn = await this.connectOr(what, this.pool);
    let broken: Error | undefined;
    try {
      await conn.client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const out = await stepAsync(work(), (s) => execOn(conn.client, s));
      await conn.client.query('COMMIT');
      return out;
    } catch (e) {
      broken = asError(e);
      this.connectionLost(conn.server, e);
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

/**
 * A pg Client class whose connections go to the primary the tracker names when the pool opens them, and whose
 * connection attempts give up after `ms`, whatever the pool's own timeout.
 */
function clientToPrimary(primary: PrimaryTracker, ms: number): typeof Client {
  return class PrimaryClient extends Client {
    constructor(config?: string | ClientConfig) {
      const server = primary.target();
      super({
        ...(typeof config === 'string' ? {} : config),
        connectionString: server.url,
        connectionTimeoutMillis: ms,
      });
      bound.set(this, { server, checked: false });
    }
  };
}
