/** Shared helpers for the benchmarks: percentiles, process CPU time and one printed line per figure. */
import fs from 'node:fs';
export interface BenchLine {
  name: string;
  value: number;
  unit: string;
  target?: string;
  ok?: boolean;
  note?: string;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function formatLine(l: BenchLine): string {
  const value = l.value >= 100 ? l.value.toFixed(0) : l.value.toFixed(2);
  const target = l.target ? `  target ${l.target}: ${l.ok ? 'met' : 'MISSED'}` : '';
  const note = l.note ? `  (${l.note})` : '';
  return `${l.name.padEnd(64)} ${value.padStart(10)} ${l.unit}${target}${note}`;
}

const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ on Linux, the unit of /proc/stat and /proc/PID/stat

/** CPU seconds used so far by each process (utime + stime from /proc/PID/stat); processes gone are left out. */
export function processCpuSeconds(pids: number[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of pids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from the 3rd (state) on
      out.set(pid, (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND);
    } catch {
      /* exited, or not on this machine */
    }
  }
  return out;
}
