/**
 * The PostgreSQL ledger store (`pg`): several signer replicas share one database, so they share limits, halts,
 * approvals and one hash chain, and a per-key lock spans them all.
 *
 * - Migrations run at start-up under a session advisory lock, so replicas starting together apply them once.
 * - One chain across replicas: an append locks the single `chain_head` row (SELECT … FOR UPDATE), inserts the
 *   entry and moves the head in one transaction. Commit order is chain order.
 * - The per-key lock is `pg_advisory_lock(hash of key)` on a dedicated connection that is held for the whole sign;
 *   waiters queue in the server, first come first served across replicas. Session advisory locks die with their connection, so the server frees the lock when a replica
 *   dies or its connection is cut. A local FIFO mutex in front keeps one connection per key per process.
 * - Database down: connecting times out after `connectTimeoutMs` and every operation rejects with
 *   SignerError('ledger'); the pools open fresh connections when it is back, with no restart.
 */
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { Client, Pool, type ClientConfig, type PoolClient, type PoolConfig } from 'pg';
import { SignerError, errorMessage } from '../util/errors';
import { GENESIS_PREV, entryRowValues, sealEntry, validateEntryInput, verifyEntries } from './chain';
import { newApprovalId, normaliseApprovalId } from './ids';
import { KeyedMutex, cancelledError } from './mutex';
import { RATE_WINDOW_S, SPEND_WINDOW_S, type KeyUsage } from './limits';
import { USAGE_INDEXES, usageSql } from './usage-sql';
import { decisionOutcome, haltEntry, resumeEntry } from './records';
import type {
  ApprovalRecord,
  ApprovalRequest,
  ApprovalStatus,
  AuditEntry,
  AuditEntryInput,
  HaltRecord,
  KeyLock,
  Ledger,
  VerifyResult,
} from './types';

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

/** Versioned migrations: index + 1 is the schema version. Never edit one that shipped. */
const MIGRATIONS: string[] = [
  `CREATE TABLE entries (
     seq bigint PRIMARY KEY,
     ts bigint NOT NULL,
     key text NOT NULL,
     command text NOT NULL,
     payload_hash text NOT NULL,
     programs text NOT NULL,
     summary text NOT NULL,
     intent text,
     outcome text NOT NULL,
     detail text,
     signature text,
     slot bigint,
     balance_change bigint,
     prev text NOT NULL,
     hash text NOT NULL
   );
   CREATE INDEX entries_key_ts ON entries (key, ts);
   CREATE TABLE chain_head (id smallint PRIMARY KEY CHECK (id = 1), seq bigint NOT NULL, hash text NOT NULL);
   INSERT INTO chain_head (id, seq, hash) VALUES (1, 0, '${GENESIS_PREV}');
   CREATE TABLE halts (key text PRIMARY KEY, reason text NOT NULL, by text NOT NULL, ts bigint NOT NULL);
   CREATE TABLE approvals (
     id text PRIMARY KEY,
     key text NOT NULL,
     summary text NOT NULL,
     payload_hash text NOT NULL,
     balance_change bigint,
     fee bigint,
     compute_units bigint,
     requested_by text NOT NULL,
     ts bigint NOT NULL,
     expires_at bigint NOT NULL,
     status text NOT NULL,
     decided_by text,
     decided_at bigint
   );
   CREATE INDEX approvals_status ON approvals (status, ts);`,
  USAGE_INDEXES.join(';\n'),
];

/** A stable signed 64-bit advisory lock id for a name, as a decimal string for a ::bigint parameter. */
export function advisoryLockId(name: string): string {
  return createHash('sha256').update(`sa-forge-signer:${name}`).digest().readBigInt64BE(0).toString();
}

const USAGE_SQL = usageSql('postgres', (n) => (n === 1 ? '$1::text' : `$${n}::bigint`));

const MIGRATION_LOCK = advisoryLockId('migrations');
export const keyLockId = (key: string): string => advisoryLockId(`key:${key}`);

