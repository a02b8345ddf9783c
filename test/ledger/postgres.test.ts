/**
 * The PostgreSQL store on the machine's real server. Every test gets a database of its own, dropped after.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { LedgerConfig } from '../../src/config/types';
import { openLedger } from '../../src/ledger/open';
import type { Ledger } from '../../src/ledger/types';
import { ledgerContract, type StoreUnderTest } from './contract';
import { signInput, matching, containing } from './helpers';
import { stillPending } from '../support/async';
import {
  PG_HOST,
  PG_PORT,
  admin,
  createDatabase,
  dbUrl,
  dropDatabase,
  lockHolders,
  terminateLockHolders,
  waitForBackendsGone,
} from './pg';
import { RACE_AMOUNT, RACE_CAP, RACE_KEY, SIGN_STEPS, raceWithLostLock } from './lock-race';
import { processContract } from './process-contract';
import { releaseLedgerContract } from './release-ledger';
import { budgetIndexContract } from './budget-index';
import type { Client } from 'pg';
import { postgresDialect } from '../../src/ledger/sql/dialect';
import { all, run, stepAsync, type Work } from '../../src/ledger/sql/driver';
import { POSTGRES_MIGRATIONS } from '../../src/ledger/sql/migrations';
import type { Row } from '../../src/ledger/sql/rows';
import { TcpProxy } from './tcp-proxy';
import { spentLamports } from '../../src/signer/policy/rules/daily-cap';

const FAST = { postgres: { lockPollMs: 5, connectTimeoutMs: 1_000, failoverMs: 1_000 } };
const cfgFor = (name: string, port = PG_PORT): LedgerConfig => ({
  store: 'postgres',
  url: dbUrl(name, port),
  pool_size: 4,
});

async function pgStore(): Promise<StoreUnderTest> {
  const name = await createDatabase();
  const ledger = await openLedger(cfgFor(name), FAST);
  return {
    ledger,
    reopen: () => openLedger(cfgFor(name), FAST),
    tamperTs: (line, ts) =>
      admin(async (c) => {
        await c.query('UPDATE entries SET ts = $1 WHERE seq = $2', [ts, line]);
      }, dbUrl(name)),
    exec: (sql) =>
      admin(async (c) => {
        await c.query(sql);
      }, dbUrl(name)),
    dispose: async () => {
      await ledger.close();
      await dropDatabase(name);
    },
  };
}

ledgerContract('PostgreSQL', pgStore);

describe('PostgreSQL store specifics', () => {
  let name: string;
  const ledgers: Ledger[] = [];
  const open = async (cfg: LedgerConfig = cfgFor(name)) => {
    const l = await openLedger(cfg, FAST);
    ledgers.push(l);
    return l;
  };
  beforeEach(async () => {
    name = await createDatabase();
  });
  afterEach(async () => {
    for (const l of ledgers.splice(0)) await l.close();
    await dropDatabase(name);
  });

  it('replicas starting at once on a new database apply the migrations once', async () => {
    const all = await Promise.all(Array.from({ length: 5 }, () => open()));
    const rows = await admin((c) => c.query('SELECT version FROM schema_version'), dbUrl(name));
    expect(rows.rows).toEqual([{ version: 18 }]); // 1: tables, 2: usage indexes, 3: token figures and approval messages, 4: approval message descriptions, 5: approvals by quorum, 6: the webhook outbox, 7: the operator console, 8: no unread entry indexes, 9: console sessions and revocations, 10: intents' watch columns, 11: intents' lamport credits, 12: intents' dollar values, 13: the prices they were valued at, 14: intents' budgeted credential blocks, 15: approvals' dollar values, 16: credential revocations, 17: intents by budgeted credential block, 18: treasury baselines
    await Promise.all(all.map((l, i) => l.append(signInput({ ts: i }))));
    expect(await all[0]!.verify()).toEqual({ ok: true, entries: 5 });
  });

  it('takes its key lock as a server-side advisory lock on one connection held until release', async () => {
    const ledger = await open();
    const lock = await ledger.lockKey('game');
    expect(await lockHolders(name, 'game')).toHaveLength(1);
    await lock.release();
    expect(await lockHolders(name, 'game')).toHaveLength(0);
  });

  it('a lock whose connection the server kills is freed, and its holder can still release without error', async () => {
    const a = await open();
    const b = await open();
    const held = await a.lockKey('game');
    const waiting = b.lockKey('game');
    expect(await stillPending(waiting, 200)).toBe(true);
    const [pid] = await lockHolders(name, 'game');
    await admin((c) => c.query('SELECT pg_terminate_backend($1)', [pid]));
    await (await waiting).release();
    await held.release(); // the connection is gone: release discards it quietly
    const again = await a.lockKey('game');
    await again.release();
  });

  it("lists a replica's key lock by key name, and clears a live one only with force (its holder's fence then fails)", async () => {
    const a = await open();
    const b = await open();
    const lock = await a.lockKey('game');
    const [info, ...rest] = await b.keyLocks(['game', 'other']);
    expect(rest).toEqual([]);
    expect(info).toMatchObject({ key: 'game', state: 'held', lease_until_ms: null });
    expect(info!.holder).toMatch(/^sa-forge-signer@.+\/\d+ \(backend \d+\)$/);
    expect(await b.clearKeyLock('game', { force: false })).toBe('live');
    expect(await b.clearKeyLock('other', { force: true })).toBe('not held');
    expect(await b.clearKeyLock('game', { force: true })).toBe('cleared');
    await expect(a.appendFenced(signInput({ key: 'game' }))).rejects.toMatchObject({
      code: 'ledger',
      message: matching(/the lock on key game was lost/),
    });
    await lock.release();
    expect(await b.keyLocks(['game'])).toEqual([]);
    expect(await a.verify()).toEqual({ ok: true, entries: 0 });
  });

  it('refuses a database whose schema is newer than this signer', async () => {
    await (await open()).close();
    await admin((c) => c.query('UPDATE schema_version SET version = 99'), dbUrl(name));
    await expect(openLedger(cfgFor(name), FAST)).rejects.toMatchObject({
      code: 'ledger',
      message: containing('newer than this signer understands'),
    });
  });

  describe('database down', () => {
    let proxy: TcpProxy;
    beforeEach(async () => {
      proxy = new TcpProxy({ host: PG_HOST, port: PG_PORT });
      await proxy.start();
    });
    afterEach(() => proxy.close());

    it('while the server is gone every operation fails with ledger_unavailable after the failover window, and it recovers without a restart', async () => {
      const ledger = await open(cfgFor(name, proxy.port));
      await ledger.append(signInput({ ts: 1 }));
      await proxy.refuse();
      const unavailable = { code: 'ledger_unavailable', message: matching(/ECONNREFUSED.*call again/) };
      await expect(ledger.append(signInput({ ts: 2 }))).rejects.toMatchObject(unavailable);
      await expect(ledger.ping()).rejects.toMatchObject({ code: 'ledger_unavailable' });
      await expect(ledger.lockKey('game')).rejects.toMatchObject(unavailable);
      await expect(ledger.getHalt('game')).rejects.toMatchObject(unavailable);
      await proxy.restore();
      await ledger.ping();
      await ledger.append(signInput({ ts: 3 }));
      const lock = await ledger.lockKey('game');
      await lock.release();
      expect(await ledger.verify()).toEqual({ ok: true, entries: 2 });
    });

    it('a server that accepts but never answers fails operations after the connect timeout', async () => {
      const ledger = await open(cfgFor(name, proxy.port));
      await ledger.append(signInput({ ts: 1 }));
      await proxy.blackhole();
      await expect(ledger.append(signInput({ ts: 2 }))).rejects.toMatchObject({
        code: 'ledger_unavailable',
        message: matching(/timeout/i),
      });
      await expect(ledger.lockKey('game')).rejects.toMatchObject({ code: 'ledger_unavailable' });
      await proxy.restore();
      await ledger.append(signInput({ ts: 3 }));
      expect(await ledger.verify()).toEqual({ ok: true, entries: 2 });
    });

    it('a connection cut while a key lock is held does not crash the process, and the lock is free again', async () => {
      const ledger = await open(cfgFor(name, proxy.port));
      const held = await ledger.lockKey('game');
      await proxy.refuse();
      await proxy.restore();
      await new Promise((r) => setTimeout(r, 50));
      await held.release(); // its connection is gone: release discards it quietly
      const again = await ledger.lockKey('game');
      expect(await lockHolders(name, 'game')).toHaveLength(1);
      await again.release();
    });

    it('opening against a database that is down fails with ledger_unavailable', async () => {
      await proxy.refuse();
      await expect(openLedger(cfgFor(name, proxy.port), FAST)).rejects.toMatchObject({ code: 'ledger_unavailable' });
    });
  });
});

processContract(
  {
    name: 'PostgreSQL',
    tag: 'postgres',
    create: async () => {
      const name = await createDatabase();
      return { name, cfg: cfgFor(name), remove: () => dropDatabase(name) };
    },
    opts: FAST,
    // The server may still be committing what the killed process sent last: let its backend finish.
    settled: (w, store) => waitForBackendsGone(store.name, w.child.pid!),
    migrationKillDelaysMs: [0, 30, 60, 90],
  },
  ({ open, worker, store }) => {
    it("a replica's key lock is freed when the server terminates its connection", async () => {
      const ledger = await open();
      const w = worker(['lock', 'game']);
      await w.waitFor((l) => l === 'locked');
      const mine = ledger.lockKey('game');
      expect(await stillPending(mine, 300)).toBe(true);
      const holders = await lockHolders(store().name, 'game');
      expect(holders).toHaveLength(1);
      await admin((c) => c.query('SELECT pg_terminate_backend($1)', [holders[0]]));
      await (await mine).release();
    });
  },
);

describe('PostgreSQL: a key lock lost in the middle of a sign', () => {
  let name: string;
  const ledgers: Ledger[] = [];
  beforeEach(async () => {
    name = await createDatabase();
  });
  afterEach(async () => {
    for (const l of ledgers.splice(0)) await l.close();
    await dropDatabase(name);
  });

  it.each(SIGN_STEPS)(
    'lock backend terminated after "%s" while another replica races: the cap is never passed',
    async (step) => {
      const a = await openLedger(cfgFor(name), FAST);
      const b = await openLedger(cfgFor(name), FAST);
      ledgers.push(a, b);
      const race = await raceWithLostLock(a, b, step, async () => {
        expect(await terminateLockHolders(name, RACE_KEY)).toBe(1);
      });
      expect(race.sent.length * RACE_AMOUNT).toBeLessThanOrEqual(RACE_CAP);
      expect(race.sent).toHaveLength(1); // one of them still signs: losing a lock never blocks the key
      if (step === 'usage read' || step === 'cap passed') expect(race.a).toBe('lock lost');
      expect(spentLamports(await a.keyUsage(RACE_KEY, 1_700_000_000), RACE_CAP)).toBeLessThanOrEqual(RACE_CAP);
      expect((await b.verify()).ok).toBe(true);
      // The key's lock is usable again from both handles.
      await (await a.lockKey(RACE_KEY)).release();
      await (await b.lockKey(RACE_KEY)).release();
    },
  );

  it('a fenced append without holding the lock is a caller bug and writes nothing', async () => {
    const a = await openLedger(cfgFor(name), FAST);
    ledgers.push(a);
    await expect(a.appendFenced(signInput({ key: RACE_KEY }))).rejects.toMatchObject({ code: 'internal' });
    expect(await a.verify()).toEqual({ ok: true, entries: 0 });
  });
});

releaseLedgerContract(
  'PostgreSQL',
  async () => {
    const name = await createDatabase();
    const dump = readFileSync(path.join(__dirname, 'fixtures/postgres-release-ledger.sql'), 'utf8');
    await admin(async (c) => {
      await c.query(dump);
    }, dbUrl(name));
    return { cfg: cfgFor(name), remove: () => dropDatabase(name) };
  },
  FAST,
);

/** Runs shared work on one client. */
const runOn = <T>(c: Client, work: Work<T>) =>
  stepAsync(work, async (st) => {
    const res = await c.query<Row>(st.sql, postgresDialect.bind(st.values));
    return { rows: res.rows, changes: res.rowCount ?? 0 };
  });

