/** Processes a test spawned (service replicas, a live service): SIGKILLed if the test process exits first. */
import type { ChildProcess } from 'node:child_process';

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

export function killOnExit(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
}

/** Sends `signal` to a child still running and resolves once it has exited (at once if it already has). */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
}
