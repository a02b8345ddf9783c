/**
 * The index of intents by credential block (src/ledger/sql/budget-blocks.ts) on a real store, against the reference
 * it replaces: a scan of every entry's `budget_blocks` text for the block's quoted id (PATTERN_SCAN, kept here).
 * - A ledger written at the schema version before the index: the migration indexes its intents, and each block's
 *   usage loads with the figures the pattern scan gave on that ledger before it migrated; the chain still verifies.
 * - A ledger written at the current version: a block's entries read through the index are exactly those the pattern
 *   scan finds, for any window and cursor, and a handle's block usage is the one folded from the scan's rows.
 * `sqlite.test.ts` and `postgres.test.ts` run it on databases their own migrations built.
 */
import type { LedgerConfig } from '../../src/config/types';
import { sealEntry } from '../../src/ledger/hash-chain';
import { openLedger, type OpenLedgerOptions } from '../../src/ledger/open';
import { POSTGRES_BUDGET_BLOCK_INDEX, SQLITE_BUDGET_BLOCK_INDEX } from '../../src/ledger/sql/budget-blocks';
import type { Dialect } from '../../src/ledger/sql/dialect';
import { all, get, run, type Work } from '../../src/ledger/sql/driver';
import type { Migration } from '../../src/ledger/sql/migrations';
import { entryRowValues, rowToEntry, rowToHead } from '../../src/ledger/sql/rows';
import { ENTRY_COLUMNS, statements } from '../../src/ledger/sql/statements';
import type { AuditEntry, AuditEntryInput, Ledger, Usage } from '../../src/ledger/types';
import { USAGE_HORIZON_S } from '../../src/ledger/usage-book';
import { UsageBooks } from '../../src/ledger/usage-books';
import { nowSeconds } from '../../src/util/time';
import { intentInput, signInput } from './helpers';
import { prng } from '../support/prng';

/** A database a test reaches behind any ledger's back. */
export interface RawDatabase {
  cfg: LedgerConfig;
  /** Runs shared work (src/ledger/sql/driver.ts) on a connection of its own. */
  run<T>(work: () => Work<T>): Promise<T>;
  remove(): Promise<void>;
}

export interface IndexedStore {
  name: string;
  dialect: Dialect;
  migrations: readonly Migration[];
  opts: OpenLedgerOptions;
  /** A new database brought to schema `version` by the store's first `version` migrations, as that signer did. */
  create(version: number): Promise<RawDatabase>;
  /**
   * The steps of the statement's plan that read a table with neither an equality nor a lower bound on an index's
   * first column (the whole table, or all of it up to a cursor), as the store's planner shows them.
   */
  unboundedReads(sql: string, values: readonly unknown[]): Work<string[]>;
}

/** $1 `%"<revocation id>"%`, $2 since, $3 through: a block's intents and their finals, by their text alone. */
const PATTERN_SCAN = `SELECT ${ENTRY_COLUMNS} FROM entries
  WHERE ts >= $2 AND seq <= $3 AND (
    (command = 'sign-intent' AND budget_blocks LIKE $1)
    OR (command = 'sign' AND signature IN (
      SELECT signature FROM entries
      WHERE command = 'sign-intent' AND budget_blocks LIKE $1 AND ts >= $2 AND signature IS NOT NULL)))
  ORDER BY seq`;

const block = (n: number): string => n.toString(16).padStart(2, '0').repeat(64);

