import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { LedgerConfig } from '../../src/config/types';
import { openLedger } from '../../src/ledger/open';
import { openSqliteLedger, type SqliteLedgerOptions } from '../../src/ledger/sqlite';
import type { Ledger } from '../../src/ledger/types';
import { ledgerContract, type StoreUnderTest } from './contract';
import { signInput, matching } from './helpers';
import { stillPending, until } from '../support/async';
import { processContract } from './process-contract';
import { releaseLedgerContract } from './release-ledger';
import { budgetIndexContract } from './budget-index';
import { sqliteDialect } from '../../src/ledger/sql/dialect';
import { all, stepSync, type Work } from '../../src/ledger/sql/driver';
import { SQLITE_MIGRATIONS } from '../../src/ledger/sql/migrations';
import type { Row } from '../../src/ledger/sql/rows';
import { execPrepared } from '../../src/ledger/sqlite-driver';
import { RACE_AMOUNT, RACE_CAP, RACE_KEY, SIGN_STEPS, raceWithLostLock } from './lock-race';
import { spentLamports } from '../../src/signer/policy/rules/daily-cap';

const FAST = { sqlite: { lockPollMs: 5 } };

/** Opens the file on a connection of its own, as another program would, runs fn and closes it. */
function behindTheBack(file: string, fn: (db: Database.Database) => unknown): Promise<void> {
  const db = new Database(file);
  try {
    fn(db);
    return Promise.resolve();
  } finally {
    db.close();
  }
}

async function sqliteStore(): Promise<StoreUnderTest & { dir: string; file: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'ledger-sqlite-'));
  const file = path.join(dir, 'state', 'ledger.db');
  const cfg: LedgerConfig = { store: 'sqlite', path: file };
  const ledger = await openLedger(cfg, FAST);
  return {
    dir,
    file,
    ledger,
    reopen: () => openLedger(cfg, FAST),
    tamperTs: (line, ts) =>
      behindTheBack(file, (db) => db.prepare('UPDATE entries SET ts = ? WHERE seq = ?').run(ts, line)),
    exec: (sql) => behindTheBack(file, (db) => db.exec(sql)),
    dispose: async () => {
      await ledger.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

ledgerContract('SQLite', sqliteStore);

describe('SQLite store specifics', () => {
  let s: Awaited<ReturnType<typeof sqliteStore>>;
  beforeEach(async () => {
    s = await sqliteStore();
  });
  afterEach(() => s.dispose());

  it('creates its folder 0700 and its file 0600, in WAL mode, at the current schema version', () => {
    expect(statSync(path.dirname(s.file)).mode & 0o777).toBe(0o700);
    expect(statSync(s.file).mode & 0o777).toBe(0o600);
    const db = new Database(s.file, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.prepare('SELECT version FROM schema_version').get()).toEqual({ version: 19 }); // 1: tables, 2: usage indexes, 3: head record and lock leases, 4: token figures and approval messages, 5: approval message descriptions, 6: approvals by quorum, 7: the webhook outbox, 8: the operator console, 9: no unread entry indexes, 10: console sessions and revocations, 11: intents' watch columns, 12: intents' lamport credits, 13: intents' dollar values, 14: the prices they were valued at, 15: intents' budgeted credential blocks, 16: approvals' dollar values, 17: credential revocations, 18: intents by budgeted credential block, 19: treasury baselines
    db.close();
  });

  it('reopening an existing file keeps its chain and schema version', async () => {
    await s.ledger.append(signInput({ ts: 1 }));
    const again = await openLedger({ store: 'sqlite', path: s.file });
    expect(await again.verify()).toEqual({ ok: true, entries: 1 });
    await again.close();
  });

  it('refuses a file whose schema is newer than this signer, with an actionable ledger error', async () => {
    const db = new Database(s.file);
    db.prepare('UPDATE schema_version SET version = 99').run();
    db.close();
    await expect(openSqliteLedger(s.file)).rejects.toThrow(/newer than this signer understands/);
  });

  it('reports an unreadable file as a ledger error', async () => {
    await expect(openLedger({ store: 'sqlite', path: '/proc/version/ledger.db' })).rejects.toMatchObject({
      code: 'ledger',
    });
  });
});

processContract(
  {
    name: 'SQLite',
    tag: 'sqlite',
    create: () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'ledger-sqlite-x-'));
      const cfg: LedgerConfig = { store: 'sqlite', path: path.join(dir, 'ledger.db') };
      const remove = () => {
        rmSync(dir, { recursive: true, force: true });
        return Promise.resolve();
      };
      return Promise.resolve({ cfg, remove });
    },
    opts: FAST,
    // Each commit is on disk when its append resolves: nothing is left in flight.
    settled: () => Promise.resolve(),
    migrationKillDelaysMs: [0, 5, 15, 30],
  },
  ({ open, worker }) => {
    it('a lock taken in this process keeps another process waiting until released', async () => {
      const ledger = await open();
      const held = await ledger.lockKey('game');
      const w = worker(['lock', 'game']);
      await w.waitFor((l) => l === 'ready');
      await new Promise((r) => setTimeout(r, 300));
      expect(w.lines).not.toContain('locked');
      await held.release();
      await w.waitFor((l) => l === 'locked');
    });
  },
);

