/**
 * The PostgreSQL ledger store (`pg`): several signer replicas share one database, so they share limits, halts,
 * approvals and one hash chain, and a per-key lock spans them all.
 *
 * - Migrations run at start-up under a session advisory lock, so replicas starting together apply them once.
 * - One chain across replicas: an append locks the single head record row (SELECT … FOR UPDATE), inserts the
 *   entry and moves the head in one transaction. Commit order is chain order. The statements are the ones the
 *   SQLite store runs (sql/statements.ts).
 * - The per-key lock is `pg_advisory_lock(hash of key)` on a dedicated connection, held while a sign passes its
 *   cap gate (usage read to durable intent, signer/flow/gate.ts); waiters queue in the server, first come first served across replicas. Session advisory locks die with their
 *   connection, so the server frees the lock when a replica dies or its connection is cut; the sign's intent is
 *   appended on that same connection (appendFenced), so a lock lost that way is noticed before anything is sent.
 *   A local FIFO mutex in front keeps one connection per key per process.
 * - Database down: connecting times out after `connectTimeoutMs` and every operation rejects with
 *   SignerError('ledger'); the pools open fresh connections when it is back, with no restart.
 */
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { Client, Pool, type ClientConfig, type PoolClient, type PoolConfig } from 'pg';
import { SignerError, errorMessage } from '../util/errors';
import { verifyAgainstHead } from './audit-check';
import { boundSummary, sealEntry, validateEntryInput } from './hash-chain';
import { newApprovalId, normaliseApprovalId } from './ids';
import { KeyedMutex, cancelledError } from './mutex';
import { applyDecision, electorate, haltEntry, recountDecision, resumeEntry, type Electorate } from './records';
import { postgresDialect } from './sql/dialect';
import { POSTGRES_MIGRATIONS, schemaTooNew } from './sql/migrations';
import {
  approvalRowValues,
  decisionRowValues,
  entryRowValues,
  haltRowValues,
  rowToApproval,
  rowToEntry,
  rowToHalt,
  rowToHead,
  type Row,
} from './sql/rows';
import { statements } from './sql/statements';
import { UsageBooks } from './usage-books';
import { nowSeconds } from '../util/time';
import {
  notificationRowValues,
  outboxStatements,
  rowToNotification,
  rowsToCounts,
  settlementRowValues,
} from './sql/outbox';
import { OPERATOR_SQL as OP } from './sql/operator-statements';
import {
  nonceRowValues,
  passkeyRowValues,
  rowToEnrollment,
  rowToNonce,
  rowToPasskey,
  rowToSession,
  rowToStanding,
  sessionRowValues,
  settingValue,
} from './sql/operator-rows';
import type {
  EnrollmentRecord,
  NoncePurpose,
  NonceRecord,
  OperatorStanding,
  PasskeyRecord,
  Revocation,
  SessionRecord,
} from './operators';
import type {
  ApprovalDecision,
  ApprovalRecord,
  ApprovalRequest,
  ApprovalStatus,
  AuditEntry,
  AuditEntryInput,
  ChainHead,
  ClearLockResult,
  HaltRecord,
  KeyLock,
  KeyLockInfo,
  Ledger,
  Usage,
  NotificationInput,
  NotificationRecord,
  NotificationSettlement,
  NotificationStatus,
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

/** A stable signed 64-bit advisory lock id for a name, as a decimal string for a ::bigint parameter. */
export function advisoryLockId(name: string): string {
  return createHash('sha256').update(`sa-forge-signer:${name}`).digest().readBigInt64BE(0).toString();
}

const SQL = statements(postgresDialect);
const OUTBOX = outboxStatements(postgresDialect);
const PAGE = 1000;

const MIGRATION_LOCK = advisoryLockId('migrations');
export const keyLockId = (key: string): string => advisoryLockId(`key:${key}`);

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

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
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
  private readonly usageBooks = new UsageBooks({
    headSeq: async () =>
      rowToHead((await this.query('cannot read the head record', SQL.readHead, [], { read: true }))[0] ?? {}).seq,
    signEntriesAfter: async (after, limit) =>
      (await this.query('cannot read audit entries', SQL.signEntriesAfter, [after, limit], { read: true })).map(
        (r) => ({
          seq: Number(r.seq),
          entry: rowToEntry(r),
        }),
      ),
    keySignEntries: async (key, since, through) =>
      (await this.query('cannot read audit entries', SQL.keySignEntries, [key, since, through], { read: true })).map(
        rowToEntry,
      ),
  });

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
        const res = await client.query<{ version: number }>('SELECT version FROM schema_version');
        const current = res.rows[0]?.version ?? 0;
        if (current > POSTGRES_MIGRATIONS.length) throw schemaTooNew('PostgreSQL', current, POSTGRES_MIGRATIONS.length);
        for (const [v, migration] of POSTGRES_MIGRATIONS.entries()) {
          if (v < current) continue;
          await client.query('BEGIN');
          try {
            await client.query(migration);
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
        await client.query('ROLLBACK').catch((re: unknown) => {
          broken = asError(re);
        });
        throw e instanceof SignerError ? e : ledgerError(what, e);
      } finally {
        done(broken);
      }
    }
  }

  /** Inside a transaction: takes the head record, seals the input onto it, inserts it, moves the head. */
  private async appendInTx(c: PoolClient, input: AuditEntryInput): Promise<AuditEntry> {
    const head = await this.headIn(c);
    const entry = sealEntry(input, head.hash);
    await c.query(SQL.insertEntry, entryRowValues(head.seq + 1, entry));
    await c.query(SQL.moveHead, [head.seq + 1, entry.hash]);
    return entry;
  }

  /** The head record, row-locked until the transaction ends (the head statement is FOR UPDATE here). */
  private async headIn(c: PoolClient): Promise<ChainHead> {
    const row = (await c.query<Row>(SQL.head)).rows[0];
    if (!row)
      throw new SignerError('ledger', 'PostgreSQL ledger: the chain head row is missing; the schema was altered');
    return rowToHead(row);
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
      const owned = await client.query<{ held: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = pg_backend_pid()
            AND classid::bigint = $1 AND objid::bigint = $2 AND objsubid = 1) AS held`,
        advisoryLockParts(held.lockId),
      );
      if (owned.rows[0]?.held !== true) throw lockLost(input.key, null);
      const entry = await this.appendInTx(client, input);
      await client.query('COMMIT');
      return entry;
    } catch (e) {
      held.broken = asError(e);
      await client.query('ROLLBACK').catch(() => undefined);
      throw e instanceof SignerError ? e : lockLost(input.key, e);
    }
  }

  async keyUsage(key: string, now: number, dailyCap: number): Promise<Usage> {
    return await this.usageBooks.usage(key, now, dailyCap);
  }

  async signatureInFlight(key: string, signature: string): Promise<boolean> {
    return await this.usageBooks.inFlight(key, signature, nowSeconds());
  }

  async signEntriesForKey(key: string, since: number): Promise<AuditEntry[]> {
    const rows = await this.query('cannot read audit entries', SQL.signEntriesForKey, [key, since], { read: true });
    return rows.map(rowToEntry);
  }

  /**
   * Always the lock: each read here is a round trip to the server, so a transaction that reads the usage, the
   * in-flight intents and the halt while holding the chain's head row would hold every replica's appends for
   * several round trips, where the key's advisory lock holds up only that key's gate.
   */
  reserveAtOnce(): Promise<null> {
    return Promise.resolve(null);
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

  async getHalt(key: string): Promise<HaltRecord | null> {
    const rows = await this.query('cannot read halts', SQL.getHalt, [key], { read: true });
    return rows[0] ? rowToHalt(rows[0]) : null;
  }

  async listHalts(): Promise<HaltRecord[]> {
    return (await this.query('cannot read halts', SQL.listHalts, [], { read: true })).map(rowToHalt);
  }

  async halt(rec: HaltRecord): Promise<HaltRecord> {
    const bounded = { ...rec, reason: boundSummary(rec.reason) };
    validateEntryInput(haltEntry(bounded));
    return this.transaction('cannot record the halt', async (c) => {
      // Take the head record first: it serialises concurrent halts of one key, so the second sees the first's row.
      await this.headIn(c);
      const existing = (await c.query<Row>(SQL.getHalt, [rec.key])).rows[0];
      if (existing) return rowToHalt(existing);
      await c.query(SQL.insertHalt, haltRowValues(bounded));
      await this.appendInTx(c, haltEntry(bounded));
      return bounded;
    });
  }

  async resume(key: string, by: string, ts: number): Promise<boolean> {
    return this.transaction('cannot record the resume', async (c) => {
      await this.headIn(c);
      const lifted = (await c.query<Row>(SQL.deleteHalt, [key])).rows[0];
      if (!lifted) return false;
      const entry = resumeEntry(key, by, ts, rowToHalt(lifted));
      validateEntryInput(entry);
      await this.appendInTx(c, entry);
      return true;
    });
  }

  async createApproval(req: ApprovalRequest): Promise<ApprovalRecord> {
    const bounded = { ...req, summary: boundSummary(req.summary) };
    return this.transaction('cannot record the approval request', (c) => this.insertApprovalIn(c, bounded));
  }

  /** Inside a transaction: a new request under a fresh id. */
  private async insertApprovalIn(c: PoolClient, req: ApprovalRequest): Promise<ApprovalRecord> {
    for (let attempt = 0; attempt < 6; attempt++) {
      const rows = (await c.query<Row>(SQL.insertApproval, approvalRowValues(newApprovalId(), req))).rows;
      if (rows[0]) return rowToApproval(rows[0]); // else: a 40-bit id collided; draw another
    }
    throw new SignerError('ledger', 'PostgreSQL ledger: could not draw a free approval id');
  }

  /**
   * A transaction-scoped advisory lock on the key and payload hash serialises replicas asking for one payload: the
   * second waits for the first to commit, then finds its request (a row lock alone cannot cover a row not yet
   * inserted).
   */
  async requestApproval(
    req: ApprovalRequest & { waiter: string },
  ): Promise<{ record: ApprovalRecord; joined: boolean }> {
    const bounded = { ...req, summary: boundSummary(req.summary) };
    return this.transaction('cannot record the approval request', async (c) => {
      await c.query('SELECT pg_advisory_xact_lock($1::bigint)', [
        advisoryLockId(`approval:${req.key}:${req.payload_hash}`),
      ]);
      const row = (await c.query<Row>(SQL.openForPayload, [req.key, req.payload_hash, req.ts])).rows[0];
      if (!row) return { record: await this.insertApprovalIn(c, bounded), joined: false };
      const found = rowToApproval(row);
      await c.query(SQL.reopenFor, [req.waiter, found.id]);
      return {
        record: { ...found, waiter: req.waiter, status: 'pending', decided_by: null, decided_at: null },
        joined: true,
      };
    });
  }

  async getApproval(id: string): Promise<ApprovalRecord | null> {
    const rows = await this.query('cannot read approvals', SQL.getApproval, [normaliseApprovalId(id)], { read: true });
    return rows[0] ? rowToApproval(rows[0]) : null;
  }

  async listApprovals(filter?: { status?: ApprovalStatus }): Promise<ApprovalRecord[]> {
    const rows = filter?.status
      ? await this.query('cannot read approvals', SQL.listApprovalsByStatus, [filter.status], { read: true })
      : await this.query('cannot read approvals', SQL.listApprovals, [], { read: true });
    return rows.map(rowToApproval);
  }

  async decideApproval(
    id: string,
    decision: ApprovalDecision,
    by: string,
    ts: number,
    credential: string | null = null,
    voters: readonly string[] | null = null,
  ): Promise<ApprovalRecord> {
    return this.decideIn(voters, (rec, e) => applyDecision(rec, decision, by, ts, credential, e), id);
  }

  async recountApproval(id: string, voters: readonly string[] | null, ts: number): Promise<ApprovalRecord> {
    return this.decideIn(voters, (rec, e) => recountDecision(rec, e, ts), id);
  }

  async leaveApproval(id: string, waiter: string, ts: number): Promise<ApprovalRecord> {
    return this.decideIn(
      null,
      (rec, e) =>
        rec.waiter === null || rec.waiter === waiter
          ? applyDecision(rec, 'abandoned', 'signer', ts, null, e)
          : { record: rec, changed: false },
      id,
    );
  }

  /**
   * Reads the request row-locked (FOR UPDATE), decides on it and writes it back in one transaction: votes cast at
   * once on several replicas queue on the row, and each sees the votes before it. The revocations are read after
   * the row lock, so a revocation committed before a vote's turn is seen by it.
   */
  private async decideIn(
    voters: readonly string[] | null,
    decide: (rec: ApprovalRecord, e: Electorate) => { record: ApprovalRecord; changed: boolean },
    id: string,
  ): Promise<ApprovalRecord> {
    const wanted = normaliseApprovalId(id);
    return this.transaction('cannot record the decision', async (c) => {
      const row = (await c.query<Row>(SQL.getApprovalForDecision, [wanted])).rows[0];
      if (!row) throw new SignerError('request_invalid', `no approval request with id ${id}`);
      const standings = (await c.query<Row>(OP.listStandings)).rows.map(rowToStanding);
      const { record, changed } = decide(rowToApproval(row), electorate(voters, standings));
      if (changed) await c.query(SQL.decideApproval, decisionRowValues(record));
      return record;
    });
  }

  async enqueueNotifications(rows: readonly NotificationInput[]): Promise<void> {
    if (rows.length === 0) return;
    await this.transaction('cannot record notifications', async (c) => {
      for (const n of rows) await c.query(OUTBOX.insert, notificationRowValues(n));
    });
  }

  async claimNotifications(owner: string, now: number, leaseMs: number, limit: number): Promise<NotificationRecord[]> {
    const rows = await this.query('cannot claim notifications', OUTBOX.claim, [owner, now + leaseMs, now, limit]);
    return rows.map(rowToNotification);
  }

  async settleNotification(id: string, owner: string, state: NotificationSettlement): Promise<boolean> {
    this.checkOpen();
    try {
      const res = await this.pool.query(OUTBOX.settle, settlementRowValues(id, owner, state));
      return res.rowCount === 1;
    } catch (e) {
      throw ledgerError('cannot record a delivery', e);
    }
  }

  async listNotifications(opts: { limit: number; status?: NotificationStatus }): Promise<NotificationRecord[]> {
    const limit = Math.max(0, Math.floor(opts.limit));
    const rows = opts.status
      ? await this.query('cannot read notifications', OUTBOX.listByStatus, [opts.status, limit], { read: true })
      : await this.query('cannot read notifications', OUTBOX.list, [limit], { read: true });
    return rows.map(rowToNotification);
  }

  async notificationCounts(): Promise<Record<NotificationStatus, number>> {
    return rowsToCounts(await this.query('cannot read notifications', OUTBOX.counts, [], { read: true }));
  }

  async pruneNotifications(before: number): Promise<number> {
    this.checkOpen();
    try {
      return (await this.pool.query(OUTBOX.prune, [before])).rowCount ?? 0;
    } catch (e) {
      throw ledgerError('cannot prune notifications', e);
    }
  }

  async createEnrollment(rec: Omit<EnrollmentRecord, 'used_at'>): Promise<void> {
    await this.query('cannot record the enrollment link', OP.insertEnrollment, [
      rec.token_hash,
      rec.operator,
      rec.created_at,
      rec.expires_at,
    ]);
  }

  async getEnrollment(tokenHash: string): Promise<EnrollmentRecord | null> {
    const rows = await this.query('cannot read enrollment links', OP.getEnrollment, [tokenHash], { read: true });
    return rows[0] ? rowToEnrollment(rows[0]) : null;
  }

  async completeEnrollment(tokenHash: string, now: number, passkey: PasskeyRecord): Promise<boolean> {
    return this.transaction('cannot record the passkey', async (c) => {
      const used = (await c.query<Row>(OP.useEnrollment, [tokenHash, now])).rows[0];
      if (!used) return false;
      await c.query(OP.insertPasskey, passkeyRowValues(passkey));
      await c.query(OP.reinstate, [passkey.operator, now]);
      return true;
    });
  }

  async listPasskeys(operator?: string): Promise<PasskeyRecord[]> {
    const rows =
      operator === undefined
        ? await this.query('cannot read passkeys', OP.listPasskeys, [], { read: true })
        : await this.query('cannot read passkeys', OP.listPasskeysOf, [operator], { read: true });
    return rows.map(rowToPasskey);
  }

  async getPasskey(credentialId: string): Promise<PasskeyRecord | null> {
    const rows = await this.query('cannot read passkeys', OP.getPasskey, [credentialId], { read: true });
    return rows[0] ? rowToPasskey(rows[0]) : null;
  }

  async touchPasskey(credentialId: string, counter: number, ts: number): Promise<void> {
    await this.query('cannot record the passkey use', OP.touchPasskey, [credentialId, counter, ts]);
  }

  async revokeOperator(operator: string, ts: number): Promise<Revocation> {
    return this.transaction('cannot revoke the operator', async (c) => {
      const passkeys = (await c.query<Row>(OP.deletePasskeysOf, [operator])).rows.length;
      await c.query(OP.deleteOpenEnrollmentsOf, [operator]);
      const sessions = (await c.query<Row>(OP.endSessionsOf, [operator])).rows.length;
      await c.query(OP.revoke, [operator, ts]);
      return { passkeys, sessions };
    });
  }

  async operatorStandings(): Promise<OperatorStanding[]> {
    return (await this.query('cannot read revocations', OP.listStandings, [], { read: true })).map(rowToStanding);
  }

  async openSession(rec: SessionRecord, now: number): Promise<void> {
    await this.transaction('cannot record the login', async (c) => {
      await c.query(OP.purgeSessions, [now]);
      await c.query(OP.insertSession, sessionRowValues(rec));
    });
  }

  async getSession(idHash: string, now: number): Promise<SessionRecord | null> {
    const rows = await this.query('cannot read sessions', OP.getSession, [idHash, now], { read: true });
    return rows[0] ? rowToSession(rows[0]) : null;
  }

  async endSession(idHash: string): Promise<void> {
    await this.query('cannot end the session', OP.endSession, [idHash]);
  }

  async endSessionsOf(operator: string): Promise<number> {
    return (await this.query('cannot end sessions', OP.endSessionsOf, [operator])).length;
  }

  async putNonce(rec: NonceRecord, now: number): Promise<void> {
    await this.transaction('cannot record the nonce', async (c) => {
      await c.query(OP.purgeNonces, [now]);
      await c.query(OP.insertNonce, nonceRowValues(rec));
    });
  }

  async takeNonce(nonce: string, purpose: NoncePurpose, now: number): Promise<NonceRecord | null> {
    const rows = await this.query('cannot take the nonce', OP.takeNonce, [nonce, purpose, now]);
    return rows[0] ? rowToNonce(rows[0]) : null;
  }

  async settingOrInit(name: string, proposed: string): Promise<string> {
    await this.query('cannot read the console settings', OP.initSetting, [name, proposed]);
    const rows = await this.query('cannot read the console settings', OP.getSetting, [name], { read: true });
    return settingValue(rows[0]) ?? proposed;
  }

  async verify(): Promise<VerifyResult> {
    // The head and the halts from one snapshot; the entries up to that head do not change (append-only).
    const { head, halts } = await this.snapshot('cannot read the head record', async (c) => ({
      head: rowToHead((await c.query<Row>(SQL.readHead)).rows[0] ?? {}),
      halts: (await c.query<Row>(SQL.listHalts)).rows.map(rowToHalt),
    }));
    return verifyAgainstHead(this.entriesThrough(head.seq), head, halts);
  }

  async head(): Promise<ChainHead> {
    const rows = await this.query('cannot read the head record', SQL.readHead, [], {
      read: true,
    });
    if (!rows[0])
      throw new SignerError('ledger', 'PostgreSQL ledger: the chain head row is missing; the schema was altered');
    return rowToHead(rows[0]);
  }

  async tail(n: number): Promise<AuditEntry[]> {
    const rows = await this.query('cannot read audit entries', SQL.tail, [Math.max(0, Math.floor(n))], { read: true });
    return rows.map(rowToEntry).reverse();
  }

  entries(): AsyncIterable<AuditEntry> {
    return this.entriesThrough(Number.MAX_SAFE_INTEGER);
  }

  private async *entriesThrough(last: number): AsyncIterable<AuditEntry> {
    let after = 0;
    for (;;) {
      const rows = await this.query('cannot read audit entries', SQL.page, [after, last, PAGE], { read: true });
      for (const r of rows) yield rowToEntry(r);
      const lastRow = rows[rows.length - 1];
      if (rows.length < PAGE || !lastRow) return;
      after = Number(lastRow.seq);
    }
  }

  /**
   * The advisory locks held now on the configured keys, with the replica holding each (its application name says
   * host and pid). A dead replica's lock is freed by the server, so every one listed has a live connection.
   */
  async keyLocks(keys: readonly string[]): Promise<KeyLockInfo[]> {
    const out: KeyLockInfo[] = [];
    for (const key of keys) {
      const rows = await this.query(
        'cannot read the key locks',
        `SELECT a.application_name, a.pid, (extract(epoch FROM a.backend_start) * 1000)::bigint AS since
           FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
          WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND l.classid::bigint = $1 AND l.objid::bigint = $2 AND l.objsubid = 1`,
        advisoryLockParts(keyLockId(key)),
        { read: true },
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
  }

  /** Terminates the connection holding the key's lock; PostgreSQL has no stale locks, so only with force. */
  async clearKeyLock(key: string, opts: { force: boolean }): Promise<ClearLockResult> {
    const held = await this.keyLocks([key]);
    if (held.length === 0) return 'not held';
    if (!opts.force) return 'live';
    await this.query(
      `cannot clear the lock on key ${key}`,
      `SELECT pg_terminate_backend(l.pid) FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid::bigint = $1 AND l.objid::bigint = $2 AND l.objsubid = 1`,
      advisoryLockParts(keyLockId(key)),
    );
    return 'cleared';
  }

  /** A read-only REPEATABLE READ transaction: every statement in fn sees one snapshot. */
  private async snapshot<T>(what: string, fn: (c: PoolClient) => Promise<T>): Promise<T> {
    this.checkOpen();
    let conn: Awaited<ReturnType<PostgresLedger['connect']>>;
    try {
      conn = await this.connect(this.pool);
    } catch (e) {
      throw ledgerError(what, e);
    }
    let broken: Error | undefined;
    try {
      await conn.client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const out = await fn(conn.client);
      await conn.client.query('COMMIT');
      return out;
    } catch (e) {
      broken = asError(e);
      throw ledgerError(what, e);
    } finally {
      conn.done(broken);
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
          reject(asError(e));
        }
      },
    );
  });
}
