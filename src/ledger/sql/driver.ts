/**
 * What each store's driver runs, and how the code shared by both stores asks it to. A unit of work (a transaction
 * or a run of reads) is written once as a generator that yields the statements it runs and receives their
 * results: the SQLite driver steps it synchronously inside one better-sqlite3 transaction (its transactions must
 * not span an await), the PostgreSQL driver awaits each statement on one connection. So a transaction's logic is
 * written once and neither store changes how it runs.
 */
import type { AuditEntry } from '../types';
import type { Dialect } from './dialect';
import type { Row } from './rows';

/** One statement: shared SQL text with `$n` placeholders (dialect.ts) and its values in order. */
export interface Statement {
  sql: string;
  values: readonly unknown[];
  /** Only its first row is wanted (a driver may stop reading there). */
  first?: boolean;
  /**
   * The entry this statement inserts into the chain at `seq`: a driver that keeps its usage books in step with
   * its own commits (SQLite's) takes it in once the transaction commits.
   */
  appends?: { seq: number; entry: AuditEntry };
}

/** What a statement gave back: its rows (when it returns any) and how many rows it changed. */
export interface Result {
  rows: Row[];
  changes: number;
}

/** A unit of work: yields statements, receives each one's result, returns its value. */
export type Work<T> = Generator<Statement, T, Result>;

/** Every row the statement returns. */
export function* all(sql: string, values: readonly unknown[] = []): Work<Row[]> {
  return (yield { sql, values }).rows;
}

/** The first row the statement returns, if any. */
export function* get(sql: string, values: readonly unknown[] = []): Work<Row | undefined> {
  return (yield { sql, values, first: true }).rows[0];
}

/** Runs the statement; how many rows it changed. */
export function* run(sql: string, values: readonly unknown[] = []): Work<number> {
  return (yield { sql, values }).changes;
}

/**
 * One store's way of running work. Each method takes a function that starts the work afresh, since a driver may
 * run it again from the start (SQLite retries a transaction rolled back because another process held the file).
 * `what` names the operation in a ledger error ("cannot read halts").
 */
export interface SqlDriver {
  readonly dialect: Dialect;
  /** Statements each on their own, no transaction: reads. */
  read<T>(what: string, work: () => Work<T>): Promise<T>;
  /** One write transaction; resolves once it is durable, rolls back whole on any failure. */
  write<T>(what: string, work: () => Work<T>): Promise<T>;
  /**
   * Writes each committed on its own (one statement that needs no transaction around it); resolves once durable.
   * PostgreSQL saves the BEGIN and COMMIT round trips.
   */
  autocommit<T>(what: string, work: () => Work<T>): Promise<T>;
  /** Reads that all see one snapshot of the database. */
  snapshot<T>(what: string, work: () => Work<T>): Promise<T>;
}

/** Steps work synchronously, each statement run by `exec` (SQLite). */
export function stepSync<T>(work: Work<T>, exec: (s: Statement) => Result): T {
  let next = work.next();
  while (!next.done) next = work.next(exec(next.value));
  return next.value;
}

/** Steps work with each statement awaited in turn (PostgreSQL). */
export async function stepAsync<T>(work: Work<T>, exec: (s: Statement) => Promise<Result>): Promise<T> {
  let next = work.next();
  while (!next.done) next = work.next(await exec(next.value));
  return next.value;
}
