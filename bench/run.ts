/**
 * `npm run bench`: every benchmark in one run, one line per figure, then a summary of targets met.
 * BENCH_SECONDS sets the measured window of each load (default 8);
 * BENCH_ONLY=engine,sign-cpu,per-key,stores,http,replicas,latency,confirm picks sections (sign-cpu: the engine
 * section's process CPU per sign under load, alone; replicas includes replicas-failover, the PostgreSQL primary
 * killed under load, bench/failover.ts, which BENCH_ONLY=replicas-failover runs alone; latency: a remote provider's distance, bench/latency.ts;
 * confirm: send to confirmed, WebSocket notice against polling). BENCH_CPU_PROFILE=FILE writes a .cpuprofile of the
 * sign-cpu line's measured signs (V8's sampling profiler, 100 µs), nothing else in it; BENCH_POLL_MS sets that
 * line's status poll interval (default twice a block, 10 ms).
 */
import { formatLine, type BenchLine } from './stats';

type Section = { name: string; run: (seconds: number) => Promise<BenchLine[]> };

function sections(): Section[] {
  // Each section is loaded only when it runs, so BENCH_ONLY skips loading what the others need (LiteSVM, pg, autocannon).
  /* eslint-disable @typescript-eslint/no-require-imports -- the lazy load above is the point */
  return [
    { name: 'engine', run: (s) => (require('./engine') as typeof import('./engine')).runEngineBench(s) },
    {
      // The engine section's last lines alone: the process's CPU per sign under the sign load.
      name: 'sign-cpu',
      run: (s) => {
        const engine = require('./engine') as typeof import('./engine');
        return engine.loadedProcessCpu(s, engine.rawSignatureMicros());
      },
    },
    { name: 'per-key', run: (s) => (require('./per-key') as typeof import('./per-key')).runPerKeyBench(s) },
    { name: 'stores', run: (s) => (require('./stores') as typeof import('./stores')).runStoresBench(s) },
    { name: 'http', run: (s) => (require('./http') as typeof import('./http')).runHttpBench(s) },
    { name: 'replicas', run: (s) => (require('./replicas') as typeof import('./replicas')).runReplicasBench(s) },
    {
      name: 'replicas-failover',
      run: (s) => (require('./failover') as typeof import('./failover')).runFailoverBench(s),
    },
    { name: 'latency', run: () => (require('./latency') as typeof import('./latency')).runLatencyBench() },
    { name: 'confirm', run: () => (require('./confirm') as typeof import('./confirm')).runConfirmBench() },
  ];
  /* eslint-enable @typescript-eslint/no-require-imports */
}

async function main(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? '8');
  const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
  const all: BenchLine[] = [];
  for (const section of sections()) {
    // A name picks its sub-sections too: `replicas` runs `replicas-failover`.
    if (only && !only.some((o) => section.name === o || section.name.startsWith(`${o}-`))) continue;
    process.stderr.write(`bench: ${section.name}…\n`);
    const lines = await section.run(seconds);
    for (const l of lines) process.stdout.write(`${formatLine(l)}\n`);
    all.push(...lines);
  }
  const targets = all.filter((l) => l.ok !== undefined);
  const missed = targets.filter((l) => !l.ok);
  process.stdout.write(
    `bench: ${targets.length - missed.length} of ${targets.length} targets met${missed.length ? `; missed: ${missed.map((l) => l.name).join('; ')}` : ''}\n`,
  );
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});