budgetIndexContract({
  name: 'PostgreSQL',
  dialect: postgresDialect,
  migrations: POSTGRES_MIGRATIONS,
  opts: FAST,
  create: async (version) => {
    const name = await createDatabase();
    await admin(async (c) => {
      await c.query('CREATE TABLE schema_version (version integer NOT NULL)');
      for (const m of POSTGRES_MIGRATIONS.slice(0, version)) {
        if (typeof m === 'string') await c.query(m);
        else await runOn(c, m());
      }
      await c.query('INSERT INTO schema_version (version) VALUES ($1)', [version]);
    }, dbUrl(name));
    return {
      cfg: cfgFor(name),
      run: (work) => admin((c) => runOn(c, work()), dbUrl(name)),
      remove: () => dropDatabase(name),
    };
  },
  unboundedReads: function* (sql, values) {
    const leading = new Map(
      (yield* all(
        `SELECT i.indexrelid::regclass::text AS index, a.attname AS col FROM pg_index i
           JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]`,
      )).map((r) => [String(r.index), String(r.col)]),
    );
    // A test's tables are small, and reading one whole is the cheaper plan: told it never is, the planner reads one
    // whole only where no index can serve.
    yield* run('SET enable_seqscan = off');
    const lines = (yield* all(`EXPLAIN ${sql}`, values)).map((r) => String(r['QUERY PLAN']).trim());
    // Each read of a table or an index, bounded when the condition on the line after it holds the index's first
    // column to a value or above one.
    return lines.filter((line, i) => {
      if (/Seq Scan on /.test(line)) return true;
      const index = /Index (?:Only )?Scan (?:using (\S+) on|on (\S+))/.exec(line);
      if (!index) return false;
      const col = leading.get(index[1] ?? index[2] ?? '');
      const cond = lines[i + 1] ?? '';
      return col === undefined || !cond.startsWith('Index Cond: ') || !new RegExp(`\\(${col} (=|>|>=) `).test(cond);
    });
  },
});

