// Prints one line per scenario and, last, `conformance: N passed, N failed`, from the harness's checks.json files.
// Not-scored scenarios are shown but not counted; baseline entries (expected failures) are not counted as failures.
// Usage: node summarize.mjs <results-dir> [--baseline expected-failures.yml] [--scored requirements.yaml]
//        [--extra a,b] [--harness-rc N]
import fs from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
const dir = args[0];
const opt = (k) => {
  const i = args.indexOf(k);
  return i > 0 ? args[i + 1] : undefined;
};

/** The `server:` list of a simple YAML file. */
function serverList(file) {
  const out = new Set();
  let on = false;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (/^\S/.test(line)) on = /^server:/.test(line);
    const m = /^\s+-\s+([^\s#]+)\s*(#.*)?$/.exec(line);
    if (on && m) out.add(m[1]);
  }
  return out;
}

const baseline = opt('--baseline') ? serverList(opt('--baseline')) : new Set();
const scored = opt('--scored') ? serverList(opt('--scored')) : null;
for (const s of (opt('--extra') || '').split(',').filter(Boolean)) scored?.add(s);

const latest = new Map();
for (const d of fs.readdirSync(dir).sort()) {
  const m = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(d);
  if (m) latest.set(m[1], d);
}
let pass = 0;
let fail = 0;
let expected = 0;
for (const [scenario, d] of [...latest].sort()) {
  const counted = !scored || scored.has(scenario);
  const checks = JSON.parse(fs.readFileSync(path.join(dir, d, 'checks.json'), 'utf8'));
  const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
  const unexpected = bad.filter((c) => !baseline.has(scenario) && !baseline.has(`${scenario}:${c.id}`));
  const ok = checks.filter((c) => c.status === 'SUCCESS').length;
  const tag = !counted ? 'info' : unexpected.length ? 'FAIL' : 'ok  ';
  console.log(
    `${tag} ${scenario}: ${ok} checks ok, ${unexpected.length} unexpected, ${bad.length - unexpected.length} expected`,
  );
  if (!counted) continue;
  pass += ok;
  fail += unexpected.length;
  expected += bad.length - unexpected.length;
  for (const c of unexpected)
    console.log(`       - ${c.status} ${c.id}: ${(c.errorMessage || '').split('\n')[0].slice(0, 200)}`);
}
console.log(`(${expected} failures in scenarios that need the reference fixture's own tools and prompts, not counted)`);
if (Number(opt('--harness-rc') || 0) !== 0 && fail === 0) {
  console.log('the harness exited non-zero (a stale baseline entry or a crash): see the logs');
  fail = 1;
}
console.log(`conformance: ${pass} passed, ${fail} failed`);
