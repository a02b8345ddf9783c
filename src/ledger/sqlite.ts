/**
 * The SQLite ledger store (better-sqlite3): the embedded default, one file shared by the service and CLI
 * processes on one host.
 *
 * Durability: WAL, and every write resolves only once the log is fsync'd after its commit (sqlite-wal-sync.ts:
 * group commit, the fsync off the event loop), and a process killed at any instant leaves the last committed
 * state (the chain always verifies).
 * Appends run in BEGIN IMMEDIATE transactions that read the head record, insert the next entry and move the head,
 * so appends from several processes form one chain. better-sqlite3 is synchronous, so appends within one process
 * are already serialised by the event loop; waiting for another process's write lock happens off it
 * (sqlite-busy.ts). The statements are the ones the PostgreSQL store runs (sql/statements.ts).
 *
 * The per-key lock is an in-process FIFO mutex in front of a lock row with a lease (sqlite-locks.ts).
 */
import Database from 'better-sqlite3';
import { SignerError, errorMessage } from '../util/errors';
import { nowSeconds } from '../util/time';
import { verifyAgainstHead } from './audit-check';
import { boundSummary, sealEntry, validateEntryInput } from './hash-chain';
import { newApprovalId, normaliseApprovalId } from './ids';
import { selfIdentity } from './liveness';
import { KeyedMutex } from './mutex';
import { applyDecision, electorate, haltEntry, recountDecision, resumeEntry, type Electorate } from './records';
import { sqliteDialect } from './sql/dialect';
import { SQLITE_MIGRATIONS, schemaTooNew } from './sql/migrations';
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
import { statements, type Statements } from './sql/statements';
import {
  notificationRowValues,
  outboxStatements,
  rowToNotification,
  rowsToCounts,
  settlementRowValues,
} from './sql/outbox';
import { BUSY_SLICE_MS, retryWhileBusy } from './sqlite-busy';
import { lockError, sqliteKeyLocks, type HeldRow, type SqliteKeyLocks } from './sqlite-locks';
import { UsageBooks } from './usage-books';
import { WalSync } from './sqlite-wal-sync';
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
  ReserveDecision,
  ReserveRequest,
  ReserveView,
  Usage,
  NotificationInput,
  NotificationRecord,
  NotificationSettlement,
  NotificationStatus,
  VerifyResult,
} from './types';

export interface SqliteLedgerOptions {
  /** How long an operation waits in all for another process's write transaction (off the event loop). Default 5000. */
  busyTimeoutMs?: number;
  /** How often a waiter re-checks a key lock held by another process. Default 20. */
  lockPollMs?: number;
  /** How long a key lock's lease lasts unless renewed (renewed every third of it while held). Default 30000. */
  lockLeaseMs?: number;
}

const bind = sqliteDialect.bind;
const SQL: Statements = statements(sqliteDialect);
const OUTBOX = outboxStatements(sqliteDialect);
const PAGE = 1000;

/** $1 key: who holds the key's lock row, if anyone. */
const LOCK_OWNER = 'SELECT owner_id FROM key_locks WHERE key = $1';

function ledgerError(what: string, e: unknown): SignerError {
  if (e instanceof SignerError) return e;
  return new SignerError('ledger', `SQLite ledger: ${what}: ${errorMessage(e)}`, { cause: e });
}

/** One prepared statement per shared SQL text, run with `$n` values. */
function preparer(db: Database.Database) {
  const cache = new Map<string, Database.Statement<[Record<string, unknown>], Row>>();
  const stmt = (sql: string) => {
    let s = cache.get(sql);
    if (!s) {
      s = db.prepare<[Record<string, unknown>], Row>(sql);
      cache.set(sql, s);
    }
    return s;
  };
  return {
    all: (sql: string, v: readonly unknown[] = []): Row[] => stmt(sql).all(bind(v)),
    get: (sql: string, v: readonly unknown[] = []): Row | undefined => stmt(sql).get(bind(v)),
    run: (sql: string, v: readonly unknown[] = []): number => stmt(sql).run(bind(v)).changes,
  };
}

export class SqliteLedger implements Ledger {
  readonly store = 'sqlite' as const;
  private readonly mutex = new KeyedMutex();
  private closed = false;
  /** Lock rows this instance holds (key → row), removed on close so no other process waits on them. */
  private readonly heldRows = new Map<string, HeldRow>();
  private readonly q: ReturnType<typeof preparer>;
  private readonly locks: SqliteKeyLocks;
  private readonly usageBooks: UsageBooks;
  private readonly walSync: WalSync;
  /** Entries appended by the write transaction under way, handed to the usage books once it commits. */
  private appendedInTx: { seq: number; entry: AuditEntry }[] = [];

