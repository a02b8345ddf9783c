/** The webhook outbox over either store (its statements and rows: sql/outbox.ts). */
import { all, run, type SqlDriver } from './sql/driver';
import {
  notificationRowValues,
  outboxStatements,
  rowToNotification,
  rowsToCounts,
  settlementRowValues,
} from './sql/outbox';
import type { Outbox } from './types';

export function outbox(db: SqlDriver): Outbox {
  const OUTBOX = outboxStatements(db.dialect);
  return {
    async enqueueNotifications(rows) {
      if (rows.length === 0) return;
      await db.write('cannot record notifications', function* () {
        for (const n of rows) yield* run(OUTBOX.insert, notificationRowValues(n));
      });
    },
    async claimNotifications(owner, now, leaseMs, limit) {
      const rows = await db.autocommit('cannot claim notifications', () =>
        all(OUTBOX.claim, [owner, now + leaseMs, now, limit]),
      );
      return rows.map(rowToNotification);
    },
    async settleNotification(id, owner, state) {
      const changed = await db.autocommit('cannot record a delivery', () =>
        run(OUTBOX.settle, settlementRowValues(id, owner, state)),
      );
      return changed === 1;
    },
    async listNotifications(opts) {
      const { status } = opts;
      const limit = Math.max(0, Math.floor(opts.limit));
      const rows = await db.read('cannot read notifications', () =>
        status ? all(OUTBOX.listByStatus, [status, limit]) : all(OUTBOX.list, [limit]),
      );
      return rows.map(rowToNotification);
    },
    async notificationCounts() {
      return rowsToCounts(await db.read('cannot read notifications', () => all(OUTBOX.counts)));
    },
    async pruneNotifications(before) {
      return await db.autocommit('cannot prune notifications', () => run(OUTBOX.prune, [before]));
    },
  };
}
