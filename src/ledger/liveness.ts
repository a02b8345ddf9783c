/**
 * Is the process that holds a SQLite key lock still alive? SQLite is a local file, so the holder is on this host.
 * A pid alone can be reused after the holder dies, so the lock row also records the holder's start time
 * (field 22 of /proc/PID/stat, in clock ticks since boot): a live pid with another start time is a new process
 * and the lock is stale. Where /proc is missing, the pid check alone is used.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** Start time of a running process, or null if it is gone, a zombie (killed, not yet reaped) or unknowable. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may contain spaces: split after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (rest[0] === 'Z' || rest[0] === 'X') return null; // field 3, state: a zombie holds nothing
    return rest[19] ?? null; // field 22 overall = index 19 after pid and comm
  } catch {
    return null;
  }
}

export interface ProcessIdentity {
  host: string;
  pid: number;
  start: string | null;
}

export function selfIdentity(): ProcessIdentity {
  return { host: hostname(), pid: process.pid, start: processStartTime(process.pid) };
}

/**
 * True unless we can tell the holder is gone. A holder on another host (a shared volume) cannot be checked and
 * is presumed alive: waiting is safe, taking over a live holder's lock is not.
 */
export function holderAlive(holder: ProcessIdentity): boolean {
  if (holder.host !== hostname()) return true;
  try {
    process.kill(holder.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return false;
    // EPERM: it exists but belongs to another user; fall through to the start-time check.
  }
  if (holder.start === null) return true;
  const now = processStartTime(holder.pid);
  return now === null ? !existsProc() : now === holder.start;
}

function existsProc(): boolean {
  try {
    readFileSync('/proc/self/stat');
    return true;
  } catch {
    return false;
  }
}
