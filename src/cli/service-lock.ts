/**
 * One service per state directory. The service holds an exclusive OS lock on `<state_dir>/service.lock` for as
 * long as it runs: SQLite's own file lock (fcntl on POSIX), taken by an open `BEGIN EXCLUSIVE` that is never
 * committed. The kernel drops the lock when the process ends, however it ends, so a lock can never go stale the
 * way a pid file does. Beside it, `service.json` says who holds it (pid, listen address, config): written only by
 * the holder, so while the lock is held it is true, and once the lock is free it is ignored.
 *
 * The operator's commands find the running service through it (`sa-forge-signer reload` signals that pid), and a
 * second service on the same directory refuses to start, naming the first, before it touches anything.
 */
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { SignerError, errorMessage } from '../util/errors';

export const LOCK_FILE = 'service.lock';
export const INFO_FILE = 'service.json';

/** What the holder says about itself. */
export interface ServiceInfo {
  pid: number;
  /** The MCP listener's bound address, once it is up; null while the service is still opening it. */
  listen: string | null;
  config: string | null;
  started_at: string;
  /** The policy hash the service runs (docs/policy.md, "Reload"). */
  policy_hash: string | null;
}

export interface ServiceLock {
  readonly stateDir: string;
  info(): ServiceInfo;
  /** Rewrites service.json with these fields changed. */
  update(change: Partial<ServiceInfo>): void;
  /** Removes service.json and drops the lock (the process's end drops it too). */
  release(): void;
}

type Holder = { held: true; info: ServiceInfo | null } | { held: false };

function openLockDb(file: string): Database.Database {
  // Loaded here: the service loads better-sqlite3 for its lock even with a PostgreSQL ledger (a few ms).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Sqlite = require('better-sqlite3') as typeof Database;
  return new Sqlite(file, { timeout: 0 });
}

function isBusy(e: unknown): boolean {
  return typeof e === 'object' && e !== null && 'code' in e && (e.code === 'SQLITE_BUSY' || e.code === 'SQLITE_LOCKED');
}

function readInfo(stateDir: string): ServiceInfo | null {
  try {
    const parsed = JSON.parse(fs.readFileSync(path.join(stateDir, INFO_FILE), 'utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null || !('pid' in parsed) || typeof parsed.pid !== 'number')
      return null;
    return parsed as ServiceInfo;
  } catch {
    return null;
  }
}

/** How the holder is named in messages: pid, listen address and config. */
export function describeHolder(info: ServiceInfo | null): string {
  if (info === null) return 'another sa-forge-signer service (it has not said which yet)';
  const where = info.listen === null ? 'still starting' : `listening on ${info.listen}`;
  return `sa-forge-signer pid ${String(info.pid)} (${where}${info.config === null ? '' : `, config ${info.config}`}, since ${info.started_at})`;
}

/**
 * Takes the state directory for this process, or refuses (config_invalid) naming the service that holds it.
 * Creates the directory (0700) and the lock file if needed; nothing else.
 */
export function acquireServiceLock(stateDir: string, self: Omit<ServiceInfo, 'pid' | 'started_at'>): ServiceLock {
  const dir = path.resolve(stateDir);
  const lockFile = path.join(dir, LOCK_FILE);
  let db: Database.Database;
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    db = openLockDb(lockFile);
  } catch (e) {
    throw new SignerError(
      'config_invalid',
      `cannot use the state directory ${dir} (${errorMessage(e)}); set state_dir in the config (or SIGNER_STATE_DIR) to a folder this user may write`,
    );
  }
  try {
    db.exec('BEGIN EXCLUSIVE');
  } catch (e) {
    db.close();
    if (!isBusy(e)) throw new SignerError('internal', `cannot lock ${lockFile}: ${errorMessage(e)}`);
    throw new SignerError(
      'config_invalid',
      `the state directory ${dir} belongs to ${describeHolder(readInfo(dir))}; stop that one first, or give this service its own state_dir (SIGNER_STATE_DIR, or SIGNER_VAR_DIR for the embedded default)`,
    );
  }
  let info: ServiceInfo = { ...self, pid: process.pid, started_at: new Date().toISOString() };
  const infoFile = path.join(dir, INFO_FILE);
  const write = (): void => {
    // Written whole and renamed, so a reader never sees half of it.
    const tmp = `${infoFile}.${String(process.pid)}`;
    fs.writeFileSync(tmp, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
    fs.renameSync(tmp, infoFile);
  };
  write();
  let released = false;
  return {
    stateDir: dir,
    info: () => info,
    update(change) {
      if (released) return;
      info = { ...info, ...change };
      write();
    },
    release() {
      if (released) return;
      released = true;
      fs.rmSync(infoFile, { force: true });
      db.close();
    },
  };
}

/** Who holds the state directory now, without taking it: for the operator's commands. */
export function serviceHolder(stateDir: string): Holder {
  const dir = path.resolve(stateDir);
  const lockFile = path.join(dir, LOCK_FILE);
  if (!fs.existsSync(lockFile)) return { held: false };
  const db = openLockDb(lockFile);
  try {
    // A shared lock is enough to learn whether an exclusive one is held; it is dropped at once.
    db.exec('BEGIN IMMEDIATE');
    db.exec('ROLLBACK');
    return { held: false };
  } catch (e) {
    if (!isBusy(e)) throw e;
    return { held: true, info: readInfo(dir) };
  } finally {
    db.close();
  }
}
