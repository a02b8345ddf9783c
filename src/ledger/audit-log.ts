/**
 * The audit log over either store: one hash chain, appended under the head record (sealed onto the last entry's
 * hash, inserted, the head moved, in one transaction), read in pages, and verified against the head and the halts.
 */
import { verifyAgainstHead } from './audit-check';
import { sealEntry, validateEntryInput } from './hash-chain';
import { indexBudgetBlocks } from './sql/budget-blocks';
import { all, get, type SqlDriver, type Work } from './sql/driver';
import { entryRowValues, rowToEntry, rowToHalt, rowToHead } from './sql/rows';
import { statements, type Statements } from './sql/statements';
import { SignerError } from '../util/errors';
import type { AuditEntry, AuditEntryInput, AuditLog, ChainHead } from './types';

const PAGE = 1000;

/**
 * The head record, read with `sql`: SQL.head in a write transaction (row-locked until it ends, where the store
 * locks rows), SQL.readHead elsewhere.
 */
export function* headIn(sql: string, store: string): Work<ChainHead> {
  const row = yield* get(sql);
  if (!row) throw new SignerError('ledger', `${store} ledger: the chain head row is missing; the schema was altered`);
  return rowToHead(row);
}

/**
 * Inside a write transaction: seals the input onto the head record, inserts it with its rows in the budget block
 * index, moves the head.
 */
export function* appendIn(SQL: Statements, store: string, input: AuditEntryInput): Work<AuditEntry> {
  const head = yield* headIn(SQL.head, store);
  const seq = head.seq + 1;
  const entry = sealEntry(input, head.hash);
  yield { sql: SQL.insertEntry, values: entryRowValues(seq, entry), appends: { seq, entry } };
  yield* indexBudgetBlocks(seq, entry);
  yield { sql: SQL.moveHead, values: [seq, entry.hash] };
  return entry;
}

/** The display name of a store in its errors. */
export function storeName(db: SqlDriver): string {
  return db.dialect.name === 'sqlite' ? 'SQLite' : 'PostgreSQL';
}

export function auditLog(db: SqlDriver): AuditLog {
  const SQL = statements(db.dialect);
  const store = storeName(db);

  /** Pages through the chain up to `last`, so a long walk never holds a statement or connection across yields. */
  async function* entriesThrough(last: number): AsyncIterable<AuditEntry> {
    let after = 0;
    for (;;) {
      const rows = await db.read('cannot read audit entries', () => all(SQL.page, [after, last, PAGE]));
      for (const r of rows) yield rowToEntry(r);
      const lastRow = rows[rows.length - 1];
      if (rows.length < PAGE || !lastRow) return;
      after = Number(lastRow.seq);
    }
  }

  return {
    async append(input) {
      validateEntryInput(input);
      return await db.write('cannot append an audit entry', () => appendIn(SQL, store, input));
    },
    async signEntriesForKey(key, since) {
      const rows = await db.read('cannot read audit entries', () => all(SQL.signEntriesForKey, [key, since]));
      return rows.map(rowToEntry);
    },
    async sequencedSignEntries(key, since) {
      return await db.snapshot('cannot read audit entries', function* () {
        const head = yield* headIn(SQL.readHead, store);
        const rows = yield* all(SQL.signEntriesForKey, [key, since]);
        return { head: head.seq, entries: rows.map((r) => ({ seq: Number(r.seq), entry: rowToEntry(r) })) };
      });
    },
    async verify() {
      // The head and the halts from one snapshot; the entries up to that head do not change (append-only).
      const { head, halts } = await db.snapshot('cannot read the head record', function* () {
        return { head: yield* headIn(SQL.readHead, store), halts: (yield* all(SQL.listHalts)).map(rowToHalt) };
      });
      return verifyAgainstHead(entriesThrough(head.seq), head, halts);
    },
    async head() {
      return await db.read('cannot read the head record', () => headIn(SQL.readHead, store));
    },
    async tail(n) {
      const rows = await db.read('cannot read audit entries', () => all(SQL.tail, [Math.max(0, Math.floor(n))]));
      return rows.map(rowToEntry).reverse();
    },
    entries() {
      return entriesThrough(Number.MAX_SAFE_INTEGER);
    },
  };
}
