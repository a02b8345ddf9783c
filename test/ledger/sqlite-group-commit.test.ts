/**
 * The SQLite driver's group commit: writes asked for before the event loop next polls for I/O share one
 * transaction, each in a savepoint of its own. What must hold: each write keeps its own outcome, a later write of
 * the group sees an earlier one (also in the usage books the cap gate decides on), and a close commits what was
 * asked for before it.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { LedgerConfig } from '../../src/config/types';
import { openLedger } from '../../src/ledger/open';
import { get, run } from '../../src/ledger/sql/driver';
import { SqliteDriver } from '../../src/ledger/sqlite-driver';
import { WalSync } from '../../src/ledger/sqlite-wal-sync';
import type { Ledger, ReserveDecision, ReserveView } from '../../src/ledger/types';
import { spentLamports } from '../../src/signer/policy/rules/daily-cap';
import { SignerError } from '../../src/util/errors';
import { nowSeconds } from '../../src/util/time';
import { intentInput } from './helpers';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'ledger-group-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('the driver', () => {
  let db: Database.Database;
  let wal: WalSync;
  let driver: SqliteDriver;
  let resets: number;
  beforeEach(() => {
    const file = path.join(dir, 'group.db');
    db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
    wal = new WalSync(`${file}-wal`);
    resets = 0;
    driver = new SqliteDriver(
      db,
      1000,
      wal,
      () => {},
      () => resets++,
    );
  });
  afterEach(async () => {
    await wal.close();
    db.close();
  });
  const insert = (v: string) => driver.write('cannot insert', () => run('INSERT INTO t (v) VALUES ($1)', [v]));
  const count = () => (db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n;

  it('writes asked for together commit in one transaction, each resolved once durable', async () => {
    const before = wal.syncs;
    expect(await Promise.all(Array.from({ length: 10 }, (_, i) => insert(`v${i}`)))).toEqual(Array(10).fill(1));
    expect(driver.transactions).toBe(1);
    expect(wal.syncs).toBe(before + 1);
    expect(count()).toBe(10);
    // Asked for one after another (each awaited), they commit one by one.
    await insert('a');
    await insert('b');
    expect(driver.transactions).toBe(3);
  });

  it('a write that fails is rolled back alone; the others of its group commit', async () => {
    const failing = driver.write('cannot insert twice', function* () {
      yield* run('INSERT INTO t (v) VALUES ($1)', ['half']);
      throw new SignerError('ledger', 'refused after the first statement');
    });
    const results = await Promise.allSettled([insert('before'), failing, insert('after')]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({
      message: 'refused after the first statement',
    });
    expect(driver.transactions).toBe(1);
    expect(db.prepare('SELECT v FROM t ORDER BY id').all()).toEqual([{ v: 'before' }, { v: 'after' }]);
    expect(resets).toBe(0);
  });

  it('a later write of the group reads what an earlier one wrote', async () => {
    const [, seen] = await Promise.all([
      insert('first'),
      driver.write('cannot read', () => get('SELECT count(*) AS n FROM t')),
    ]);
    expect(driver.transactions).toBe(1);
    expect(seen).toEqual({ n: 1 });
  });
});

describe('the ledger', () => {
  const KEY = 'game';
  const CAP = 1_000_000;
  let cfg: LedgerConfig;
  let ledger: Ledger;
  beforeEach(async () => {
    cfg = { store: 'sqlite', path: path.join(dir, 'state', 'ledger.db') };
    ledger = await openLedger(cfg);
  });
  afterEach(() => ledger.close());

  it('two gates for one key in one group: the second decides on a usage that holds the first', async () => {
    await ledger.keyUsage(KEY, nowSeconds());
    const views: ReserveView[] = [];
    /** Reserves 600,000 lamports when the cap still has room for them. */
    const decide =
      (signature: string) =>
      (view: ReserveView): ReserveDecision<string> => {
        views.push(view);
        if (spentLamports(view.usage, CAP) + 600_000 > CAP) return { intent: null, result: 'refused' };
        return {
          intent: intentInput({ ts: nowSeconds(), key: KEY, signature, balance_change: -600_000 }),
          result: 'reserved',
        };
      };
    const request = (signature: string) => ({ key: KEY, now: nowSeconds(), signature });
    const decided = await Promise.all([
      ledger.reserveAtOnce(request('sig-a'), decide('sig-a')),
      ledger.reserveAtOnce(request('sig-b'), decide('sig-b')),
    ]);
    expect(decided).toEqual(['reserved', 'refused']);
    expect(views.map((v) => spentLamports(v.usage, CAP))).toEqual([0, 600_000]);
    expect(spentLamports(await ledger.keyUsage(KEY, nowSeconds()), CAP)).toBe(600_000);
    expect(await ledger.verify()).toEqual({ ok: true, entries: 1 });
  });

  it('a close commits the writes asked for before it', async () => {
    const appended = ledger.append(intentInput({ ts: nowSeconds(), key: KEY, signature: 'sig-last' }));
    await ledger.close();
    await expect(appended).resolves.toMatchObject({ signature: 'sig-last' });
    ledger = await openLedger(cfg);
    expect(await ledger.verify()).toEqual({ ok: true, entries: 1 });
  });
});
