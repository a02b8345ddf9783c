/**
 * `sa-forge-signer locks list|clear`: the per-key locks as an operator sees them (docs/operations.md, "Key locks").
 * A lock whose holder crashed on another host sharing the SQLite file blocks its key until its lease runs out (or
 * forever, for a row written by an older signer without a lease); `clear` frees it. Clearing a live holder's
 * lock takes --force: the holder's next intent append is then refused, so it sends nothing it had not recorded.
 */
import type { Ledger, KeyLockInfo } from '../ledger/types';
import { SignerError } from '../util/errors';
import { escapeUntrusted } from '../util/untrusted';
import { usageOf } from './commands';
import { table } from './render';

const LOCKS_USAGE = usageOf('locks list', 'locks clear');

export interface LocksRequest {
  /** The words after `locks`: ['list'] or ['clear', KEY]. */
  words: readonly string[];
  force: boolean;
  json: boolean;
  /** The configured key names (PostgreSQL's advisory locks carry only a hash of the name). */
  keys: readonly string[];
}

const iso = (ms: number | null): string => (ms === null ? '-' : new Date(ms).toISOString());

/** One line per lock, columns padded; the key and holder come from the store, so they are shown escaped. */
export function formatLocks(locks: readonly KeyLockInfo[]): string {
  if (locks.length === 0) return 'no key locks held';
  const rows = [
    ['KEY', 'STATE', 'HOLDER', 'ACQUIRED', 'LEASE UNTIL'],
    ...locks.map((l) => [
      escapeUntrusted(l.key),
      l.state,
      escapeUntrusted(l.holder),
      iso(l.acquired_at_ms),
      iso(l.lease_until_ms),
    ]),
  ];
  return table(rows);
}

/** Runs the subcommand; returns the exit code and writes the result to `out` (stdout). */
export async function runLocksCommand(ledger: Ledger, req: LocksRequest, out: (text: string) => void): Promise<number> {
  const [sub, key, ...extra] = req.words;
  if (sub === 'list' && key === undefined) {
    const locks = await ledger.keyLocks(req.keys);
    out(req.json ? JSON.stringify(locks, null, 2) : formatLocks(locks));
    return 0;
  }
  if (sub === 'clear' && key !== undefined && extra.length === 0) {
    const result = await ledger.clearKeyLock(key, { force: req.force });
    const shown = escapeUntrusted(key);
    if (result === 'live')
      throw new SignerError(
        'request_invalid',
        `the lock on key ${shown} has a live holder (its lease is current or its process runs); ` +
          `clear it only once that holder is gone: sa-forge-signer locks clear ${shown} --force`,
      );
    out(result === 'cleared' ? `cleared the lock on key ${shown}` : `key ${shown} is not locked`);
    return 0;
  }
  throw new SignerError('request_invalid', LOCKS_USAGE);
}
