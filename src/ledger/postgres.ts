/**
 * The PostgreSQL ledger store (`pg`): several signer replicas share one database, so they share limits, halts,
 * approvals and one hash chain, and a per-key lock spans them all. The concerns are written once for both stores
 * (sql-ledger.ts); postgres-driver.ts runs them, and this is what PostgreSQL does its own way.
 *
 * - Migrations run at start-up under a session advisory lock, so replicas starting together apply them once.
 * - One chain across replicas: an append locks the single head record row (SELECT … FOR UPDATE), inserts the
 *   entry and moves the head in one transaction. Commit order is chain order.
 * - The per-key lock is a session advisory lock on a connection of its own (postgres-locks.ts).
 * - Several servers (a primary and its standbys, postgres-servers.ts): every connection goes to the writable one,
 *   found again after a failover (postgres-primary.ts). Database down, or no writable server: operations wait for
 *   one up to `failoverMs` and then reject with SignerError('ledger_unavailable'); /ready says so at once. The
 *   pools open fresh connections when it is back, with no restart.
 */
import { postgresKeyLocks } from './postgres-locks';
import { PostgresDriver, type PostgresLedgerOptions } from './postgres-driver';
import { postgresServers } from './postgres-servers';
import { ledgerError } from './postgres-errors';
import { usageBooksOver } from './reservations';
import { sqlLedger } from './sql-ledger';
import type { Ledger } from './types';

export type { PostgresLedgerOptions };
export { keyLockId } from './postgres-locks';

/** Connects to the writable server the URLs name, applies migrations (under an advisory lock), returns the ledger. */
export async function openPostgresLedger(
  urls: string | readonly string[],
  opts: PostgresLedgerOptions,
): Promise<Ledger> {
  let servers;
  try {
    servers = postgresServers(typeof urls === 'string' ? [urls] : urls);
  } catch (e) {
    throw ledgerError('the database URL', e);
  }
  const driver = new PostgresDriver(servers, opts);
  const locks = postgresKeyLocks(driver);
  const close = async () => {
    if (driver.closed) return;
    driver.closed = true;
    driver.primary.close();
    await locks.releaseAll();
    await Promise.allSettled([driver.pool.end(), driver.lockPool.end()]);
  };
  try {
    await driver.migrate();
  } catch (e) {
    await close().catch(() => undefined);
    throw ledgerError('cannot prepare the schema', e);
  }
  // Every read is a round trip to the server, where the head costs as much as the entries: the books read the
  // entries alone.
  const books = usageBooksOver(driver, { headFirst: false });
  // After a failover the chain may be shorter than what the books read (docs/ledger.md, "Failover"): read anew.
  driver.primary.onFailover(() => books.reset());
  const ledger = sqlLedger(driver, books, {
    store: 'postgres',
    ...locks.parts,
    /**
     * Always the lock: each read here is a round trip to the server, so a transaction that reads the usage, the
     * in-flight intents and the halt while holding the chain's head row would hold every replica's appends for
     * several round trips, where the key's advisory lock holds up only that key's gate.
     */
    reserveAtOnce: () => Promise.resolve(null),
    close,
  });
  return {
    ...ledger,
    ping: () => driver.ping(),
    warning: () => driver.primary.replicationWarning(),
    onFailover: (listener) => driver.primary.onFailover(listener),
  };
}
