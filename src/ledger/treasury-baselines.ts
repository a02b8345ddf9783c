/**
 * Treasury baselines over either store (sql/treasury-baselines.ts has the table and why a move is a
 * compare-and-set).
 */
import { all, run, type SqlDriver } from './sql/driver';
import { baselineRowValues, rowToBaseline, TREASURY_BASELINE_SQL as SQL } from './sql/treasury-baselines';
import type { TreasuryBaselines } from './types';

export function treasuryBaselines(db: SqlDriver): TreasuryBaselines {
  return {
    async treasuryBaselines(key) {
      return (await db.read('cannot read treasury baselines', () => all(SQL.list, [key]))).map(rowToBaseline);
    },
    async moveTreasuryBaseline(prev, next) {
      const changed = await db.write('cannot move a treasury baseline', () =>
        prev === null
          ? run(SQL.insert, baselineRowValues(next))
          : run(SQL.move, [
              ...baselineRowValues(prev),
              next.mint,
              next.delegate,
              next.amount.toString(),
              next.ts,
              next.seq,
            ]),
      );
      return changed === 1;
    },
    async dropTreasuryBaseline(prev) {
      const changed = await db.write('cannot drop a treasury baseline', () => run(SQL.drop, baselineRowValues(prev)));
      return changed === 1;
    },
  };
}