releaseLedgerContract(
  'SQLite',
  () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ledger-sqlite-release-'));
    const file = path.join(dir, 'ledger.db');
    const db = new Database(file);
    db.exec(readFileSync(path.join(__dirname, 'fixtures/sqlite-release-ledger.sql'), 'utf8'));
    db.close();
    const remove = () => {
      rmSync(dir, { recursive: true, force: true });
      return Promise.resolve();
    };
    return Promise.resolve({ cfg: { store: 'sqlite', path: file }, remove });
  },
  FAST,
);

budgetIndexContract({
  name: 'SQLite',
  dialect: sqliteDialect,
  migrations: SQLITE_MIGRATIONS,
  opts: FAST,
  create: (version) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ledger-sqlite-index-'));
    const file = path.join(dir, 'ledger.db');
    const runOn = <T>(db: Database.Database, work: Work<T>) =>
      stepSync(work, (st) => execPrepared(db.prepare<[Record<string, unknown>], Row>(st.sql), st));
    const db = new Database(file);
    db.exec('CREATE TABLE schema_version (version INTEGER NOT NULL)');
    for (const m of SQLITE_MIGRATIONS.slice(0, version)) {
      if (typeof m === 'string') db.exec(m);
      else runOn(db, m());
    }
    db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(version);
    db.close();
    return Promise.resolve({
      cfg: { store: 'sqlite', path: file },
      run: (work) => {
        const conn = new Database(file);
        try {
          return Promise.resolve(runOn(conn, work()));
        } finally {
          conn.close();
        }
      },
      remove: () => {
        rmSync(dir, { recursive: true, force: true });
        return Promise.resolve();
      },
    });
  },
  unboundedReads: function* (sql, values) {
    const steps = (yield* all(`EXPLAIN QUERY PLAN ${sql}`, values)).map((r) => String(r.detail));
    // SEARCH t USING … (col=? …) or (col>? …) starts at a key (the index's first column comes first); a SCAN, or a
    // SEARCH bounded above alone, reads from the start. The materialized intents (a CTE) are read whole, as they
    // should be.
    return steps.filter(
      (step) =>
        /^(SCAN|SEARCH) /.test(step) &&
        !/^(SCAN|SEARCH) intents\b/.test(step) &&
        !/^SEARCH \S+ USING .*\(\w+(=|>|>=)\?/.test(step),
    );
  },
});

