#!/usr/bin/env bash
# Runs the official MCP conformance harness (0.2.0-alpha.12, on the Node 22 its runner folder brings) against
# the real sa-forge-signer-serve on loopback: the frozen 2026-07-28 requirement set gated by
# expected-failures.yml, then the two SEP-2243 header scenarios on their own (pending, so never scored
# otherwise). A loopback proxy adds the bearer token, which the harness cannot send. Last line:
# "conformance: N passed, N failed".
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=${OUT:-$ROOT/.tmp/conformance}
rm -rf "$OUT"; mkdir -p "$OUT"
BASELINE=$HERE/expected-failures.yml

if [ ! -f "$HERE/node_modules/@modelcontextprotocol/conformance/dist/index.js" ]; then
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) || { echo "conformance: 0 passed, 1 failed"; exit 1; }
fi
# The harness needs Node 22 or later, which the project's own supported Node (24 or 26) is.
CONF="node $HERE/node_modules/@modelcontextprotocol/conformance/dist/index.js"

free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
CHAIN_PORT=$(free_port); SERVER_PORT=$(free_port); PROXY_PORT=$(free_port)
URL="http://127.0.0.1:$PROXY_PORT/mcp"

# The service under test, on its embedded chain, with one key and one token.
node "$ROOT/dist/src/cli/signer.js" localnet --listen "127.0.0.1:$CHAIN_PORT" > "$OUT/chain.log" 2>&1 &
CHAIN_PID=$!
# With no config, `key new` writes to ./keys (0700) under the folder it runs in.
PUBKEY=$(cd "$OUT" && env -u SIGNER_CONFIG node "$ROOT/dist/src/cli/signer.js" key new agent --class session 2>/dev/null)
TOKEN=$(node -e "console.log(require('$ROOT/dist/src/http/bearer-tokens.js').newToken())")
SHA=$(node -e "console.log(require('$ROOT/dist/src/http/bearer-tokens.js').tokenSha256(process.argv[1]))" "$TOKEN")
cat > "$OUT/config.yaml" <<YAML
cluster: local
rpc_url: http://127.0.0.1:$CHAIN_PORT
key_dir: keys
state_dir: state
log_level: warn
keys:
  agent: { class: session, pubkey: $PUBKEY }
serve:
  listen: 127.0.0.1:$SERVER_PORT
  allowed_hosts: [127.0.0.1, localhost]
  metrics: null
  tokens:
    - { name: conformance, sha256: $SHA, keys: [agent] }
YAML
for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$CHAIN_PORT" -d '{}' && break; sleep 0.1; done
node "$ROOT/dist/src/cli/serve.js" --config "$OUT/config.yaml" > "$OUT/server.log" 2>&1 &
SERVER_PID=$!
PROXY_PORT=$PROXY_PORT UPSTREAM="http://127.0.0.1:$SERVER_PORT" MCP_TOKEN=$TOKEN node "$HERE/auth-proxy.mjs" > "$OUT/proxy.log" 2>&1 &
PROXY_PID=$!
trap 'kill $PROXY_PID $SERVER_PID $CHAIN_PID 2>/dev/null; wait $PROXY_PID $SERVER_PID $CHAIN_PID 2>/dev/null' EXIT

code=000
for _ in $(seq 1 100); do
  code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL" -d '{}' || true)
  [ "$code" != "000" ] && [ "$code" != "502" ] && break
  kill -0 $SERVER_PID 2>/dev/null || { echo "the service exited:"; cat "$OUT/server.log"; echo "conformance: 0 passed, 1 failed"; exit 1; }
  sleep 0.2
done
if [ "$code" = "000" ] || [ "$code" = "502" ]; then echo "the service is not reachable through the proxy"; echo "conformance: 0 passed, 1 failed"; exit 1; fi

$CONF server --url "$URL" --requirements 2026-07-28 --expected-failures "$BASELINE" -o "$OUT/results" > "$OUT/requirements.log" 2>&1
rc_req=$?
rc_hdr=0
for s in http-header-validation http-custom-header-server-validation; do
  $CONF server --url "$URL" --scenario "$s" --spec-version 2026-07-28 -o "$OUT/results" > "$OUT/$s.log" 2>&1 || rc_hdr=1
done

echo "results: $OUT (harness exit: requirements=$rc_req headers=$rc_hdr)"
sed 's/\x1b\[[0-9;]*m//g' "$OUT/requirements.log" | sed -n '/^Expected failures/,$p' | grep -v '^  ~ '
rc=$(( rc_req || rc_hdr ))
node "$HERE/summarize.mjs" "$OUT/results" --baseline "$BASELINE" \
  --scored "$HERE/node_modules/@modelcontextprotocol/conformance/requirements/2026-07-28.yaml" \
  --extra http-header-validation,http-custom-header-server-validation --harness-rc $rc
exit $rc
