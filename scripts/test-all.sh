#!/usr/bin/env bash
# The whole test suite, as the README's second command and CI run it, from a clean clone:
# system packages and PostgreSQL, npm packages, build, then every suite. Each suite reports its own
# "N passed, N failed"; the last line here is the total across all of them.
set -uo pipefail
cd "$(dirname "$0")/.."
# Node 26, the newest LTS, when the machine's own node is older than the supported 24
. scripts/use-node.sh
mkdir -p .tmp/results
rm -f .tmp/results/*

passed=0
failed=0
status=0

note() { printf '\n=== %s\n' "$*"; }

# One summary row per suite: its last "N passed, N failed" line and its exit code (no such line: it failed).
tally() {
  local name=$1 log=$2 rc=$3 line
  line=$(grep -E '(^|: )[0-9]+ passed, [0-9]+ failed' "$log" 2>/dev/null | tail -n 1 | grep -oE '[0-9]+ passed, [0-9]+ failed')
  if [ -z "$line" ]; then echo "$name: no result line (exit $rc)"; else echo "$name: $line (exit $rc)"; fi
}

run_jest() {
  local name=$1; shift
  local json=.tmp/results/$name.json
  npx jest --json --outputFile="$json" "$@"
  local rc=$?
  if [ -f "$json" ]; then
    node -e "const r=require('./$json');console.log(r.numPassedTests+' passed, '+(r.numFailedTests+r.numRuntimeErrorTestSuites)+' failed')" \
      | tee .tmp/results/$name.line
  fi
  return $rc
}

note "system packages and PostgreSQL"
bash scripts/ci/ensure-system.sh || { echo "0 passed, 1 failed"; exit 1; }

note "npm packages"
npm install --no-audit --no-fund --loglevel=error || { echo "0 passed, 1 failed"; exit 1; }

note "build and typecheck"
npm run -s build && npm run -s typecheck
build_rc=$?
if [ "$build_rc" != 0 ]; then status=1; failed=$((failed + 1)); echo "build: failed"; fi

note "lint (typescript-eslint strict-type-checked) and format (prettier --check)"
npm run -s lint && npx prettier --check . >/dev/null
lint_rc=$?
if [ "$lint_rc" != 0 ]; then status=1; failed=$((failed + 1)); echo "lint or format: failed"; else echo "lint and format: ok"; fi

summary=()
note "unit, engine, ledger, chain, HTTP/MCP, relay, replicas and end-to-end tests (jest)"
run_jest main > >(tee .tmp/results/main.log) 2>&1
summary+=("$(tally main .tmp/results/main.line $?)")

if [ -f scripts/containers/test-containers.sh ]; then
  note "containers (npm run test:containers)"
  npm run -s test:containers 2>&1 | tee .tmp/results/containers.log
  summary+=("$(tally containers .tmp/results/containers.log "${PIPESTATUS[0]}")")
fi

if node -e "process.exit(require('./package.json').scripts['test:abuse']?0:1)"; then
  note "abuse (npm run test:abuse)"
  npm run -s test:abuse 2>&1 | tee .tmp/results/abuse.log
  summary+=("$(tally abuse .tmp/results/abuse.log "${PIPESTATUS[0]}")")
fi

if [ -f scripts/conformance/run.sh ]; then
  note "MCP conformance harness"
  bash scripts/conformance/run.sh 2>&1 | tee .tmp/results/conformance.log
  summary+=("$(tally conformance .tmp/results/conformance.log "${PIPESTATUS[0]}")")
fi

note "summary"
for s in "${summary[@]}"; do
  echo "$s"
  case "$s" in *"no result line"*) failed=$((failed + 1)); status=1 ;; esac
  p=$(echo "$s" | grep -oE '[0-9]+ passed' | grep -oE '^[0-9]+'); f=$(echo "$s" | grep -oE '[0-9]+ failed' | grep -oE '^[0-9]+')
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0}))
  case "$s" in *"(exit 0)"*) ;; *) status=1 ;; esac
done
echo "$passed passed, $failed failed"
exit $status
