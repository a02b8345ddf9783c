/**
 * The SQLite ledger store (better-sqlite3): the embedded default, one file shared by the service and CLI
 * processes on one host.
 *
 * Durability: WAL with synchronous=FULL, so a committed transaction is fsync'd before the call returns, and a
 * process killed at any instant leaves the last committed state (the chain always verifies).
 * Appends run in BEGIN IMMEDIATE transactions that read the chain head and insert the next entry, so appends
 * from several processes form one chain. better-sqlite3 is synchronous, so appends within one process are
 * already serialised by the event loop.
 *
 * The per-key lock is an in-process FIFO mutex plus a row in `key_locks` naming the holder (host, pid, start
 * time, random owner id). A waiter polls; a row whose holder process is dead is taken over.
 */
import Database from 'better-sqlite3';
import { SignerError, errorMessage } from '../util/errors';
import { entryRowValues, sealEntry, validateEntryInput, verifyEntries, GENESIS_PREV } from './chain';
import { newApprovalId, newOwnerId, normaliseApprovalId } from './ids';
import { decisionOutcome, haltEntry, resumeEntry } from './records';
import { holderAlive, selfIdentity, type ProcessIdentity } from './liveness';
import { KeyedMutex, cancelledError, sleep } from './mutex';
import { RATE_WINDOW_S, SPEND_WINDOW_S, type KeyUsage } from './limits';
import { USAGE_INDEXES, usageSql } from './usage-sql';
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

export interface SqliteLedgerOptions {
  /** How long a write waits for another process's write transaction (blocks this thread). Default 5000. */
  busyTimeoutMs?: number;
  /** How often a waiter re-checks a key lock held by another process. Default 20. */
  lockPollMs?: number;
}

/** Versioned migrations: index + 1 is the schema version it brings the file to. Never edit one that shipped. */
const MIGRATIONS: string[] = [
  `CREATE TABLE entries (
     seq INTEGER PRIMARY KEY,
     ts INTEGER NOT NULL,
     key TEXT NOT NULL,
     command TEXT NOT NULL,
     payload_hash TEXT NOT NULL,
     programs TEXT NOT NULL,
     summary TEXT NOT NULL,
     intent TEXT,
     outcome TEXT NOT NULL,
     detail TEXT,
     signature TEXT,
     slot INTEGER,
     balance_change INTEGER,
     prev TEXT NOT NULL,
     hash TEXT NOT NULL
   );
   CREATE INDEX entries_key_ts ON entries (key, ts);
   CREATE TABLE halts (key TEXT PRIMARY KEY, reason TEXT NOT NULL, by TEXT NOT NULL, ts INTEGER NOT NULL);
   CREATE TABLE approvals (
     id TEXT PRIMARY KEY,
     key TEXT NOT NULL,
     summary TEXT NOT NULL,
     payload_hash TEXT NOT NULL,
     balance_change INTEGER,
     fee INTEGER,
     compute_units INTEGER,
     requested_by TEXT NOT NULL,
     ts INTEGER NOT NULL,
     expires_at INTEGER NOT NULL,
     status TEXT NOT NULL,
     decided_by TEXT,
     decided_at INTEGER
   );
   CREATE INDEX approvals_status ON approvals (status, ts);
   CREATE TABLE key_locks (
     key TEXT PRIMARY KEY,
     owner_id TEXT NOT NULL,
     host TEXT NOT NULL,
     pid INTEGER NOT NULL,
     start TEXT,
     acquired_at INTEGER NOT NULL
   );`,
  USAGE_INDEXES.join(';\n'),
];

interface EntryRow {
  seq: number;
  ts: number;
  key: string;
  command: string;
  payload_hash: string;
  programs: string;
  summary: string;
  intent: string | null;
  outcome: string;
  detail: string | null;
  signature: string | null;
  slot: number | null;
  balance_change: number | null;
  prev: string;
  hash: string;
}

interface LockRow {
  owner_id: string;
  host: string;
  pid: number;
  start: string | null;
}