describe('PostgreSQL: a ledger written by schema version 2', () => {
  let name: string;
  beforeEach(async () => {
    name = await createDatabase();
    const dump = readFileSync(path.join(__dirname, 'fixtures/postgres-schema-v2.sql'), 'utf8');
    await admin(async (c) => {
      await c.query(dump);
    }, dbUrl(name));
  });
  afterEach(() => dropDatabase(name));

  it('opens, verifies against its head record, and keeps working', async () => {
    const ledger = await openLedger(cfgFor(name), FAST);
    try {
      const before = await ledger.tail(10);
      expect(before).toHaveLength(5);
      expect(await ledger.head()).toEqual({ seq: 5, hash: before[4]!.hash });
      expect(await ledger.verify()).toEqual({ ok: true, entries: 5 });
      expect(await ledger.getHalt('game')).toMatchObject({ reason: 'agent looping' });
      const next = await ledger.append(signInput({ ts: 1_700_000_010 }));
      expect(next.prev).toBe(before[4]!.hash);
      expect(await ledger.verify()).toEqual({ ok: true, entries: 6 });
      // Migrated to the current schema: token figures are stored and chained.
      const tokens = [{ mint: 'USDC', decimals: 6, change: '-5', credits: [] }];
      expect((await ledger.append(signInput({ ts: 1_700_000_011, tokens }))).tokens).toEqual(tokens);
      expect(await ledger.verify()).toEqual({ ok: true, entries: 7 });
      const rows = await admin((c) => c.query('SELECT version FROM schema_version'), dbUrl(name));
      expect(rows.rows).toEqual([{ version: 18 }]);
      // Migrated: an approval request can carry a message's text, and a quorum (one vote of anyone by default).
      const asked = await ledger.createApproval({
        key: 'game',
        summary: 'log in',
        payload_hash: 'h',
        balance_change: null,
        fee: null,
        compute_units: null,
        requested_by: 'operator',
        ts: 1_700_000_020,
        expires_at: 1_700_000_140,
        message: 'Sign in\x1b[2J',
      });
      expect((await ledger.getApproval(asked.id))?.message).toBe('Sign in\x1b[2J');
      expect(asked).toMatchObject({ required: 1, approvers: null, votes: [], waiter: null });
    } finally {
      await ledger.close();
    }
  });
});
