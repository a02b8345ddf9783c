/**
 * Moves a SQLite ledger (with its -wal and -shm files) out of the way so the next open starts an empty one. Used
 * by the embedded default, whose chain starts from genesis on every start; the last few runs are kept to read.
 */
import fs from 'node:fs';
import path from 'node:path';

/** How many earlier runs' ledgers are kept under state/previous-runs/. */
export const KEPT_RUNS = 10;

const SIDE_FILES = ['', '-wal', '-shm', '-journal'];

/** Where archiveLedger moves the ledger when called with the same `now`. */
export function archivedLedgerPath(ledgerPath: string, stateDir: string, now: Date): string {
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  return path.join(stateDir, 'previous-runs', stamp, path.basename(ledgerPath));
}

/** Returns the archived ledger's path, or null when there was no ledger to move. */
export function archiveLedger(ledgerPath: string, stateDir: string, now: Date = new Date()): string | null {
  if (!fs.existsSync(ledgerPath)) return null;
  const runs = path.join(stateDir, 'previous-runs');
  const target = archivedLedgerPath(ledgerPath, stateDir, now);
  fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
  for (const suffix of SIDE_FILES) {
    if (fs.existsSync(ledgerPath + suffix)) fs.renameSync(ledgerPath + suffix, target + suffix);
  }
  const old = fs.readdirSync(runs).sort().slice(0, -KEPT_RUNS);
  for (const name of old) fs.rmSync(path.join(runs, name), { recursive: true, force: true });
  return target;
}
