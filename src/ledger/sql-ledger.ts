/**
 * A ledger from its parts: the concerns written once over a driver, and what one store does its own way (the key
 * locks, the fenced append, the gate in one transaction, closing).
 */
import { approvals } from './approvals';
import { auditLog } from './audit-log';
import { credentialRevocations } from './credential-revocations';
import { halts } from './halts';
import { operatorStore } from './operator-store';
import { outbox } from './outbox';
import { usage } from './reservations';
import { treasuryBaselines } from './treasury-baselines';
import { get, type SqlDriver } from './sql/driver';
import type { UsageBooks } from './usage-books';
import type { KeyLocks, Ledger, Reservations } from './types';

/** What one store does its own way (functions that do not use `this`: they are copied onto the ledger). */
export interface StoreParts extends KeyLocks, Pick<Reservations, 'reserveAtOnce'> {
  readonly store: Ledger['store'];
  close(): Promise<void>;
}

export function sqlLedger(db: SqlDriver, books: UsageBooks, own: StoreParts): Ledger {
  return {
    ...auditLog(db),
    ...usage(books),
    ...halts(db),
    ...credentialRevocations(db),
    ...approvals(db),
    ...outbox(db),
    ...operatorStore(db),
    ...treasuryBaselines(db),
    async ping() {
      await db.read('not reachable', () => get('SELECT 1'));
    },
    ...own,
  };
}