const ENTRY_COLUMNS =
  'seq, ts, key, command, payload_hash, programs, summary, intent, outcome, detail, signature, slot, balance_change, prev, hash';

/** A row back to an entry. `programs` is stored as JSON text; an unparseable value cannot verify anyway. */
export function rowToEntry(r: EntryRow): AuditEntry {
  let programs: string[];
  try {
    const p: unknown = JSON.parse(r.programs);
    programs = Array.isArray(p) ? p.map(String) : [];
  } catch {
    programs = [];
  }
  return {
    ts: r.ts,
    key: r.key,
    command: r.command as AuditEntry['command'],
    payload_hash: r.payload_hash,
    programs,
    summary: r.summary,
    intent: r.intent,
    outcome: r.outcome,
    detail: r.detail,
    signature: r.signature,
    slot: r.slot,
    balance_change: r.balance_change,
    prev: r.prev,
    hash: r.hash,
  };
}

function ledgerError(what: string, e: unknown): SignerError {
  if (e instanceof SignerError) return e;
  return new SignerError('ledger', `SQLite ledger: ${what}: ${errorMessage(e)}`, { cause: e });
}

export class SqliteLedger implements Ledger {
  readonly store = 'sqlite' as const;
  private readonly db: Database.Database;
  /**
   * Lock rows go through their own connection with synchronous=OFF: a lock needs exclusion, not durability
   * (after a crash its holder is dead and the row is taken over anyway), so taking and releasing a key's lock
   * costs no fsync. Audit entries keep synchronous=FULL on the main connection.
   */
  private readonly lockDb: Database.Database;
  private readonly mutex = new KeyedMutex();
  private readonly me: ProcessIdentity = selfIdentity();
  private readonly lockPollMs: number;
  private closed = false;
  /** Lock rows this instance holds (key → owner id), removed on close so no other process waits on them. */
  private readonly heldRows = new Map<string, string>();

  private readonly stmts: {
    head: Database.Statement<[], { seq: number; hash: string }>;
    insert: Database.Statement<unknown[]>;
    forKey: Database.Statement<[string, number], EntryRow>;
    usage: Database.Statement<
      [{ key: string; rate: number; since: number; cap: number }],
      { rate: number; finals: number; orphans: number }
    >;
    page: Database.Statement<[number, number], EntryRow>;
    tail: Database.Statement<[number], EntryRow>;
    getHalt: Database.Statement<[string], HaltRecord>;
    listHalts: Database.Statement<[], HaltRecord>;
    insertHalt: Database.Statement<[string, string, string, number]>;
    deleteHalt: Database.Statement<[string]>;
    getApproval: Database.Statement<[string], ApprovalRecord>;
    getLock: Database.Statement<[string], LockRow>;
    lockOwner: Database.Statement<[string], { owner_id: string }>;
    deleteLock: Database.Statement<[string, string]>;
    putLock: Database.Statement<[string, string, string, number, string | null, number]>;
  };