const ENTRY_COLUMNS =
  'seq, ts, key, command, payload_hash, programs, summary, intent, outcome, detail, signature, slot, balance_change, prev, hash';

type Row = Record<string, unknown>;
const num = (v: unknown): number => Number(v);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

function rowToEntry(r: Row): AuditEntry {
  let programs: string[] = [];
  try {
    const p: unknown = JSON.parse(String(r.programs));
    if (Array.isArray(p)) programs = p.map(String);
  } catch {
    /* an unparseable value fails verification through the hash */
  }
  return {
    ts: num(r.ts),
    key: String(r.key),
    command: String(r.command) as AuditEntry['command'],
    payload_hash: String(r.payload_hash),
    programs,
    summary: String(r.summary),
    intent: strOrNull(r.intent),
    outcome: String(r.outcome),
    detail: strOrNull(r.detail),
    signature: strOrNull(r.signature),
    slot: numOrNull(r.slot),
    balance_change: numOrNull(r.balance_change),
    prev: String(r.prev),
    hash: String(r.hash),
  };
}

function rowToHalt(r: Row): HaltRecord {
  return { key: String(r.key), reason: String(r.reason), by: String(r.by), ts: num(r.ts) };
}

function rowToApproval(r: Row): ApprovalRecord {
  return {
    id: String(r.id),
    key: String(r.key),
    summary: String(r.summary),
    payload_hash: String(r.payload_hash),
    balance_change: numOrNull(r.balance_change),
    fee: numOrNull(r.fee),
    compute_units: numOrNull(r.compute_units),
    requested_by: String(r.requested_by),
    ts: num(r.ts),
    expires_at: num(r.expires_at),
    status: String(r.status) as ApprovalStatus,
    decided_by: strOrNull(r.decided_by),
    decided_at: numOrNull(r.decided_at),
  };
}

interface HeldLock {
  conn: { client: PoolClient; done: (err?: Error) => void };
  lockId: string;
  /** Set when a fenced append failed on the lock's connection: it is discarded on release, not pooled. */
  broken: Error | undefined;
}

/** pg_locks shows a bigint advisory lock as two unsigned 32-bit halves: classid (high) and objid (low). */
function advisoryLockParts(lockId: string): [string, string] {
  const id = BigInt.asUintN(64, BigInt(lockId));
  return [(id >> 32n).toString(), (id & 0xffffffffn).toString()];
}

function lockNotHeld(key: string): SignerError {
  return new SignerError('internal', `a fenced append for key ${key} without holding its lock`);
}

function lockLost(key: string, cause: unknown): SignerError {
  const why = cause === null ? '' : `: ${errorMessage(cause)}`;
  return new SignerError(
    'ledger',
    `PostgreSQL ledger: the lock on key ${key} was lost (its database connection closed)${why}; nothing was written or sent, retry`,
    { cause },
  );
}

function ledgerError(what: string, e: unknown): SignerError {
  if (e instanceof SignerError) return e;
  return new SignerError('ledger', `PostgreSQL ledger: ${what}: ${errorMessage(e)}`, { cause: e });
}

export class PostgresLedger implements Ledger {
  readonly store = 'postgres' as const;
  private readonly pool: Pool;
  private readonly lockPool: Pool;
  private readonly mutex = new KeyedMutex();
  private readonly heldLocks = new Set<KeyLock>();
  /** The lock this handle holds per key (the local mutex allows one), for fenced appends. */
  private readonly heldByKey = new Map<string, HeldLock>();
  private closed = false;

