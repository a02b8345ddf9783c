/**
 * Usage over either store: the usage books (usage-books.ts) read the chain through the driver, and answer the cap
 * gate's questions from memory. The gate in one transaction (reserveAtOnce) is each store's own.
 */
import { headIn, storeName } from './audit-log';
import { all, type SqlDriver } from './sql/driver';
import { rowToEntry } from './sql/rows';
import { statements } from './sql/statements';
import { UsageBooks, type UsageBooksOptions } from './usage-books';
import { nowSeconds } from '../util/time';
import type { Reservations } from './types';

export function usageBooksOver(db: SqlDriver, opts: UsageBooksOptions): UsageBooks {
  const SQL = statements(db.dialect);
  const store = storeName(db);
  return new UsageBooks(
    {
      headSeq: async () => (await db.read('cannot read the head record', () => headIn(SQL.readHead, store))).seq,
      signEntriesAfter: async (after, limit) =>
        (await db.read('cannot read audit entries', () => all(SQL.signEntriesAfter, [after, limit]))).map((r) => ({
          seq: Number(r.seq),
          entry: rowToEntry(r),
        })),
      keySignEntries: async (key, since, through) =>
        (await db.read('cannot read audit entries', () => all(SQL.keySignEntries, [key, since, through]))).map(
          rowToEntry,
        ),
      blockSignEntries: async (id, since, through) =>
        (await db.read('cannot read audit entries', () => all(SQL.blockSignEntries, [id, since, through]))).map(
          rowToEntry,
        ),
    },
    opts,
  );
}

export function usage(books: UsageBooks): Omit<Reservations, 'reserveAtOnce'> {
  return {
    keyUsage: (key, now) => books.usage(key, now),
    signatureInFlight: (key, signature) => books.inFlight(key, signature, nowSeconds()),
    blockUsage: (revocationId, now) => books.blockUsage(revocationId, now),
  };
}