describe('SQLite: a ledger written by schema version 2 (before the head record and lock leases)', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'ledger-sqlite-v2-'));
    file = path.join(dir, 'ledger.db');
    const db = new Database(file);
    db.exec(readFileSync(path.join(__dirname, 'fixtures/sqlite-schema-v2.sql'), 'utf8'));
    db.close();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('opens, migrates to the current version with the head seeded from the chain, verifies, and keeps working', async () => {
    const ledger = await openLedger({ store: 'sqlite', path: file }, FAST);
    try {
      const before = await ledger.tail(10);
      expect(before).toHaveLength(5);
      expect(await ledger.head()).toEqual({ seq: 5, hash: before[4]!.hash });
      expect(await ledger.verify()).toEqual({ ok: true, entries: 5 });
      expect(await ledger.getHalt('game')).toMatchObject({ reason: 'agent looping', by: 'token:bot' });
      const [pending] = await ledger.listApprovals({ status: 'pending' });
      expect(pending?.message).toBeNull(); // a transaction's request, from before the column
      // From before quorums: one vote of anyone decides it, as it did.
      expect(pending).toMatchObject({ required: 1, approvers: null, votes: [], waiter: null });
      const next = await ledger.append(signInput({ ts: 1_700_000_010 }));
      expect(next.prev).toBe(before[4]!.hash);
      expect(await ledger.head()).toEqual({ seq: 6, hash: next.hash });
      expect(await ledger.verify()).toEqual({ ok: true, entries: 6 });
      const db = new Database(file, { readonly: true });
      expect(db.prepare('SELECT version FROM schema_version').get()).toEqual({ version: 19 });
      db.close();
    } finally {
      await ledger.close();
    }
  });

  it("an older signer's lock row on another host has no lease: it is listed, waited on, and cleared by an operator", async () => {
    const ledger = await openLedger({ store: 'sqlite', path: file }, FAST);
    try {
      expect(await ledger.keyLocks([])).toEqual([
        {
          key: 'wallet',
          holder: 'crashed-host/4242',
          acquired_at_ms: 1_700_000_006_000,
          lease_until_ms: null,
          state: 'held',
        },
      ]);
      await expect(ledger.lockKey('wallet', AbortSignal.timeout(300))).rejects.toMatchObject({ code: 'cancelled' });
      expect(await ledger.clearKeyLock('wallet', { force: false })).toBe('live');
      expect(await ledger.clearKeyLock('wallet', { force: true })).toBe('cleared');
      expect(await ledger.clearKeyLock('wallet', { force: true })).toBe('not held');
      await (await ledger.lockKey('wallet')).release();
    } finally {
      await ledger.close();
    }
  });
});

describe('SQLite key lock leases', () => {
  let s: Awaited<ReturnType<typeof sqliteStore>>;
  const others: Ledger[] = [];
  const open = async (opts: SqliteLedgerOptions) => {
    const l = await openLedger({ store: 'sqlite', path: s.file }, { sqlite: { lockPollMs: 5, ...opts } });
    others.push(l);
    return l;
  };
  beforeEach(async () => {
    s = await sqliteStore();
  });
  afterEach(async () => {
    for (const l of others.splice(0)) await l.close();
    await s.dispose();
  });

  it('a holder on another host that stopped renewing is taken over once its lease runs out, not before', async () => {
    const row = (leaseUntil: number) =>
      s.exec(
        `INSERT OR REPLACE INTO key_locks (key, owner_id, host, pid, start, acquired_at, lease_until_ms)
         VALUES ('game', 'gone', 'other-host', 1, NULL, 0, ${leaseUntil})`,
      );
    const leaseUntil = Date.now() + 400;
    await row(leaseUntil);
    const lock = await s.ledger.lockKey('game');
    // Taken once the lease ran out, not before: measured against the lease itself, so a slow insert of the row on
    // a loaded machine (which may leave less than 400 ms of lease) cannot fail it.
    expect(Date.now()).toBeGreaterThanOrEqual(leaseUntil);
    expect((await s.ledger.keyLocks([]))[0]).toMatchObject({ key: 'game', state: 'held' });
    await lock.release();
    await row(Date.now() - 1);
    expect((await s.ledger.keyLocks([]))[0]).toMatchObject({ key: 'game', holder: 'other-host/1', state: 'stale' });
    expect(await s.ledger.clearKeyLock('game', { force: false })).toBe('cleared');
  });

  it('a live holder renews its lease: a lock held for many lease periods is never taken over', async () => {
    // A lease long enough that a loaded machine's pauses (up to a second) do not run it out between two renewals.
    const LEASE = 1_500;
    const a = await open({ lockLeaseMs: LEASE });
    const b = await open({ lockLeaseMs: LEASE });
    const held = await a.lockKey('game');
    const leaseNow = async () => (await b.keyLocks([]))[0]!.lease_until_ms!;
    const first = await leaseNow();
    const giveUp = new AbortController();
    const waiting = b.lockKey('game', giveUp.signal);
    // B waits while A renews its lease past two whole lease periods; then B gives up, the lock never free.
    await until(async () => (await leaseNow()) >= first + 2 * LEASE, "A's lease renewed past two periods");
    expect(await stillPending(waiting, 0)).toBe(true);
    giveUp.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'cancelled' });
    expect((await b.keyLocks([]))[0]).toMatchObject({ state: 'held' });
    await held.release();
    await (await b.lockKey('game')).release();
  });

  it.each(SIGN_STEPS)(
    'a lease taken over after "%s" while another process races: the cap is never passed',
    async (step) => {
      const a = await open({});
      const b = await open({});
      // The holder stalls past its lease (simulated by running the lease out behind its back); B takes over.
      const race = await raceWithLostLock(a, b, step, () =>
        s.exec(`UPDATE key_locks SET lease_until_ms = ${Date.now() - 1} WHERE key = '${RACE_KEY}'`),
      );
      expect(race.sent.length * RACE_AMOUNT).toBeLessThanOrEqual(RACE_CAP);
      expect(race.sent).toHaveLength(1);
      if (step === 'usage read' || step === 'cap passed') expect(race.a).toBe('lock lost');
      expect(spentLamports(await a.keyUsage(RACE_KEY, 1_700_000_000), RACE_CAP)).toBeLessThanOrEqual(RACE_CAP);
      expect((await b.verify()).ok).toBe(true);
    },
  );
});

