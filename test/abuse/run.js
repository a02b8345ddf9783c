#!/usr/bin/env node
/**
 * `npm run test:abuse`: every abuse suite in one jest run (jest.abuse.config.js, one at a time, the secret scan
 * last), then the figures the suites recorded as one line, then jest's "N passed, N failed". Exits non-zero on
 * any failure or when a figure is missing (a suite that did not get to record it did not pass).
 * Extra arguments go to jest (e.g. a path pattern). CI runs the defaults; to shorten a local run:
 *   ABUSE_FUZZ_RUNS (20000 protocol cases), ABUSE_PAYLOAD_RUNS (1500), ABUSE_CRASHES (100),
 *   ABUSE_LOAD_SECONDS (60), ABUSE_SEED (replays the crash suite's kill instants).
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '../..');
const out = path.join(root, '.tmp', 'abuse');
fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true, mode: 0o700 });
const jsonFile = path.join(out, 'jest.json');

const jest = spawnSync(
  process.execPath,
  [
    require.resolve('jest/bin/jest', { paths: [root] }),
    '-c',
    path.join(root, 'jest.abuse.config.js'),
    '--json',
    `--outputFile=${jsonFile}`,
    ...process.argv.slice(2),
  ],
  {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, ABUSE_OUT: out },
  },
);

const figures = {};
const figuresDir = path.join(out, 'figures');
if (fs.existsSync(figuresDir)) {
  for (const f of fs.readdirSync(figuresDir))
    figures[f.replace(/\.json$/, '')] = JSON.parse(fs.readFileSync(path.join(figuresDir, f), 'utf8'));
}
const get = (suite, key) => (figures[suite] && typeof figures[suite][key] === 'number' ? figures[suite][key] : null);
const show = (v) => (v === null ? '?' : String(v));

const protocol = get('protocol-fuzz', 'cases');
const payloads = get('payload-fuzz', 'cases');
const fuzz = protocol === null || payloads === null ? null : protocol + payloads;
const kinds = get('rpc-faults', 'fault_kinds');
const crashes = get('crash', 'crashes');
const lost = get('crash', 'lost');
const leaks = get('secret-hygiene', 'leaks');

const holes = figures['cap-holes'] || {};
const load = figures.load || {};
console.log('');
console.log(
  `fuzz: ${show(protocol)} protocol requests, ${show(payloads)} hostile payloads; faults: ${show(figures['rpc-faults'] && figures['rpc-faults'].kinds)}`,
);
console.log(
  `crash: ${show(get('crash', 'sent'))} transactions sent, ${show(get('crash', 'orphan_intents'))} orphan intents ended by a restarted service (${show(get('crash', 'orphans_landed'))} had landed), ${show(get('crash', 'cap_refusals'))} cap refusals; host/origin: ${show(get('host-origin', 'refused'))}/${show(get('host-origin', 'attempts'))} refused, /metrics ${show(get('host-origin', 'metrics_refused'))}/${show(get('host-origin', 'metrics_attempts'))} refused`,
);
console.log(
  `cap holes: a payment under a flood of ${show(holes.flood_transactions)} transactions naming the key ended ${show(holes.flood_final)}, the next was ${show(holes.flood_next)}; bank race ${show(holes.bank_race)}; an approval whose figures grew after it was given: ${show(holes.approval_bound)}; key's on-chain spend ${show(holes.onchain_spent)} lamports, past its cap ${show(holes.keys_past_cap_onchain)}`,
);
console.log(
  `load: ${show(load.requests)} requests (${show(load.rps)}/s, p99 ${show(load.p99_ms)} ms), codes ${show(load.status_codes)}, RSS ${show(load.rss_start_mb)}→${show(load.rss_end_mb)} MB, fds ${show(load.fd_before)}→${show(load.fd_after)}, /health ${show(load.health_max_ms)} ms max under ${show(load.idle_connections)} idle connections`,
);
const inFlight = figures['in-flight'] || {};
console.log(
  `in flight: ${show(inFlight.waiting_signs)} signs of one token waiting for an operator; another token's halt, tools/list, check and the token's own halt answered ${show(inFlight.others_served)}/${show(inFlight.others_tried)} (max ${show(inFlight.others_max_ms)} ms); the waiting token's next check ${show(inFlight.own_next_work_status)}`,
);
const loop = figures['event-loop'] || {};
const nesting = figures['event-loop-nesting'] || {};
console.log(
  `event loop: ${show(loop.requests)} hostile requests from every kind of caller, ${show(loop.status_5xx)} 5xx, max delay ${show(loop.event_loop_max_ms)} ms (deeply nested bodies: ${show(nesting.event_loop_max_ms)} ms)`,
);
console.log(
  `abuse: ${show(fuzz)} fuzz cases, ${show(kinds)} fault kinds, ${show(crashes)} crashes, ${show(lost)} lost, ${show(leaks)} leaks`,
);

// One row per class that ran the service in-process (support/class-tally.ts), then the classes' total.
const classes = Object.entries(figures)
  .filter(([name]) => name.startsWith('class.'))
  .map(([name, f]) => [name.slice('class.'.length), f]);
if (classes.length > 0) {
  console.log(
    'per class: requests, 5xx, event-loop max of the process (the suite and the service share it; the event-loop class measures each request alone), ledger growth, keys past their cap',
  );
  for (const [name, f] of classes)
    console.log(
      `  ${name.padEnd(16)} ${String(f.requests).padStart(7)} requests, ${f.status_5xx} 5xx, loop max ${f.event_loop_max_ms} ms, ledger +${Math.round(f.ledger_bytes / 1024)} KiB, caps passed ${f.caps_passed}`,
    );
}
const capsPassed = classes.reduce((n, [, f]) => n + f.caps_passed, 0);

let passed = 0;
let failed = 1;
if (fs.existsSync(jsonFile)) {
  const r = JSON.parse(fs.readFileSync(jsonFile, 'utf8'));
  passed = r.numPassedTests;
  failed = r.numFailedTests + r.numRuntimeErrorTestSuites;
}
console.log(`${passed} passed, ${failed} failed`);
const missing = [fuzz, kinds, crashes, lost, leaks].some((v) => v === null);
process.exit(jest.status !== 0 || failed > 0 || missing || lost > 0 || leaks > 0 || capsPassed > 0 ? 1 : 0);