  private constructor(url: string, opts: PostgresLedgerOptions) {
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

  /** Connects, applies migrations (under an advisory lock) and returns a ready ledger. */
  static async open(url: string, opts: PostgresLedgerOptions): Promise<PostgresLedger> {
    const ledger = new PostgresLedger(url, opts);
    try {
      await ledger.migrate();
    } catch (e) {
      await ledger.close().catch(() => undefined);
      throw ledgerError('cannot prepare the schema', e);
    }
    return ledger;
  }

  private async migrate(): Promise<void> {
    const { client, done } = await this.connect(this.pool);
    let broken: Error | undefined;
    try {
      await client.query('SELECT pg_advisory_lock($1::bigint)', [MIGRATION_LOCK]);
      try {
        await client.query('CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)');
        const res = await client.query('SELECT version FROM schema_version');
        const current = res.rows.length ? Number(res.rows[0].version) : 0;
        if (current > MIGRATIONS.length)
          throw new SignerError(
            'ledger',
            `the ledger schema is version ${current}, newer than this signer understands (${MIGRATIONS.length}): upgrade the signer`,
          );
        for (let v = current; v < MIGRATIONS.length; v++) {
          await client.query('BEGIN');
          try {
            await client.query(MIGRATIONS[v]!);
            if (v === 0 && res.rows.length === 0) await client.query('INSERT INTO schema_version VALUES ($1)', [v + 1]);
            else await client.query('UPDATE schema_version SET version = $1', [v + 1]);
            await client.query('COMMIT');
          } catch (e) {
            await client.query('ROLLBACK').catch(() => undefined);
            throw e;
          }
        }
      } finally {
        await client.query('SELECT pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK]).catch((e: Error) => {
          broken = e;
        });
      }
    } catch (e) {
      broken = e as Error;
      throw e;
    } finally {
      done(broken);
    }
  }

  private checkOpen(): void {
    if (this.closed) throw new SignerError('ledger', 'PostgreSQL ledger: the ledger is closed');
  }

  /**
   * One statement on a pooled connection. A read is retried once on a fresh connection when the first one turns
   * out to be dead (the database restarted while it sat idle in the pool); a write is never retried blindly.
   */
  private async query(what: string, text: string, values?: unknown[], opts: { read?: boolean } = {}): Promise<Row[]> {
    this.checkOpen();
    try {
      return (await this.pool.query(text, values)).rows as Row[];
    } catch (e) {
      if (opts.read && isConnectionLoss(e)) {
        try {
          return (await this.pool.query(text, values)).rows as Row[];
        } catch (e2) {
          throw ledgerError(what, e2);
        }
      }
      throw ledgerError(what, e);
    }
  }

  /**
   * A checked-out connection with an error listener for as long as we hold it: a connection that dies while
   * checked out emits 'error', and without a listener Node would crash the process. The statement in flight
   * fails on its own, so the listener only has to exist.
   */
  private async connect(pool: Pool): Promise<{ client: PoolClient; done: (err?: Error) => void }> {
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
   * Runs fn in a transaction on one pooled connection; a failed connection is discarded, not reused. If BEGIN
   * itself fails (a connection that died idle in the pool), nothing was done, so it retries once on a fresh one.
   */
  private async transaction<T>(what: string, fn: (c: PoolClient) => Promise<T>): Promise<T> {
    this.checkOpen();
    for (let attempt = 0; ; attempt++) {
      let conn: Awaited<ReturnType<PostgresLedger['connect']>>;
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
        const out = await fn(client);
        await client.query('COMMIT');
        return out;
      } catch (e) {
        // If ROLLBACK fails the connection is unusable: release it with the error so the pool destroys it.
        await client.query('ROLLBACK').catch((re: Error) => {
          broken = re;
        });
        throw e instanceof SignerError ? e : ledgerError(what, e);
      } finally {
        done(broken);
      }
    }
  }