export function budgetIndexContract(store: IndexedStore): void {
  const SQL = statements(store.dialect);
  const current = store.migrations.length;
  /** The schema version just before the index's migration (later migrations follow it). */
  const beforeIndex = store.migrations.findIndex(
    (m) => m === SQLITE_BUDGET_BLOCK_INDEX || m === POSTGRES_BUDGET_BLOCK_INDEX,
  );

  /** The chain's head now, read directly. */
  const headOf = (db: RawDatabase) =>
    db.run(function* () {
      const row = yield* get(SQL.readHead);
      return rowToHead(row ?? {});
    });

  /** The block's entries as the pattern scan finds them. */
  const scanned = (db: RawDatabase, id: string, since: number, through: number) =>
    db.run(() => all(PATTERN_SCAN, [`%${JSON.stringify(id)}%`, since, through]));

  /** The block's entries through the index (the statement a ledger loads a block's usage with). */
  const indexed = (db: RawDatabase, id: string, since: number, through: number) =>
    db.run(() => all(SQL.blockSignEntries, [id, since, through]));

  /** A block's usage at `now` in books that load it with the pattern scan, over the chain as it stands. */
  async function scannedUsage(db: RawDatabase, id: string, now: number): Promise<Usage> {
    const { seq } = await headOf(db);
    const books = new UsageBooks({
      headSeq: () => Promise.resolve(seq),
      signEntriesAfter: () => Promise.resolve([]),
      keySignEntries: () => Promise.resolve([]),
      blockSignEntries: async (b, since, through) => (await scanned(db, b, since, through)).map(rowToEntry),
    });
    return books.blockUsage(id, now);
  }

  /**
   * Appends as a signer of the schema before the index did: sealed on the head, inserted, the head moved; `stored`
   * replaces the budget_blocks text the row keeps.
   */
  function appendRaw(db: RawDatabase, input: AuditEntryInput, stored?: string): Promise<AuditEntry> {
    return db.run(function* () {
      const head = rowToHead((yield* get(SQL.readHead)) ?? {});
      const entry = sealEntry(input, head.hash);
      const values = entryRowValues(head.seq + 1, entry);
      if (stored !== undefined) values[values.length - 1] = stored;
      yield* run(SQL.insertEntry, values);
      yield* run(SQL.moveHead, [head.seq + 1, entry.hash]);
      return entry;
    });
  }

  const indexRows = (db: RawDatabase) =>
    db.run(function* () {
      const rows = yield* all('SELECT revocation_id, ts, seq FROM entry_budget_blocks ORDER BY seq, revocation_id');
      return rows.map((r) => [String(r.revocation_id), Number(r.ts), Number(r.seq)]);
    });

  describe(`${store.name}: intents indexed by credential block`, () => {
    let db: RawDatabase;
    const ledgers: Ledger[] = [];
    const open = async () => {
      const l = await openLedger(db.cfg, store.opts);
      ledgers.push(l);
      return l;
    };
    afterEach(async () => {
      for (const l of ledgers.splice(0)) await l.close();
      await db.remove();
    });

    it('the migration indexes the intents a ledger holds from before it: each block loads the same figures, and the chain verifies', async () => {
      db = await store.create(beforeIndex);
      const now = nowSeconds();
      const [child, grand, other] = [block(0xc1), block(0xc2), block(0xc3)];
      const intents = [
        intentInput({ ts: now - 9, key: 'a', signature: 'a-x', balance_change: -40, budget_blocks: [child] }),
        intentInput({ ts: now - 8, key: 'b', signature: 'b-y', balance_change: -25, budget_blocks: [child, grand] }),
        intentInput({ ts: now - 7, key: 'a', signature: 'a-z', balance_change: -1000 }),
        // A block named twice is one spend of it.
        intentInput({ ts: now - 6, key: 'b', signature: 'b-w', balance_change: -7, budget_blocks: [other, other] }),
        // Too old to count any more.
        intentInput({
          ts: now - USAGE_HORIZON_S - 5,
          key: 'a',
          signature: 'a-o',
          balance_change: -500,
          budget_blocks: [child],
        }),
      ];
      for (const i of intents) await appendRaw(db, i);
      // The same list with other spacing: the same entry (its hash is of the list), so it counts as written.
      await appendRaw(
        db,
        intentInput({ ts: now - 5, key: 'c', signature: 'c-s', balance_change: -3, budget_blocks: [grand] }),
        `[ "${grand}" ]`,
      );
      await appendRaw(db, signInput({ ts: now - 4, key: 'a', signature: 'a-x', outcome: 'refused' }));
      await appendRaw(db, signInput({ ts: now - 3, key: 'b', signature: 'b-y', balance_change: -20 }));
      await appendRaw(db, signInput({ ts: now - 2, key: 'a', signature: 'a-z', balance_change: -990 }));
      const blocks = [child, grand, other, block(0xd0)];
      const before = await Promise.all(blocks.map((b) => scannedUsage(db, b, now)));
      expect(before.map((u) => u.lamports)).toEqual([20, 23, 7, 0]);

      const ledger = await open();
      expect(await ledger.verify()).toEqual({ ok: true, entries: 9 });
      expect(await indexRows(db)).toEqual([
        [child, now - 9, 1],
        [child, now - 8, 2],
        [grand, now - 8, 2],
        [other, now - 6, 4],
        [child, now - USAGE_HORIZON_S - 5, 5],
        [grand, now - 5, 6],
      ]);
      for (const [i, b] of blocks.entries()) expect(await ledger.blockUsage(b, now)).toEqual(before[i]);
      // Appends after the migration index their own intents: a fresh handle loads them.
      await ledger.append(
        intentInput({ ts: now - 1, key: 'c', signature: 'c-n', balance_change: -11, budget_blocks: [other] }),
      );
      expect((await (await open()).blockUsage(other, now)).lamports).toBe(18);
    });

    it('an intent whose budget_blocks is not a JSON list is left out of the index: the ledger opens, and verify names the entry', async () => {
      db = await store.create(beforeIndex);
      const now = nowSeconds();
      const child = block(0xc1);
      await appendRaw(
        db,
        intentInput({ ts: now - 3, key: 'a', signature: 'a-1', balance_change: -5, budget_blocks: [child] }),
      );
      await appendRaw(
        db,
        intentInput({ ts: now - 2, key: 'a', signature: 'a-2', balance_change: -9, budget_blocks: [child] }),
        `["${child}"`,
      );
      const before = await scannedUsage(db, child, now);
      expect(before.lamports).toBe(5); // the pattern finds the row, but it reads as no list
      const ledger = await open();
      expect(await indexRows(db)).toEqual([[child, now - 3, 1]]);
      expect(await ledger.blockUsage(child, now)).toEqual(before);
      expect(await ledger.verify()).toMatchObject({ ok: false, line: 2 });
    });

    it("loads a block's entries by keys and bounded ranges of indexes, where the pattern scan reads every entry", async () => {
      db = await store.create(current);
      const values = [block(0xa1), nowSeconds() - USAGE_HORIZON_S, 1_000];
      expect(await db.run(() => store.unboundedReads(SQL.blockSignEntries, values))).toEqual([]);
      const pattern = [`%${JSON.stringify(values[0])}%`, ...values.slice(1)];
      expect(await db.run(() => store.unboundedReads(PATTERN_SCAN, pattern))).not.toEqual([]);
    });

    it('reads exactly the entries the pattern scan finds, for any window and cursor, and a handle folds the same usage', async () => {
      db = await store.create(current);
      const ledger = await open();
      const now = nowSeconds();
      const blocks = [block(0xa1), block(0xa2), block(0xa3), block(0xa4)];
      const random = prng(41);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
      const outcomes = ['confirmed', 'failed', 'refused', 'unknown', 'expired', 'error'];
      // The same transaction signed again after a refusal, the second time under a block: the first final answers
      // an intent the block never counted.
      await ledger.append(intentInput({ ts: now - 60, key: 'e', signature: 'e-1', balance_change: -50 }));
      await ledger.append(signInput({ ts: now - 59, key: 'e', signature: 'e-1', outcome: 'refused' }));
      await ledger.append(
        intentInput({ ts: now - 58, key: 'e', signature: 'e-1', balance_change: -50, budget_blocks: [blocks[0]!] }),
      );
      await ledger.append(signInput({ ts: now - 57, key: 'e', signature: 'e-1', balance_change: -45 }));
      // A key's signatures are its own; a few repeat.
      const pending: AuditEntryInput[] = [];
      for (let i = 0; i < 240; i++) {
        const key = pick(['a', 'b', 'c', 'd']);
        const ts = now - Math.floor(random() * (USAGE_HORIZON_S + 86_400));
        const r = random();
        if (r < 0.5) {
          const named = blocks.filter(() => random() < 0.35);
          const intent = intentInput({
            ts,
            key,
            signature: random() < 0.1 ? null : `${key}-${String(Math.floor(random() * 150))}`,
            balance_change: -Math.floor(random() * 1000),
            budget_blocks: named.length > 0 ? [...named, ...(random() < 0.1 ? named : [])] : null,
          });
          await ledger.append(intent);
          pending.push(intent);
        } else if (r < 0.85 && pending.length > 0) {
          const intent = pending.splice(Math.floor(random() * pending.length), 1)[0]!;
          await ledger.append(
            signInput({
              ts: random() < 0.8 ? intent.ts + Math.floor(random() * 600) : ts,
              key: intent.key,
              signature: intent.signature,
              outcome: pick(outcomes),
              balance_change: random() < 0.7 ? -Math.floor(random() * 1000) : null,
            }),
          );
        } else if (r < 0.95) {
          // A final without an intent in this ledger's window, or a message sign.
          await ledger.append(signInput({ ts, key, signature: `${key}-${String(Math.floor(random() * 150))}` }));
        } else {
          await ledger.append(signInput({ ts, key, command: 'sign-message', outcome: 'signed' }));
        }
      }
      const { seq: head } = await headOf(db);
      let compared = 0;
      for (const id of [...blocks, block(0xee)])
        for (const since of [0, now - USAGE_HORIZON_S, now - 86_400, now - 3_600, now + 1]) {
          // A final written before every intent of the block in the window is the final of none of them: the index
          // does not read it, and the book would pass over it.
          const intents = (await scanned(db, id, since, head)).filter((r) => r.command === 'sign-intent');
          const first = Math.min(...intents.map((r) => Number(r.seq)));
          for (const through of [head, Math.floor(head / 2), 0]) {
            const want = (await scanned(db, id, since, through)).filter(
              (r) => r.command === 'sign-intent' || Number(r.seq) > first,
            );
            expect((await indexed(db, id, since, through)).map(rowToEntry)).toEqual(want.map(rowToEntry));
            compared += want.length;
          }
        }
      expect(compared).toBeGreaterThan(200);
      const fresh = await open();
      for (const id of blocks) {
        const usage = await fresh.blockUsage(id, now);
        expect(usage).toEqual(await scannedUsage(db, id, now));
        expect(usage.lamports + usage.unbounded).toBeGreaterThan(0);
      }
      expect(await ledger.verify()).toEqual({ ok: true, entries: 244 });
    });
  });
}
