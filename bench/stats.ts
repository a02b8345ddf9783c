/** Shared helpers for the benchmarks: percentiles and one printed line per figure. */
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
