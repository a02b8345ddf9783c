/**
 * The program's own message from simulation or transaction logs: the first "Program log: …Error…" line's
 * remainder, else the last " failed: " line whole, else null. Not policy: it only reports why the chain said no.
 */
export function programError(logs: readonly string[]): string | null {
  for (const line of logs) {
    if (line.startsWith('Program log: ') && line.slice('Program log: '.length).includes('Error'))
      return line.slice('Program log: '.length);
  }
  return logs.findLast((line) => line.includes(' failed: ')) ?? null;
}
