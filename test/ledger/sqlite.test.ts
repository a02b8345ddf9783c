import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { LedgerConfig } from '../../src/config/types';
import { openLedger } from '../../src/ledger/open';
import { SqliteLedger } from '../../src/ledger/sqlite';
import type { Ledger } from '../../src/ledger/types';
import { ledgerContract, type StoreUnderTest } from './contract';
import { signInput } from './helpers';
import { stillPending } from '../support/async';
import { Worker, buildLedger } from './procs';

const FAST = { sqlite: { lockPollMs: 5 } };

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
    tamperTs: async (line, ts) => {
      const db = new Database(file);
      db.prepare('UPDATE entries SET ts = ? WHERE seq = ?').run(ts, line);
      db.close();
    },
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

  it('creates its folder 0700 and its file 0600, in WAL mode with synchronous=FULL', () => {
    expect(statSync(path.dirname(s.file)).mode & 0o777).toBe(0o700);
    expect(statSync(s.file).mode & 0o777).toBe(0o600);
    const db = new Database(s.file, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.prepare('SELECT version FROM schema_version').get()).toEqual({ version: 3 }); // 1: tables, 2: usage indexes, 3: head record and lock leases
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
    await expect(SqliteLedger.open(s.file)).rejects.toThrow(/newer than this signer understands/);
  });

  it('reports an unreadable file as a ledger error', async () => {
    await expect(openLedger({ store: 'sqlite', path: '/proc/version/ledger.db' })).rejects.toMatchObject({
      code: 'ledger',
    });
  });
});

describe('SQLite across processes', () => {
  let build: ReturnType<typeof buildLedger>;
  let dir: string;
  let cfg: LedgerConfig;
  const workers: Worker[] = [];
  const ledgers: Ledger[] = [];

  beforeAll(() => {
    build = buildLedger('sqlite');
  }, 120_000);
  afterAll(() => build.cleanup());
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'ledger-sqlite-x-'));
    cfg = { store: 'sqlite', path: path.join(dir, 'ledger.db') };
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.kill();
    for (const l of ledgers.splice(0)) await l.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const open = async () => {
    const l = await openLedger(cfg, FAST);
    ledgers.push(l);
    return l;
  };
  const worker = (args: string[]) => {
    const w = new Worker(build.openJs, cfg, args);
    workers.push(w);
    return w;
  };

  it('two processes appending at once to one new file build one chain that verifies', async () => {
    const a = worker(['append', '150', 'a']);
    const b = worker(['append', '150', 'b']);
    expect(await a.exited).toBe(0);
    expect(await b.exited).toBe(0);
    const ledger = await open();
    expect(await ledger.verify()).toEqual({ ok: true, entries: 300 });
  });

  it.each([1, 7, 40, 'random'] as const)(
    'a process SIGKILLed while appending (after %s) leaves a ledger that verifies and keeps every durable entry',
    async (point) => {
      const ledger = await open();
      await ledger.append(signInput({ ts: 1 }));
      const w = worker(['append', '100000', 'k']);
      if (point === 'random') {
        await w.waitFor((l) => l === 'ready');
        await new Promise((r) => setTimeout(r, 20 + Math.floor(Math.random() * 80)));
      } else await w.waitFor((l) => l === `appended ${point}`);
      await w.kill();
      const durable = w.lastAppended();
      const r = await ledger.verify();
      expect(r.ok).toBe(true);
      expect(r.entries).toBeGreaterThanOrEqual(1 + durable);
      // The chain still takes appends after the crash.
      await ledger.append(signInput({ ts: 2 }));
      expect(await ledger.verify()).toMatchObject({ ok: true, entries: r.entries + 1 });
    },
  );

  it('a process SIGKILLed while opening a new file (migrations) leaves a file that opens and verifies', async () => {
    for (const delay of [0, 5, 15, 30]) {
      const w = worker(['append', '100000', 'm']);
      await new Promise((r) => setTimeout(r, delay));
      await w.kill();
    }
    const ledger = await open();
    expect((await ledger.verify()).ok).toBe(true);
  });

  it("waits for another process's key lock and takes over the lock of a process that died holding it", async () => {
    const ledger = await open();
    const w = worker(['lock', 'game']);
    await w.waitFor((l) => l === 'locked');
    const mine = ledger.lockKey('game');
    expect(await stillPending(mine, 300)).toBe(true);
    const other = await ledger.lockKey('other');
    await other.release();
    await w.kill();
    const lock = await mine;
    await lock.release();
  });

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
});
