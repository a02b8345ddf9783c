/**
 * Where the two stores' SQL differs, named in one place. Every statement is written once (statements.ts) with
 * PostgreSQL-style `$n` placeholders and `CAST(… AS …)` for the types a parameter needs; better-sqlite3 binds `$n`
 * as the named parameter "n", so both drivers take the same text.
 */
import { createHash } from 'node:crypto';

/** A stable signed 64-bit advisory lock id for a name, as a decimal string for a ::bigint parameter. */
export function advisoryLockId(name: string): string {
  return createHash('sha256').update(`sa-forge-signer:${name}`).digest().readBigInt64BE(0).toString();
}

export interface Dialect<Bound = unknown> {
  readonly name: 'sqlite' | 'postgres';
  /**
   * A row lock for a read inside a write transaction. PostgreSQL: FOR UPDATE. SQLite has no row locks and needs
   * none: its write transactions are BEGIN IMMEDIATE, so the whole file is already held.
   */
  readonly forUpdate: string;
  /**
   * Row locks for a claim that other claimers pass over instead of waiting for: PostgreSQL's FOR UPDATE SKIP LOCKED.
   * SQLite's write transaction already holds the file, so no two claims ever see the same free row.
   */
  readonly skipLocked: string;
  /**
   * A lock held to the end of the write transaction on a name that may have no row yet ($1: advisoryLockId of the
   * name): PostgreSQL's pg_advisory_xact_lock. None in SQLite, whose write transaction already holds the file.
   */
  readonly transactionLock: string | null;
  /** The values of `$1…$n` in the shape the driver binds: an array for pg, an object keyed "1"…"n" for SQLite. */
  bind: (values: readonly unknown[]) => Bound;
}

export const sqliteDialect: Dialect<Record<string, unknown>> = {
  name: 'sqlite',
  forUpdate: '',
  skipLocked: '',
  transactionLock: null,
  bind: (values) => Object.fromEntries(values.map((v, i) => [String(i + 1), v])),
};

export const postgresDialect: Dialect<unknown[]> = {
  name: 'postgres',
  forUpdate: 'FOR UPDATE',
  skipLocked: 'FOR UPDATE SKIP LOCKED',
  transactionLock: 'SELECT pg_advisory_xact_lock($1::bigint)',
  bind: (values) => [...values],
};
