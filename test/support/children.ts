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
