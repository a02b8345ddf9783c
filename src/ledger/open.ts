/**
 * Opens the ledger the config names. SQLite: the parent folder is created 0700 and the file 0600 (the ledger
 * holds no secrets, but it is the evidence of what was signed: keep it out of agents' reach). PostgreSQL: the
 * pool connects and the schema migrations run before this resolves.
 */
import { closeSync, mkdirSync, openSync } from 'node:fs';
import * as path from 'node:path';
import type { LedgerConfig } from '../config/types';
import { SignerError, errorMessage } from '../util/errors';
import type { PostgresLedgerOptions } from './postgres';
import type { SqliteLedgerOptions } from './sqlite';
import type { Ledger } from './types';

export interface OpenLedgerOptions {
  sqlite?: SqliteLedgerOptions;
  postgres?: Omit<PostgresLedgerOptions, 'poolSize'>;
}

export async function openLedger(cfg: LedgerConfig, opts: OpenLedgerOptions = {}): Promise<Ledger> {
  if (cfg.store === 'sqlite') {
    const file = path.resolve(cfg.path);
    try {
      mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      // Create the file 0600 before SQLite does (it would use the umask); its -wal and -shm files copy this mode.
      closeSync(openSync(file, 'a', 0o600));
    } catch (e) {
      throw new SignerError('ledger', `SQLite ledger: cannot create ${file}: ${errorMessage(e)}`, { cause: e });
    }
    // Each store's driver is loaded only when used: a PostgreSQL deployment never loads the native SQLite addon.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { openSqliteLedger } = require('./sqlite') as typeof import('./sqlite');
    return openSqliteLedger(file, opts.sqlite);
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { openPostgresLedger } = require('./postgres') as typeof import('./postgres');
  return openPostgresLedger(cfg.url, { failoverMs: cfg.failover_ms, ...opts.postgres, poolSize: cfg.pool_size });
}
