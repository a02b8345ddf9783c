/**
 * Removes a variable that held a secret from this process's environment once it has been read. Deleting it from
 * `process.env` unsets it in the C environment, so nothing the process starts later inherits it; but the kernel
 * shows /proc/PID/environ (and `ps e`) from the block the process was started with, which unsetenv leaves as it
 * was. On Linux that block is overwritten with zeros too, through /proc/self/mem: a process may always write its
 * own memory, and only the removed variable's bytes are touched (the other variables' strings stay where libc
 * points to them).
 */
import fs from 'node:fs';

export function forgetEnvVariable(env: NodeJS.ProcessEnv, name: string): void {
  Reflect.deleteProperty(env, name);
  if (env === process.env) wipeFromStartEnvironment(name);
}

/**
 * Zeroes every `NAME=…` entry of the environment block the process started with; false when it cannot (no /proc,
 * another kernel), which leaves the value visible to whoever may read this process's /proc entries.
 */
function wipeFromStartEnvironment(name: string): boolean {
  let fd: number | undefined;
  try {
    const range = startEnvironmentRange();
    if (range === null) return false;
    fd = fs.openSync('/proc/self/mem', 'r+');
    const block = Buffer.alloc(range.end - range.start);
    fs.readSync(fd, block, 0, block.length, range.start);
    const prefix = Buffer.from(`${name}=`, 'utf8');
    for (let at = 0; at < block.length;) {
      const nul = block.indexOf(0, at);
      const end = nul === -1 ? block.length : nul;
      if (end - at >= prefix.length && block.subarray(at, at + prefix.length).equals(prefix))
        fs.writeSync(fd, Buffer.alloc(end - at), 0, end - at, range.start + at);
      at = end + 1;
    }
    return true;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** env_start and env_end of /proc/self/stat (fields 50 and 51, counted after the command name in parentheses). */
function startEnvironmentRange(): { start: number; end: number } | null {
  const stat = fs.readFileSync('/proc/self/stat', 'latin1');
  // The command name may hold spaces and parentheses: the fields after it start at the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const start = Number(fields[50 - 3]);
  const end = Number(fields[51 - 3]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start <= 0 || end <= start) return null;
  return { start, end };
}