  private constructor(
    private readonly db: Database.Database,
    private readonly lockDb: Database.Database,
    private readonly busyTimeoutMs: number,
    opts: SqliteLedgerOptions,
  ) {
    this.q = preparer(db);
    this.walSync = new WalSync(`${db.name}-wal`);
    this.locks = sqliteKeyLocks(lockDb, {
      pollMs: opts.lockPollMs ?? 20,
      leaseMs: opts.lockLeaseMs ?? 30_000,
      busyTimeoutMs: busyTimeoutMs,
      me: selfIdentity(),
    });
    // The head record is a page of a local file: reading it first skips the entries read when nothing is new.
    this.usageBooks = new UsageBooks(
      {
        headSeq: () => this.run('cannot read the head record', () => this.headNow().seq),
        signEntriesAfter: (after, limit) =>
          this.run('cannot read audit entries', () =>
            this.q.all(SQL.signEntriesAfter, [after, limit]).map((r) => ({ seq: Number(r.seq), entry: rowToEntry(r) })),
          ),
        keySignEntries: (key, since, through) =>
          this.run('cannot read audit entries', () =>
            this.q.all(SQL.keySignEntries, [key, since, through]).map(rowToEntry),
          ),
      },
      { headFirst: true },
    );
  }

  /**
   * Opens (creating if needed) the ledger file and brings its schema up to date. The caller creates the folder
   * with the mode it wants.
   */
  static async open(file: string, opts: SqliteLedgerOptions = {}): Promise<SqliteLedger> {
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
      return new SqliteLedger(db, lockDb, busyTimeoutMs, opts);
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

  /** Runs one synchronous step, retried off the event loop while another process holds the file. */
  private async run<T>(what: string, fn: () => T): Promise<T> {
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

  /**
   * A write transaction (BEGIN IMMEDIATE): rolled back whole on any failure, so it is safe to retry when busy.
   * Resolves once the commit is on disk; with `syncIfAppended`, a transaction that appended no entry (and wrote
   * nothing else) resolves at its commit.
   */
  private async write<T>(what: string, fn: () => T, opts: { syncIfAppended?: boolean } = {}): Promise<T> {
    let appended = 0;
    const result = await this.run(what, () => {
      this.appendedInTx = [];
      try {
        const r = this.db.transaction(fn).immediate();
        // Committed: the usage books take in this handle's own entries without reading them back.
        for (const { seq, entry } of this.appendedInTx) this.usageBooks.committed(seq, entry);
        appended = this.appendedInTx.length;
        return r;
      } finally {
        this.appendedInTx = [];
      }
    });
    if (opts.syncIfAppended && appended === 0) return result;
    await this.walSync.durable().catch((e: unknown) => Promise.reject(ledgerError(`${what}: cannot sync the log`, e)));
    return result;
  }

  /** Inside a write transaction: seals the input onto the head record, inserts it, moves the head. */
  private appendInTx(input: AuditEntryInput): AuditEntry {
    const head = this.headNow();
    const entry = sealEntry(input, head.hash);
    this.q.run(SQL.insertEntry, entryRowValues(head.seq + 1, entry));
    this.q.run(SQL.moveHead, [head.seq + 1, entry.hash]);
    this.appendedInTx.push({ seq: head.seq + 1, entry });
    return entry;
  }

  private headNow(): ChainHead {
    const row = this.q.get(SQL.readHead); // BEGIN IMMEDIATE already holds the file
    if (!row) throw new SignerError('ledger', 'SQLite ledger: the chain head row is missing; the schema was altered');
    return rowToHead(row);
  }

  async append(input: AuditEntryInput): Promise<AuditEntry> {
    validateEntryInput(input);
    return await this.write('cannot append an audit entry', () => this.appendInTx(input));
  }

  /**
   * The lock row is read inside the append's write transaction: a takeover by another process is itself a write,
   * so it either committed before (and this sees another owner and writes nothing) or waits until this commits
   * (and the new holder's usage read sees this entry).
   */
  async appendFenced(input: AuditEntryInput): Promise<AuditEntry> {
    validateEntryInput(input);
    const held = this.heldRows.get(input.key);
    if (!held) throw new SignerError('internal', `a fenced append for key ${input.key} without holding its lock`);
    return await this.write('cannot append an audit entry', () => {
      const row = this.q.get(LOCK_OWNER, [input.key]);
      if (row?.owner_id !== held.ownerId)
        throw new SignerError(
          'ledger',
          `SQLite ledger: the lock on key ${input.key} was lost (its lease ran out and another process took it over); nothing was written or sent, retry`,
        );
      return this.appendInTx(input);
    });
  }

  /**
   * The gate in one BEGIN IMMEDIATE transaction. Holding the file's write lock keeps every other writer, in this
   * process or another, out from the reads to the commit, so no lock row is taken. It leaves the gate to the lock
   * (null) when the key's lock is held here or has a row in key_locks (whoever's, even a dead holder's: the lock
   * path takes that over), or when the head has moved past what this handle's usage books hold.
   */
  async reserveAtOnce<R>(
    request: ReserveRequest,
    decide: (view: ReserveView) => ReserveDecision<R>,
  ): Promise<R | null> {
    const { key, now } = request;
    const decided = await this.write(
      'cannot append an audit entry',
      (): { result: R } | null => {
        if (this.mutex.isHeld(key) || this.q.get(LOCK_OWNER, [key])) return null;
        const book = this.usageBooks.currentAt(key, this.headNow().seq, now);
        if (!book) return null;
        const halt = this.q.get(SQL.getHalt, [key]);
        const { intent, result } = decide({
          usage: book.usage(now, request.dailyCap),
          signatureInFlight: request.signature !== null && book.inFlight(request.signature),
          halt: halt ? rowToHalt(halt) : null,
        });
        if (intent) {
          validateEntryInput(intent);
          this.appendInTx(intent);
        }
        return { result };
      },
      { syncIfAppended: true },
    );
    return decided === null ? null : decided.result;
  }

  async keyUsage(key: string, now: number, dailyCap: number): Promise<Usage> {
    return await this.usageBooks.usage(key, now, dailyCap);
  }

  async signatureInFlight(key: string, signature: string): Promise<boolean> {
    return await this.usageBooks.inFlight(key, signature, nowSeconds());
  }

  async signEntriesForKey(key: string, since: number): Promise<AuditEntry[]> {
    return await this.run('cannot read audit entries', () =>
      this.q.all(SQL.signEntriesForKey, [key, since]).map(rowToEntry),
    );
  }

  async lockKey(key: string, signal?: AbortSignal): Promise<KeyLock> {
    const releaseLocal = await this.mutex.acquire(key, signal);
    let held: HeldRow;
    try {
      this.checkOpen();
      held = await this.locks.acquire(key, signal);
      this.heldRows.set(key, held);
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
        this.heldRows.delete(key);
        try {
          if (!this.closed) await this.locks.release(key, held.ownerId);
        } catch (e) {
          // The row stays behind with our pid; it is taken over once this process exits. Still free local waiters.
          throw lockError(`cannot release the lock on key ${key}`, e);
        } finally {
          releaseLocal();
        }
      },
    };
  }

  async keyLocks(): Promise<KeyLockInfo[]> {
    this.checkOpen();
    return this.locks.list().catch((e: unknown) => Promise.reject(lockError('cannot read the key locks', e)));
  }

  async clearKeyLock(key: string, opts: { force: boolean }): Promise<ClearLockResult> {
    this.checkOpen();
    return this.locks
      .clear(key, opts.force)
      .catch((e: unknown) => Promise.reject(lockError(`cannot clear the lock on key ${key}`, e)));
  }

  private checkOpen(): void {
    if (this.closed) throw new SignerError('ledger', 'SQLite ledger: the ledger is closed');
  }

  async getHalt(key: string): Promise<HaltRecord | null> {
    return await this.run('cannot read halts', () => {
      const row = this.q.get(SQL.getHalt, [key]);
      return row ? rowToHalt(row) : null;
    });
  }

  async listHalts(): Promise<HaltRecord[]> {
    return await this.run('cannot read halts', () => this.q.all(SQL.listHalts).map(rowToHalt));
  }

  async halt(rec: HaltRecord): Promise<HaltRecord> {
    const bounded = { ...rec, reason: boundSummary(rec.reason) };
    validateEntryInput(haltEntry(bounded));
    return await this.write('cannot record the halt', (): HaltRecord => {
      const existing = this.q.get(SQL.getHalt, [rec.key]);
      if (existing) return rowToHalt(existing);
      this.q.run(SQL.insertHalt, haltRowValues(bounded));
      this.appendInTx(haltEntry(bounded));
      return bounded;
    });
  }

  async resume(key: string, by: string, ts: number): Promise<boolean> {
    return await this.write('cannot record the resume', (): boolean => {
      const lifted = this.q.get(SQL.deleteHalt, [key]);
      if (!lifted) return false;
      const entry = resumeEntry(key, by, ts, rowToHalt(lifted));
      validateEntryInput(entry);
      this.appendInTx(entry);
      return true;
    });
  }

  async createApproval(req: ApprovalRequest): Promise<ApprovalRecord> {
    const bounded = { ...req, summary: boundSummary(req.summary) };
    return await this.write('cannot record the approval request', () => this.insertApprovalInTx(bounded));
  }

  /** Inside a write transaction: a new request under a fresh id. */
  private insertApprovalInTx(req: ApprovalRequest): ApprovalRecord {
    // 40 random bits: a collision is rare; draw again a few times.
    for (let attempt = 0; attempt < 6; attempt++) {
      const row = this.q.get(SQL.insertApproval, approvalRowValues(newApprovalId(), req));
      if (row) return rowToApproval(row);
    }
    throw new SignerError('ledger', 'SQLite ledger: could not draw a free approval id');
  }

  /** BEGIN IMMEDIATE holds the file, so two processes asking for one payload never both find none and insert. */
  async requestApproval(
    req: ApprovalRequest & { waiter: string },
  ): Promise<{ record: ApprovalRecord; joined: boolean }> {
    const bounded = { ...req, summary: boundSummary(req.summary) };
    return await this.write('cannot record the approval request', () => {
      const row = this.q.get(SQL.openForPayload, [req.key, req.payload_hash, req.ts]);
      if (!row) return { record: this.insertApprovalInTx(bounded), joined: false };
      const found = rowToApproval(row);
      this.q.run(SQL.reopenFor, [req.waiter, found.id]);
      return {
        record: { ...found, waiter: req.waiter, status: 'pending', decided_by: null, decided_at: null },
        joined: true,
      };
    });
  }

  async getApproval(id: string): Promise<ApprovalRecord | null> {
    return await this.run('cannot read approvals', () => {
      const row = this.q.get(SQL.getApproval, [normaliseApprovalId(id)]);
      return row ? rowToApproval(row) : null;
    });
  }

  async listApprovals(filter?: { status?: ApprovalStatus }): Promise<ApprovalRecord[]> {
    return await this.run('cannot read approvals', () =>
      (filter?.status ? this.q.all(SQL.listApprovalsByStatus, [filter.status]) : this.q.all(SQL.listApprovals)).map(
        rowToApproval,
      ),
    );
  }

  async decideApproval(
    id: string,
    decision: ApprovalDecision,
    by: string,
    ts: number,
    credential: string | null = null,
    voters: readonly string[] | null = null,
  ): Promise<ApprovalRecord> {
    return await this.write('cannot record the decision', () =>
      this.decideInTx(id, (rec) => applyDecision(rec, decision, by, ts, credential, this.electorateInTx(voters))),
    );
  }

  async recountApproval(id: string, voters: readonly string[] | null, ts: number): Promise<ApprovalRecord> {
    return await this.write('cannot record the decision', () =>
      this.decideInTx(id, (rec) => recountDecision(rec, this.electorateInTx(voters), ts)),
    );
  }

  /** Inside a transaction: whose votes count, with the revocations as they stand in it. */
  private electorateInTx(voters: readonly string[] | null): Electorate {
    return electorate(voters, this.q.all(OP.listStandings).map(rowToStanding));
  }

  async leaveApproval(id: string, waiter: string, ts: number): Promise<ApprovalRecord> {
    return await this.write('cannot record the decision', () =>
      this.decideInTx(id, (rec) =>
        rec.waiter === null || rec.waiter === waiter
          ? applyDecision(rec, 'abandoned', 'signer', ts, null, electorate(null, []))
          : { record: rec, changed: false },
      ),
    );
  }

  /** Inside a write transaction: reads the request, decides on it, writes it back if it changed. */
  private decideInTx(
    id: string,
    decide: (rec: ApprovalRecord) => { record: ApprovalRecord; changed: boolean },
  ): ApprovalRecord {
    const row = this.q.get(SQL.getApprovalForDecision, [normaliseApprovalId(id)]);
    if (!row) throw new SignerError('request_invalid', `no approval request with id ${id}`);
    const { record, changed } = decide(rowToApproval(row));
    if (changed) this.q.run(SQL.decideApproval, decisionRowValues(record));
    return record;
  }

  async enqueueNotifications(rows: readonly NotificationInput[]): Promise<void> {
    if (rows.length === 0) return;
    await this.write('cannot record notifications', () => {
      for (const n of rows) this.q.run(OUTBOX.insert, notificationRowValues(n));
    });
  }

  async claimNotifications(owner: string, now: number, leaseMs: number, limit: number): Promise<NotificationRecord[]> {
    return await this.write('cannot claim notifications', () =>
      this.q.all(OUTBOX.claim, [owner, now + leaseMs, now, limit]).map(rowToNotification),
    );
  }

  async settleNotification(id: string, owner: string, state: NotificationSettlement): Promise<boolean> {
    return await this.write(
      'cannot record a delivery',
      () => this.q.run(OUTBOX.settle, settlementRowValues(id, owner, state)) === 1,
    );
  }

  async listNotifications(opts: { limit: number; status?: NotificationStatus }): Promise<NotificationRecord[]> {
    const limit = Math.max(0, Math.floor(opts.limit));
    return await this.run('cannot read notifications', () =>
      (opts.status ? this.q.all(OUTBOX.listByStatus, [opts.status, limit]) : this.q.all(OUTBOX.list, [limit])).map(
        rowToNotification,
      ),
    );
  }

  async notificationCounts(): Promise<Record<NotificationStatus, number>> {
    return await this.run('cannot read notifications', () => rowsToCounts(this.q.all(OUTBOX.counts)));
  }

  async pruneNotifications(before: number): Promise<number> {
    return await this.write('cannot prune notifications', () => this.q.run(OUTBOX.prune, [before]));
  }

  async createEnrollment(rec: Omit<EnrollmentRecord, 'used_at'>): Promise<void> {
    await this.run('cannot record the enrollment link', () => {
      this.q.run(OP.insertEnrollment, [rec.token_hash, rec.operator, rec.created_at, rec.expires_at]);
    });
  }

  async getEnrollment(tokenHash: string): Promise<EnrollmentRecord | null> {
    return await this.run('cannot read enrollment links', () => {
      const row = this.q.get(OP.getEnrollment, [tokenHash]);
      return row ? rowToEnrollment(row) : null;
    });
  }

  async completeEnrollment(tokenHash: string, now: number, passkey: PasskeyRecord): Promise<boolean> {
    return await this.write('cannot record the passkey', (): boolean => {
      if (!this.q.get(OP.useEnrollment, [tokenHash, now])) return false;
      this.q.run(OP.insertPasskey, passkeyRowValues(passkey));
      this.q.run(OP.reinstate, [passkey.operator, now]);
      return true;
    });
  }

  async listPasskeys(operator?: string): Promise<PasskeyRecord[]> {
    return await this.run('cannot read passkeys', () =>
      (operator === undefined ? this.q.all(OP.listPasskeys) : this.q.all(OP.listPasskeysOf, [operator])).map(
        rowToPasskey,
      ),
    );
  }

  async getPasskey(credentialId: string): Promise<PasskeyRecord | null> {
    return await this.run('cannot read passkeys', () => {
      const row = this.q.get(OP.getPasskey, [credentialId]);
      return row ? rowToPasskey(row) : null;
    });
  }

  async touchPasskey(credentialId: string, counter: number, ts: number): Promise<void> {
    await this.run('cannot record the passkey use', () => {
      this.q.run(OP.touchPasskey, [credentialId, counter, ts]);
    });
  }

  async revokeOperator(operator: string, ts: number): Promise<Revocation> {
    return await this.write('cannot revoke the operator', (): Revocation => {
      const passkeys = this.q.all(OP.deletePasskeysOf, [operator]).length;
      this.q.run(OP.deleteOpenEnrollmentsOf, [operator]);
      const sessions = this.q.all(OP.endSessionsOf, [operator]).length;
      this.q.run(OP.revoke, [operator, ts]);
      return { passkeys, sessions };
    });
  }

  async operatorStandings(): Promise<OperatorStanding[]> {
    return await this.run('cannot read revocations', () => this.q.all(OP.listStandings).map(rowToStanding));
  }

  async openSession(rec: SessionRecord, now: number): Promise<void> {
    await this.write('cannot record the login', () => {
      this.q.run(OP.purgeSessions, [now]);
      this.q.run(OP.insertSession, sessionRowValues(rec));
    });
  }

  async getSession(idHash: string, now: number): Promise<SessionRecord | null> {
    return await this.run('cannot read sessions', () => {
      const row = this.q.get(OP.getSession, [idHash, now]);
      return row ? rowToSession(row) : null;
    });
  }

  async endSession(idHash: string): Promise<void> {
    await this.run('cannot end the session', () => {
      this.q.run(OP.endSession, [idHash]);
    });
  }

  async endSessionsOf(operator: string): Promise<number> {
    return await this.write('cannot end sessions', () => this.q.all(OP.endSessionsOf, [operator]).length);
  }

  async putNonce(rec: NonceRecord, now: number): Promise<void> {
    await this.write('cannot record the nonce', () => {
      this.q.run(OP.purgeNonces, [now]);
      this.q.run(OP.insertNonce, nonceRowValues(rec));
    });
  }

  async takeNonce(nonce: string, purpose: NoncePurpose, now: number): Promise<NonceRecord | null> {
    return await this.run('cannot take the nonce', () => {
      const row = this.q.get(OP.takeNonce, [nonce, purpose, now]);
      return row ? rowToNonce(row) : null;
    });
  }

  async settingOrInit(name: string, proposed: string): Promise<string> {
    return await this.write('cannot read the console settings', (): string => {
      this.q.run(OP.initSetting, [name, proposed]);
      const row = this.q.get(OP.getSetting, [name]);
      return settingValue(row) ?? proposed;
    });
  }

  async verify(): Promise<VerifyResult> {
    // The head and the halts from one snapshot; the entries up to that head do not change (append-only).
    const { head, halts } = await this.run('cannot read the head record', () =>
      this.db.transaction(() => ({ head: this.headNow(), halts: this.q.all(SQL.listHalts).map(rowToHalt) }))(),
    );
    return verifyAgainstHead(this.entriesThrough(head.seq), head, halts);
  }

  async head(): Promise<ChainHead> {
    return await this.run('cannot read the head record', () => this.headNow());
  }

  async tail(n: number): Promise<AuditEntry[]> {
    const limit = Math.max(0, Math.floor(n));
    return await this.run('cannot read audit entries', () => this.q.all(SQL.tail, [limit]).map(rowToEntry).reverse());
  }

  entries(): AsyncIterable<AuditEntry> {
    return this.entriesThrough(Number.MAX_SAFE_INTEGER);
  }

  /** Pages through the chain up to `last`, so a long walk never holds a statement open across awaits. */
  private async *entriesThrough(last: number): AsyncIterable<AuditEntry> {
    let after = 0;
    for (;;) {
      const rows = await this.run('cannot read audit entries', () => this.q.all(SQL.page, [after, last, PAGE]));
      for (const r of rows) yield rowToEntry(r);
      const lastRow = rows[rows.length - 1];
      if (rows.length < PAGE || !lastRow) return;
      after = Number(lastRow.seq);
    }
  }

  async ping(): Promise<void> {
    await this.run('not reachable', () => {
      this.q.get('SELECT 1');
    });
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    try {
      for (const [key, held] of this.heldRows) {
        held.stopRenewing();
        try {
          this.locks.releaseNow(key, held.ownerId);
        } catch {
          // The file is busy: the row stays until this process is gone or its lease runs out, then it is stale.
        }
      }
      this.heldRows.clear();
      this.lockDb.close();
      this.db.close();
      return this.walSync.close().catch((e: unknown) => Promise.reject(ledgerError('cannot close', e)));
    } catch (e) {
      return Promise.reject(ledgerError('cannot close', e));
    }
  }
}

/** Applies pending migrations in one IMMEDIATE transaction, so two processes opening a new file at once are safe. */
function migrate(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
  db.transaction(() => {
    const row = db.prepare<[], { version: number }>('SELECT version FROM schema_version').get();
    const current = row?.version ?? 0;
    const known = SQLITE_MIGRATIONS.length;
    if (current > known) throw schemaTooNew('SQLite', current, known);
    for (const m of SQLITE_MIGRATIONS.slice(current)) db.exec(m);
    if (row === undefined) db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(known);
    else if (current !== known) db.prepare('UPDATE schema_version SET version = ?').run(known);
  }).immediate();
}