describe('SQLite: waiting for another process to release the file never blocks the event loop', () => {
  let s: Awaited<ReturnType<typeof sqliteStore>>;
  beforeEach(async () => {
    s = await sqliteStore();
  });
  afterEach(() => s.dispose());

  /**
   * The bound on a timer's lateness while a ledger call waits `ms` for another connection: half the wait. A call
   * that blocked the event loop while it waited would hold every timer for the whole wait; one that waits off it
   * lets them run, late by at most what the machine's load adds, which half the wait leaves room for even on a
   * busy machine (and more, if timers run that late with nothing but a sleep in flight).
   */
  async function lateBound(ms: number): Promise<number> {
    const idle = await maxTimerDelay(() => new Promise((r) => setTimeout(r, ms)));
    return Math.max(ms / 2, idle.maxDelay + 25);
  }

  /** Largest gap between ticks of a 5 ms interval while `start()` runs (started after the timer). */
  async function maxTimerDelay<T>(start: () => Promise<T>): Promise<{ value: T; maxDelay: number }> {
    let last = performance.now();
    let maxDelay = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      maxDelay = Math.max(maxDelay, now - last - 5);
      last = now;
    }, 5);
    try {
      const value = await start();
      // The gap since the last tick counts too: a loop blocked until p settled never ticked at all.
      return { value, maxDelay: Math.max(maxDelay, performance.now() - last - 5) };
    } finally {
      clearInterval(timer);
    }
  }

  it('a write waits while another connection holds BEGIN IMMEDIATE, and timers keep firing meanwhile', async () => {
    const bound = await lateBound(600);
    const holder = new Database(s.file);
    holder.exec('BEGIN IMMEDIATE');
    setTimeout(() => holder.exec('COMMIT'), 600);
    const started = Date.now();
    const { value, maxDelay } = await maxTimerDelay(() => s.ledger.append(signInput({ ts: 1 })));
    holder.close();
    expect(Date.now() - started).toBeGreaterThanOrEqual(550); // it did wait for the holder
    expect(value.prev).toBe('0'.repeat(64));
    expect(maxDelay).toBeLessThan(bound);
    expect(await s.ledger.verify()).toEqual({ ok: true, entries: 1 });
  });

  it('gives up after the busy timeout with a ledger error that says why, without blocking meanwhile', async () => {
    const bound = await lateBound(300);
    const ledger = await openLedger({ store: 'sqlite', path: s.file }, { sqlite: { busyTimeoutMs: 300 } });
    const holder = new Database(s.file);
    holder.exec('BEGIN IMMEDIATE');
    try {
      const { value, maxDelay } = await maxTimerDelay(() =>
        ledger.append(signInput({ ts: 1 })).catch((e: unknown) => e),
      );
      expect(value).toMatchObject({
        code: 'ledger',
        message: matching(/locked by another process for 300 ms/),
      });
      expect(maxDelay).toBeLessThan(bound);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
      await ledger.close();
    }
  });

  it('a lock taken while another connection holds the file waits off the event loop too', async () => {
    const bound = await lateBound(300);
    const holder = new Database(s.file);
    holder.exec('BEGIN IMMEDIATE');
    setTimeout(() => holder.exec('COMMIT'), 300);
    const { value, maxDelay } = await maxTimerDelay(() => s.ledger.lockKey('game'));
    holder.close();
    expect(maxDelay).toBeLessThan(bound);
    await value.release();
  });
});
