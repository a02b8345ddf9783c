/**
 * Halts over either store: a halt row and its audit entry written in one transaction, so the halts table and the
 * chain's halt and resume entries always agree (audit verify checks them against each other).
 */
import { appendIn, headIn, storeName } from './audit-log';
import { boundSummary, validateEntryInput } from './hash-chain';
import { haltEntry, resumeEntry } from './records';
import { all, get, run, type SqlDriver, type Work } from './sql/driver';
import { haltRowValues, rowToHalt } from './sql/rows';
import { statements } from './sql/statements';
import type { HaltRecord, Halts } from './types';

export function halts(db: SqlDriver): Halts {
  const SQL = statements(db.dialect);
  const store = storeName(db);
  return {
    async getHalt(key) {
      const row = await db.read('cannot read halts', () => get(SQL.getHalt, [key]));
      return row ? rowToHalt(row) : null;
    },
    async listHalts() {
      return (await db.read('cannot read halts', () => all(SQL.listHalts))).map(rowToHalt);
    },
    async halt(rec) {
      const bounded = { ...rec, reason: boundSummary(rec.reason) };
      validateEntryInput(haltEntry(bounded));
      return await db.write('cannot record the halt', function* (): Work<HaltRecord> {
        // Take the head record first: it serialises concurrent halts of one key, so the second sees the first's row.
        yield* headIn(SQL.head, store);
        const existing = yield* get(SQL.getHalt, [rec.key]);
        if (existing) return rowToHalt(existing);
        yield* run(SQL.insertHalt, haltRowValues(bounded));
        yield* appendIn(SQL, store, haltEntry(bounded));
        return bounded;
      });
    },
    async resume(key, by, ts) {
      return await db.write('cannot record the resume', function* (): Work<boolean> {
        yield* headIn(SQL.head, store);
        const lifted = yield* get(SQL.deleteHalt, [key]);
        if (!lifted) return false;
        const entry = resumeEntry(key, by, ts, rowToHalt(lifted));
        validateEntryInput(entry);
        yield* appendIn(SQL, store, entry);
        return true;
      });
    },
  };
}
