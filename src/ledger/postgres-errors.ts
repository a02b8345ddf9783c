/** How the PostgreSQL store tells its failures apart, and the connection it holds while it works on one. */
import type { PoolClient } from 'pg';
import { SignerError, errorMessage, isSignerError } from '../util/errors';
import type { PostgresServer } from './postgres-servers';

/** A checked-out connection, the server it is on, and how to give it back (with an error: destroyed, not pooled). */
export interface Connection {
  client: PoolClient;
  server: PostgresServer;
  done: (err?: Error) => void;
}

export function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

export function ledgerError(what: string, e: unknown): SignerError {
  if (isSignerError(e)) return e;
  return new SignerError('ledger', `PostgreSQL ledger: ${what}: ${errorMessage(e)}`, { cause: e });
}

/** The server cancelled the statement at statement_timeout (SQLSTATE 57014 query_canceled). */
export function isStatementTimeout(e: unknown): boolean {
  return e instanceof Error && (e as { code?: unknown }).code === '57014';
}

/** The server refused a write because it is a standby now (SQLSTATE 25006 read_only_sql_transaction). */
export function isReadOnly(e: unknown): boolean {
  return e instanceof Error && (e as { code?: unknown }).code === '25006';
}

/** A connection that was cut or refused, as opposed to an error the server reported for the statement. */
export function isConnectionLoss(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && /^(ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|57P01|57P02|57P03|08\d{3})$/.test(code))
    return true;
  return /Connection terminated|not queryable|Client has encountered a connection error/i.test(e.message);
}