  private constructor(file: string, opts: SqliteLedgerOptions) {
    this.lockPollMs = opts.lockPollMs ?? 20;
    try {
      this.db = new Database(file);
      this.lockDb = new Database(file);
    } catch (e) {
      throw ledgerError(`cannot open ${file}`, e);
    }
    try {
      this.db.pragma(`busy_timeout = ${Math.max(0, Math.floor(opts.busyTimeoutMs ?? 5000))}`);
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = FULL');
      this.db.pragma('foreign_keys = ON');
      this.migrate();
      this.lockDb.pragma(`busy_timeout = ${Math.max(0, Math.floor(opts.busyTimeoutMs ?? 5000))}`);
      this.lockDb.pragma('synchronous = OFF');
      this.stmts = {
        head: this.db.prepare('SELECT seq, hash FROM entries ORDER BY seq DESC LIMIT 1'),
        insert: this.db.prepare(
          `INSERT INTO entries (${ENTRY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ),
        forKey: this.db.prepare(
          `SELECT ${ENTRY_COLUMNS} FROM entries WHERE key = ? AND command IN ('sign', 'sign-intent') AND ts >= ? ORDER BY seq`,
        ),
        usage: this.db.prepare(usageSql('sqlite', (n) => ['@key', '@rate', '@since', '@cap'][n - 1]!)),
        page: this.db.prepare(`SELECT ${ENTRY_COLUMNS} FROM entries WHERE seq > ? ORDER BY seq LIMIT ?`),
        tail: this.db.prepare(`SELECT ${ENTRY_COLUMNS} FROM entries ORDER BY seq DESC LIMIT ?`),
        getHalt: this.db.prepare('SELECT key, reason, by, ts FROM halts WHERE key = ?'),
        listHalts: this.db.prepare('SELECT key, reason, by, ts FROM halts ORDER BY key'),
        insertHalt: this.db.prepare('INSERT INTO halts (key, reason, by, ts) VALUES (?, ?, ?, ?)'),
        deleteHalt: this.db.prepare('DELETE FROM halts WHERE key = ?'),
        getApproval: this.db.prepare('SELECT * FROM approvals WHERE id = ?'),
        lockOwner: this.db.prepare('SELECT owner_id FROM key_locks WHERE key = ?'),
        getLock: this.lockDb.prepare('SELECT owner_id, host, pid, start FROM key_locks WHERE key = ?'),
        deleteLock: this.lockDb.prepare('DELETE FROM key_locks WHERE key = ? AND owner_id = ?'),
        putLock: this.lockDb.prepare(
          'INSERT OR REPLACE INTO key_locks (key, owner_id, host, pid, start, acquired_at) VALUES (?, ?, ?, ?, ?, ?)',
        ),
      };
    } catch (e) {
      try {
        this.lockDb.close();
        this.db.close();
      } catch {
        /* already failing */
      }
      throw ledgerError(`cannot open ${file}`, e);
    }
  }

  /** Opens (creating if needed) the ledger file. The caller creates the folder with the mode it wants. */
  static open(file: string, opts: SqliteLedgerOptions = {}): SqliteLedger {
    return new SqliteLedger(file, opts);
  }

  /** Applies pending migrations in one IMMEDIATE transaction, so two processes opening a new file at once are safe. */
  private migrate(): void {
    this.db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
    this.db
      .transaction(() => {
        const row = this.db.prepare('SELECT version FROM schema_version').get() as { version: number } | undefined;
        const current = row?.version ?? 0;
        if (current > MIGRATIONS.length)
          throw new SignerError(
            'ledger',
            `the ledger schema is version ${current}, newer than this signer understands (${MIGRATIONS.length}): upgrade the signer`,
          );
        for (let v = current; v < MIGRATIONS.length; v++) this.db.exec(MIGRATIONS[v]!);
        if (row === undefined)
          this.db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(MIGRATIONS.length);
        else if (current !== MIGRATIONS.length)
          this.db.prepare('UPDATE schema_version SET version = ?').run(MIGRATIONS.length);
      })
      .immediate();
  }

  private guard<T>(what: string, fn: () => T): T {
    if (this.closed) throw new SignerError('ledger', 'SQLite ledger: the ledger is closed');
    try {
      return fn();
    } catch (e) {
      throw ledgerError(what, e);
    }
  }

  /** Inside a transaction: seals the input onto the current head and inserts it. */
  private appendInTx(input: AuditEntryInput): AuditEntry {
    const head = this.stmts.head.get();
    const entry = sealEntry(input, head?.hash ?? GENESIS_PREV);
    this.stmts.insert.run(...entryRowValues((head?.seq ?? 0) + 1, entry));
    return entry;
  }

  async append(input: AuditEntryInput): Promise<AuditEntry> {
    validateEntryInput(input);
    return this.guard('cannot append an audit entry', () =>
      this.db.transaction(() => this.appendInTx(input)).immediate(),
    );
  }

  /**
   * The lock row is read inside the append's write transaction: a takeover by another process is itself a write,
   * so it either committed before (and this sees another owner and writes nothing) or waits until this commits
   * (and the new holder's usage read sees this entry).
   */
  async appendFenced(input: AuditEntryInput): Promise<AuditEntry> {
    validateEntryInput(input);
    const ownerId = this.heldRows.get(input.key);
    if (ownerId === undefined)
      throw new SignerError('internal', `a fenced append for key ${input.key} without holding its lock`);
    return this.guard('cannot append an audit entry', () =>
      this.db
        .transaction(() => {
          if (this.stmts.lockOwner.get(input.key)?.owner_id !== ownerId)
            throw new SignerError(
              'ledger',
              `SQLite ledger: the lock on key ${input.key} was taken over by another process; nothing was written or sent, retry`,
            );
          return this.appendInTx(input);
        })
        .immediate(),
    );
  }

  async keyUsage(key: string, now: number, dailyCap: number): Promise<KeyUsage> {
    return this.guard("cannot read the key's usage", () => {
      const row = this.stmts.usage.get({ key, rate: now - RATE_WINDOW_S, since: now - SPEND_WINDOW_S, cap: dailyCap })!;
      return { signsLastMinute: row.rate, spent24h: row.finals + row.orphans };
    });
  }

  async signEntriesForKey(key: string, since: number): Promise<AuditEntry[]> {
    return this.guard('cannot read audit entries', () => this.stmts.forKey.all(key, since).map(rowToEntry));
  }

  async lockKey(key: string, signal?: AbortSignal): Promise<KeyLock> {
    const releaseLocal = await this.mutex.acquire(key, signal);
    const ownerId = newOwnerId();
    try {
      await this.acquireRow(key, ownerId, signal);
      this.heldRows.set(key, ownerId);
    } catch (e) {
      releaseLocal();
      throw e;
    }
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        this.heldRows.delete(key);
        try {
          if (!this.closed) this.stmts.deleteLock.run(key, ownerId);
        } catch (e) {
          // The row stays behind with our pid; it is taken over once this process exits. Still free local waiters.
          throw ledgerError(`cannot release the lock on key ${key}`, e);
        } finally {
          releaseLocal();
        }
      },
    };
  }

  /** Polls until the lock row is ours: absent, or held by a process that no longer exists. */
  private async acquireRow(key: string, ownerId: string, signal?: AbortSignal): Promise<void> {
    const take = this.lockDb.transaction((): boolean => {
      const row = this.stmts.getLock.get(key);
      if (row && holderAlive({ host: row.host, pid: row.pid, start: row.start })) return false;
      this.stmts.putLock.run(key, ownerId, this.me.host, this.me.pid, this.me.start, Math.floor(Date.now() / 1000));
      return true;
    });
    for (;;) {
      if (signal?.aborted) throw cancelledError(key);
      // A cheap read first, so waiters do not queue for the write lock while the holder is alive.
      const row = this.guard('cannot read the key lock', () => this.stmts.getLock.get(key));
      const free = !row || !holderAlive({ host: row.host, pid: row.pid, start: row.start });
      if (free && this.guard(`cannot take the lock on key ${key}`, () => take.immediate())) return;
      await sleep(this.lockPollMs, signal, () => cancelledError(key));
    }
  }

  async getHalt(key: string): Promise<HaltRecord | null> {
    return this.guard('cannot read halts', () => this.stmts.getHalt.get(key) ?? null);
  }

  async listHalts(): Promise<HaltRecord[]> {
    return this.guard('cannot read halts', () => this.stmts.listHalts.all());
  }

  async halt(rec: HaltRecord): Promise<HaltRecord> {
    validateEntryInput(haltEntry(rec));
    return this.guard('cannot record the halt', () =>
      this.db
        .transaction((): HaltRecord => {
          const existing = this.stmts.getHalt.get(rec.key);
          if (existing) return existing;
          this.stmts.insertHalt.run(rec.key, rec.reason, rec.by, rec.ts);
          this.appendInTx(haltEntry(rec));
          return { key: rec.key, reason: rec.reason, by: rec.by, ts: rec.ts };
        })
        .immediate(),
    );
  }

  async resume(key: string, by: string, ts: number): Promise<boolean> {
    return this.guard('cannot record the resume', () =>
      this.db
        .transaction((): boolean => {
          const existing = this.stmts.getHalt.get(key);
          if (!existing) return false;
          const entry = resumeEntry(key, by, ts, existing);
          validateEntryInput(entry);
          this.stmts.deleteHalt.run(key);
          this.appendInTx(entry);
          return true;
        })
        .immediate(),
    );
  }

  async createApproval(req: ApprovalRequest): Promise<ApprovalRecord> {
    return this.guard('cannot record the approval request', () => {
      const insert = this.db.prepare(
        `INSERT INTO approvals (id, key, summary, payload_hash, balance_change, fee, compute_units, requested_by, ts,
           expires_at, status, decided_by, decided_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', NULL, NULL)`,
      );
      for (let attempt = 0; ; attempt++) {
        const id = newApprovalId();
        try {
          insert.run(
            id,
            req.key,
            req.summary,
            req.payload_hash,
            req.balance_change,
            req.fee,
            req.compute_units,
            req.requested_by,
            req.ts,
            req.expires_at,
          );
          return this.stmts.getApproval.get(id)!;
        } catch (e) {
          // 40 random bits: a collision is rare; retry a few times on the primary key only.
          const code = (e as { code?: string }).code;
          if (code !== 'SQLITE_CONSTRAINT_PRIMARYKEY' || attempt >= 5) throw e;
        }
      }
    });
  }

  async getApproval(id: string): Promise<ApprovalRecord | null> {
    return this.guard('cannot read approvals', () => this.stmts.getApproval.get(normaliseApprovalId(id)) ?? null);
  }

  async listApprovals(filter?: { status?: ApprovalStatus }): Promise<ApprovalRecord[]> {
    return this.guard('cannot read approvals', () =>
      filter?.status
        ? (this.db
            .prepare('SELECT * FROM approvals WHERE status = ? ORDER BY ts, id')
            .all(filter.status) as ApprovalRecord[])
        : (this.db.prepare('SELECT * FROM approvals ORDER BY ts, id').all() as ApprovalRecord[]),
    );
  }

  async decideApproval(
    id: string,
    decision: 'approved' | 'rejected' | 'expired',
    by: string,
    ts: number,
  ): Promise<ApprovalRecord> {
    const wanted = normaliseApprovalId(id);
    return this.guard('cannot record the decision', () =>
      this.db
        .transaction((): ApprovalRecord => {
          const rec = this.stmts.getApproval.get(wanted);
          if (!rec) throw new SignerError('request_invalid', `no approval request with id ${id}`);
          if (rec.status !== 'pending') return rec;
          const { status, decidedBy } = decisionOutcome(rec, decision, by, ts);
          this.db
            .prepare('UPDATE approvals SET status = ?, decided_by = ?, decided_at = ? WHERE id = ?')
            .run(status, decidedBy, ts, wanted);
          return { ...rec, status, decided_by: decidedBy, decided_at: ts };
        })
        .immediate(),
    );
  }

  async verify(): Promise<VerifyResult> {
    return verifyEntries(this.entries());
  }

  async tail(n: number): Promise<AuditEntry[]> {
    const limit = Math.max(0, Math.floor(n));
    return this.guard('cannot read audit entries', () => this.stmts.tail.all(limit).map(rowToEntry).reverse());
  }

  /** Pages through the chain, so a long walk never holds a statement open across awaits. */
  async *entries(): AsyncIterable<AuditEntry> {
    let after = 0;
    for (;;) {
      const rows = this.guard('cannot read audit entries', () => this.stmts.page.all(after, 1000));
      for (const r of rows) yield rowToEntry(r);
      if (rows.length < 1000) return;
      after = rows[rows.length - 1]!.seq;
    }
  }

  async ping(): Promise<void> {
    this.guard('not reachable', () => this.db.prepare('SELECT 1').get());
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      for (const [key, ownerId] of this.heldRows) this.stmts.deleteLock.run(key, ownerId);
      this.heldRows.clear();
      this.lockDb.close();
      this.db.close();
    } catch (e) {
      throw ledgerError('cannot close', e);
    }
  }
}