  /** Inside a transaction: takes the chain head, seals the input onto it, inserts it, moves the head. */
  private async appendInTx(c: PoolClient, input: AuditEntryInput): Promise<AuditEntry> {
    const head = await c.query('SELECT seq, hash FROM chain_head WHERE id = 1 FOR UPDATE');
    const h = head.rows[0] as Row | undefined;
    if (!h) throw new SignerError('ledger', 'PostgreSQL ledger: the chain head row is missing; the schema was altered');
    const seq = num(h.seq) + 1;
    const entry = sealEntry(input, String(h.hash));
    await c.query(
      `INSERT INTO entries (${ENTRY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
      entryRowValues(seq, entry),
    );
    await c.query('UPDATE chain_head SET seq = $1, hash = $2 WHERE id = 1', [seq, entry.hash]);
    return entry;
  }

  async append(input: AuditEntryInput): Promise<AuditEntry> {
    validateEntryInput(input);
    return this.transaction('cannot append an audit entry', (c) => this.appendInTx(c, input));
  }

  /**
   * The append runs on the lock's own connection, so it can only commit on the backend that holds the session
   * advisory lock: once that backend is gone (terminated, or its connection cut) the lock is free for another
   * replica and this insert fails with it. The transaction also checks pg_locks for the lock on its own backend,
   * which catches a connection that no longer maps to the locking backend (a transaction-mode pooler).
   */
  async appendFenced(input: AuditEntryInput): Promise<AuditEntry> {
    validateEntryInput(input);
    this.checkOpen();
    const held = this.heldByKey.get(input.key);
    if (!held) throw lockNotHeld(input.key);
    const { client } = held.conn;
    try {
      await client.query('BEGIN');
      const owned = await client.query(
        `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = pg_backend_pid()
            AND classid::bigint = $1 AND objid::bigint = $2 AND objsubid = 1) AS held`,
        advisoryLockParts(held.lockId),
      );
      if ((owned.rows[0] as Row | undefined)?.held !== true) throw lockLost(input.key, null);
      const entry = await this.appendInTx(client, input);
      await client.query('COMMIT');
      return entry;
    } catch (e) {
      held.broken = e instanceof Error ? e : new Error(String(e));
      await client.query('ROLLBACK').catch(() => undefined);
      throw e instanceof SignerError ? e : lockLost(input.key, e);
    }
  }

  async keyUsage(key: string, now: number, dailyCap: number): Promise<KeyUsage> {
    const rows = await this.query(
      "cannot read the key's usage",
      USAGE_SQL,
      [key, now - RATE_WINDOW_S, now - SPEND_WINDOW_S, dailyCap],
      { read: true },
    );
    const row = rows[0] as { rate: string | number; finals: string | number; orphans: string | number };
    return { signsLastMinute: Number(row.rate), spent24h: Number(row.finals) + Number(row.orphans) };
  }

  async signEntriesForKey(key: string, since: number): Promise<AuditEntry[]> {
    const rows = await this.query(
      'cannot read audit entries',
      `SELECT ${ENTRY_COLUMNS} FROM entries WHERE key = $1 AND command IN ('sign', 'sign-intent') AND ts >= $2 ORDER BY seq`,
      [key, since],
      { read: true },
    );
    return rows.map(rowToEntry);
  }

  async lockKey(key: string, signal?: AbortSignal): Promise<KeyLock> {
    this.checkOpen();
    const releaseLocal = await this.mutex.acquire(key, signal);
    const lockId = keyLockId(key);
    let conn: Awaited<ReturnType<PostgresLedger['connect']>>;
    try {
      conn = await this.takeAdvisoryLock(key, lockId, signal);
    } catch (e) {
      releaseLocal();
      throw e;
    }
    const held: HeldLock = { conn, lockId, broken: undefined };
    this.heldByKey.set(key, held);
    let released = false;
    const lock: KeyLock = {
      release: async () => {
        if (released) return;
        released = true;
        this.heldLocks.delete(lock);
        this.heldByKey.delete(key);
        let broken = held.broken;
        try {
          if (!broken) {
            const res = await conn.client.query('SELECT pg_advisory_unlock($1::bigint) AS ok', [lockId]);
            if ((res.rows[0] as Row | undefined)?.ok !== true) broken = new Error('the advisory lock was not held');
          }
        } catch (e) {
          broken = e as Error; // the connection is gone, and with it the lock: nothing left to free
        } finally {
          conn.done(broken);
          releaseLocal();
        }
      },
    };
    this.heldLocks.add(lock);
    return lock;
  }

  /**
   * Waits for the advisory lock on a dedicated connection with the blocking pg_advisory_lock, so waiters queue in the
   * server in the order they asked and the lock passes to the next one the moment it is freed. (Polling
   * pg_try_advisory_lock let the replica that had just released take the lock again before the other's next poll:
   * under load a replica starved, and every poll was a round trip.) A wait that reaches the statement timeout is
   * queued again on a fresh connection. A connection that turns out dead before the lock is taken is replaced once
   * (the server freed whatever it held). On failure or abort the connection is destroyed rather than pooled, so a
   * lock it might hold, or a wait it left queued, is dropped by the server.
   */
  private async takeAdvisoryLock(
    key: string,
    lockId: string,
    signal?: AbortSignal,
  ): Promise<Awaited<ReturnType<PostgresLedger['connect']>>> {
    for (let attempt = 0; ; attempt++) {
      let conn: Awaited<ReturnType<PostgresLedger['connect']>> | undefined;
      try {
        conn = await abortable(this.connect(this.lockPool), signal, key, (c) => c.done());
        await abortable(
          conn.client.query('SELECT pg_advisory_lock($1::bigint)', [lockId]),
          signal,
          key,
          () => undefined,
        );
        return conn;
      } catch (e) {
        conn?.done(e instanceof Error ? e : new Error(String(e)));
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

  async getHalt(key: string): Promise<HaltRecord | null> {
    const rows = await this.query('cannot read halts', 'SELECT key, reason, by, ts FROM halts WHERE key = $1', [key], {
      read: true,
    });
    return rows[0] ? rowToHalt(rows[0]) : null;
  }

  async listHalts(): Promise<HaltRecord[]> {
    return (
      await this.query('cannot read halts', 'SELECT key, reason, by, ts FROM halts ORDER BY key', [], { read: true })
    ).map(rowToHalt);
  }

  async halt(rec: HaltRecord): Promise<HaltRecord> {
    validateEntryInput(haltEntry(rec));
    return this.transaction('cannot record the halt', async (c) => {
      // Take the chain head first: it serialises concurrent halts of one key, so the second sees the first's row.
      await c.query('SELECT 1 FROM chain_head WHERE id = 1 FOR UPDATE');
      const existing = await c.query('SELECT key, reason, by, ts FROM halts WHERE key = $1', [rec.key]);
      if (existing.rows[0]) return rowToHalt(existing.rows[0] as Row);
      await c.query('INSERT INTO halts (key, reason, by, ts) VALUES ($1, $2, $3, $4)', [
        rec.key,
        rec.reason,
        rec.by,
        rec.ts,
      ]);
      await this.appendInTx(c, haltEntry(rec));
      return { key: rec.key, reason: rec.reason, by: rec.by, ts: rec.ts };
    });
  }

  async resume(key: string, by: string, ts: number): Promise<boolean> {
    return this.transaction('cannot record the resume', async (c) => {
      await c.query('SELECT 1 FROM chain_head WHERE id = 1 FOR UPDATE');
      const gone = await c.query('DELETE FROM halts WHERE key = $1 RETURNING key, reason, by, ts', [key]);
      if (!gone.rows[0]) return false;
      const entry = resumeEntry(key, by, ts, rowToHalt(gone.rows[0] as Row));
      validateEntryInput(entry);
      await this.appendInTx(c, entry);
      return true;
    });
  }

  async createApproval(req: ApprovalRequest): Promise<ApprovalRecord> {
    for (let attempt = 0; attempt < 6; attempt++) {
      const rows = await this.query(
        'cannot record the approval request',
        `INSERT INTO approvals (id, key, summary, payload_hash, balance_change, fee, compute_units, requested_by, ts,
           expires_at, status, decided_by, decided_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'pending', NULL, NULL)
         ON CONFLICT (id) DO NOTHING RETURNING *`,
        [
          newApprovalId(),
          req.key,
          req.summary,
          req.payload_hash,
          req.balance_change,
          req.fee,
          req.compute_units,
          req.requested_by,
          req.ts,
          req.expires_at,
        ],
      );
      if (rows[0]) return rowToApproval(rows[0]); // else: a 40-bit id collided; draw another
    }
    throw new SignerError('ledger', 'PostgreSQL ledger: could not draw a free approval id');
  }

  async getApproval(id: string): Promise<ApprovalRecord | null> {
    const rows = await this.query(
      'cannot read approvals',
      'SELECT * FROM approvals WHERE id = $1',
      [normaliseApprovalId(id)],
      {
        read: true,
      },
    );
    return rows[0] ? rowToApproval(rows[0]) : null;
  }

  async listApprovals(filter?: { status?: ApprovalStatus }): Promise<ApprovalRecord[]> {
    const rows = filter?.status
      ? await this.query(
          'cannot read approvals',
          'SELECT * FROM approvals WHERE status = $1 ORDER BY ts, id',
          [filter.status],
          {
            read: true,
          },
        )
      : await this.query('cannot read approvals', 'SELECT * FROM approvals ORDER BY ts, id', [], { read: true });
    return rows.map(rowToApproval);
  }

  async decideApproval(
    id: string,
    decision: 'approved' | 'rejected' | 'expired',
    by: string,
    ts: number,
  ): Promise<ApprovalRecord> {
    const wanted = normaliseApprovalId(id);
    return this.transaction('cannot record the decision', async (c) => {
      const res = await c.query('SELECT * FROM approvals WHERE id = $1 FOR UPDATE', [wanted]);
      if (!res.rows[0]) throw new SignerError('request_invalid', `no approval request with id ${id}`);
      const rec = rowToApproval(res.rows[0] as Row);
      if (rec.status !== 'pending') return rec;
      const { status, decidedBy } = decisionOutcome(rec, decision, by, ts);
      await c.query('UPDATE approvals SET status = $1, decided_by = $2, decided_at = $3 WHERE id = $4', [
        status,
        decidedBy,
        ts,
        wanted,
      ]);
      return { ...rec, status, decided_by: decidedBy, decided_at: ts };
    });
  }

  async verify(): Promise<VerifyResult> {
    return verifyEntries(this.entries());
  }

  async tail(n: number): Promise<AuditEntry[]> {
    const rows = await this.query(
      'cannot read audit entries',
      `SELECT ${ENTRY_COLUMNS} FROM entries ORDER BY seq DESC LIMIT $1`,
      [Math.max(0, Math.floor(n))],
      { read: true },
    );
    return rows.map(rowToEntry).reverse();
  }

  async *entries(): AsyncIterable<AuditEntry> {
    let after = 0;
    for (;;) {
      const rows = await this.query(
        'cannot read audit entries',
        `SELECT ${ENTRY_COLUMNS} FROM entries WHERE seq > $1 ORDER BY seq LIMIT 1000`,
        [after],
        { read: true },
      );
      for (const r of rows) yield rowToEntry(r);
      if (rows.length < 1000) return;
      after = num(rows[rows.length - 1]!.seq);
    }
  }

  async ping(): Promise<void> {
    await this.query('not reachable', 'SELECT 1', [], { read: true });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.heldLocks].map((l) => l.release()));
    await Promise.allSettled([this.pool.end(), this.lockPool.end()]);
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

/** The server cancelled the statement at statement_timeout (SQLSTATE 57014 query_canceled). */
function isStatementTimeout(e: unknown): boolean {
  return e instanceof Error && (e as { code?: unknown }).code === '57014';
}

/** A connection that was cut or refused, as opposed to an error the server reported for the statement. */
function isConnectionLoss(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && /^(ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|57P01|57P02|57P03|08\d{3})$/.test(code))
    return true;
  return /Connection terminated|not queryable|Client has encountered a connection error/i.test(e.message);
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
          reject(e);
        }
      },
    );
  });
}
