/**
 * better-sqlite3 is synchronous: with SQLite's own busy timeout, a write that meets another process's write
 * transaction would block the event loop (and every request) for as long as it waits. So the connection's busy
 * timeout is a few milliseconds, and a statement that still finds the file busy is retried here after an
 * asynchronous pause, backing off, until the caller's deadline.
 */
import { SignerError } from '../util/errors';

/** What SQLite may block the thread for, per attempt. */
export const BUSY_SLICE_MS = 5;
const MAX_PAUSE_MS = 50;

/**
 * SQLITE_BUSY and its extended codes (BUSY_SNAPSHOT, BUSY_RECOVERY, BUSY_TIMEOUT). Checked by shape, not with
 * instanceof: the native addon keeps the error class of the first context that loaded it (a test runner's
 * sandboxes each have their own Error).
 */
export function isBusy(e: unknown): boolean {
  if (typeof e !== 'object' || e === null || !('code' in e)) return false;
  return typeof e.code === 'string' && e.code.startsWith('SQLITE_BUSY');
}

/**
 * Runs `fn` until it does not fail busy, pausing 1, 2, 4 … 50 ms between attempts, for at most `deadlineMs` in
 * total. `fn` must be safe to repeat after a busy failure: a transaction rolled back whole, or one statement.
 */
export async function retryWhileBusy<T>(fn: () => T, deadlineMs: number, what: () => string): Promise<T> {
  const giveUpAt = Date.now() + deadlineMs;
  for (let pause = 1; ; pause = Math.min(pause * 2, MAX_PAUSE_MS)) {
    try {
      return fn();
    } catch (e) {
      const left = giveUpAt - Date.now();
      if (!isBusy(e)) throw e;
      if (left <= 0)
        throw new SignerError(
          'ledger',
          `SQLite ledger: ${what()}: the ledger file stayed locked by another process for ${deadlineMs} ms`,
          { cause: e },
        );
      await new Promise((r) => setTimeout(r, Math.min(pause, left)));
    }
  }
}
