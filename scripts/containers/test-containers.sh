#!/usr/bin/env bash
# npm run test:containers — proves the Dockerfile, compose.yaml and deploy/ for real.
#
# Static, always: Dockerfile policy, compose config + policy, kustomize render of base and overlays validated
# against the Kubernetes schemas + our policy, shipped configs loading with the real loader.
# With podman (installed from Debian's packages when missing and we are root): build the real Dockerfile against a
# local stand-in for the digest-pinned base image; run the service read-only as uid 10001 with every capability
# dropped and answer MCP through it; run the stdio relay container as a client would; compose up, healthy, down;
# compose's `replicas` profile on a PostgreSQL image built from Debian's package, two replicas racing signs on one cap.
# Networking: loopback and slirp4netns only (never a bridge). Ends with `containers: N passed, N failed, N skipped`.
#
# Environment: SFS_CONTAINERS_SKIP_PODMAN=1 skips the podman part; SFS_CONTAINERS_FROM=head builds the image from
# the last commit (git archive) instead of the work tree, for a tree with others' work in progress;
# SFS_CONTAINERS_CACHE (default
# /var/tmp/sa-forge-signer-containers) keeps the base image's rootfs and the npm cache between runs.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$REPO/scripts/containers
WORK=$REPO/.tmp/containers
CACHE=${SFS_CONTAINERS_CACHE:-/var/tmp/sa-forge-signer-containers}
IMAGE=localhost/sa-forge-signer:ci
BASE_TAG=docker.io/library/node:24-bookworm-slim
# the Node release inside the digest the Dockerfile pins; the stand-in carries that release from the npm registry
BASE_NODE_VERSION=24.18.0
SIGNER_CTR=sfs-ci-signer
PROJECT=sfsci
export CONTAINERS_CONF=$HERE/containers.conf
mkdir -p "$WORK/logs"
cd "$REPO" || exit 1

PASSED=0 FAILED=0 SKIPPED=0
T0=$SECONDS
declare -A FACTS=()
note() { printf '     %s\n' "$*"; }
# step NAME CMD...: runs CMD with its output in a log; prints ok/FAIL with the time taken (and the log's tail on FAIL)
step() {
  local name=$1; shift
  local log="$WORK/logs/$(printf '%s' "$name" | tr -c 'a-zA-Z0-9' '_' | cut -c1-60).log"
  local t=$SECONDS
  if "$@" >"$log" 2>&1; then
    PASSED=$((PASSED + 1)); printf 'ok   %-92s %4ss\n' "$name" $((SECONDS - t))
    return 0
  fi
  FAILED=$((FAILED + 1)); printf 'FAIL %-92s %4ss\n' "$name" $((SECONDS - t))
  { grep -aE '^(FAIL|STRICT|INVALID|UNKNOWN|YAML)' "$log" || tail -25 "$log"; } | head -40 | tr -d '\000' | sed 's/^/     /'
  return 1
}
skip() { SKIPPED=$((SKIPPED + 1)); printf 'skip %s: %s\n' "$1" "$2"; }
# a step whose prerequisite failed: counted as failed, never silently passed over
blocked() { FAILED=$((FAILED + 1)); printf 'FAIL %s (not run: %s)\n' "$1" "$2"; }

PIDS=()
cleanup() {
  if command -v podman >/dev/null 2>&1; then
    if [ -n "${COMPOSE_READY:-}" ]; then compose down -v -t 5 >/dev/null 2>&1 || true; fi
    if [ -n "${COMPOSE_REPLICAS_READY:-}" ]; then rcompose down -v -t 5 >/dev/null 2>&1 || true; fi
    podman rm -f -t 2 "$SIGNER_CTR" >/dev/null 2>&1 || true
    [ -n "${REPLICAS:-}" ] && replicas_cleanup
  fi
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
# wait_http URL SECONDS: polls until 200; prints the milliseconds it took
wait_http() {
  node -e '
    const [url, secs] = process.argv.slice(1); const t0 = Date.now();
    (async () => { while (Date.now() - t0 < secs * 1000) {
      try { const r = await fetch(url, { signal: AbortSignal.timeout(2000) }); if (r.status === 200) { console.log(Date.now() - t0); return; } } catch {}
      await new Promise((r) => setTimeout(r, 50)); }
      console.error(`no 200 from ${url} within ${secs} s`); process.exit(1); })();' "$1" "$2"
}

echo "== static checks"
step "Dockerfile policy (digest pins, uid 10001, exec-form CMD, no ADD, HEALTHCHECK, labels)" \
  node "$HERE/dockerfile-policy.mjs" Dockerfile
# the policy must not be vacuous: a Dockerfile breaking each rule is rejected on each rule
policy_rejects_bad() {
  ! node "$HERE/dockerfile-policy.mjs" "$HERE/fixtures/Dockerfile.bad" >"$WORK/bad-policy.out" 2>&1 || return 1
  cat "$WORK/bad-policy.out"; [ "$(grep -c '^FAIL' "$WORK/bad-policy.out")" -ge 9 ]
}
step "Dockerfile policy rejects a Dockerfile that breaks every rule" policy_rejects_bad

# podman, runc, slirp4netns and docker-compose come from Debian's packages; install them once when missing
ensure_tools() {
  local need=()
  for t in podman runc slirp4netns docker-compose debootstrap; do command -v "$t" >/dev/null 2>&1 || need+=("$t"); done
  [ ${#need[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then echo "missing ${need[*]} and cannot apt-get install (not root)"; return 1; fi
  echo "installing podman and docker-compose from Debian's packages (missing: ${need[*]})"
  apt-get update -q >"$WORK/logs/apt.log" 2>&1 &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      podman runc netavark slirp4netns uidmap fuse-overlayfs debootstrap docker-compose >>"$WORK/logs/apt.log" 2>&1 \
    || { tail -5 "$WORK/logs/apt.log"; return 1; }
}
TOOLS_NOTE=$(ensure_tools 2>&1); TOOLS_OK=$?
[ -n "$TOOLS_NOTE" ] && note "$TOOLS_NOTE"

if command -v docker-compose >/dev/null 2>&1; then
  step "compose.yaml valid (docker-compose config -q, default, replicas and hsm profiles, CI override)" \
    bash -c 'docker-compose -f compose.yaml config -q && docker-compose -f compose.yaml --profile replicas --profile relay --profile hsm config -q &&
             docker-compose -f compose.yaml -f scripts/containers/compose.ci.yaml config -q'
  step "compose.yaml policy (127.0.0.1 only, read-only, uid 10001, caps, 230 s grace, secrets, replicas)" \
    bash -c 'docker-compose -f compose.yaml --profile replicas --profile relay --profile hsm config | node scripts/containers/compose-policy.mjs'
else
  skip "compose.yaml checks" "docker-compose is not installed and could not be installed"
fi

if command -v kubectl >/dev/null 2>&1; then
  render() {
    kubectl kustomize deploy/base >"$WORK/base.yaml" && kubectl kustomize deploy/overlays/postgres >"$WORK/overlay.yaml" &&
      kubectl kustomize deploy/overlays/postgres-ha >"$WORK/overlay-ha.yaml"
  }
  if step "kubectl kustomize deploy/base, deploy/overlays/postgres and deploy/overlays/postgres-ha" render; then
    # The CloudNativePG Cluster is a custom resource: kubernetes-models has no schema for it, so it is left out here
    # (listed as skipped) and checked by its own step below.
    step "every rendered manifest and Secret template valid against the Kubernetes schemas (strict; not the Cluster)" \
      node "$HERE/validate-k8s.mjs" --except postgresql.cnpg.io/v1/Cluster "$WORK/base.yaml" "$WORK/overlay.yaml" \
      "$WORK/overlay-ha.yaml" deploy/base/secret-template.yaml deploy/overlays/postgres/secret-template.yaml
    step "Kubernetes policy (non-root, read-only, drop ALL, seccomp, probes, grace, NetworkPolicy, PDB, HA Cluster)" \
      node "$HERE/k8s-policy.mjs" "$WORK/base.yaml" "$WORK/overlay.yaml" "$WORK/overlay-ha.yaml"
    # No package carries CloudNativePG's CRD schema: the Cluster is checked against our own schema of the fields the
    # overlay uses, written from CloudNativePG's API reference (scripts/containers/cnpg-cluster-schema.json), plus
    # the webhook's cross-field rules; its negative cases are in test/containers/cnpg-cluster-schema.test.ts.
    step "CloudNativePG Cluster against OUR schema of the fields it uses (from the API reference, not the CRD)" \
      node "$HERE/validate-cnpg-cluster.mjs" "$WORK/overlay-ha.yaml"
  else
    blocked "Kubernetes schema and policy checks" "kustomize render failed"
  fi
else
  skip "Kubernetes checks" "kubectl is not installed"
fi
step "shipped configs load with the real loader and match their mounts (jest test/containers)" \
  npx jest --ci test/containers

echo "== podman"
PODMAN_WHY=""
if [ "${SFS_CONTAINERS_SKIP_PODMAN:-}" = 1 ]; then PODMAN_WHY="SFS_CONTAINERS_SKIP_PODMAN=1"
elif [ $TOOLS_OK -ne 0 ] || ! command -v podman >/dev/null 2>&1; then PODMAN_WHY="podman is not installed and could not be installed"
elif ! podman info >"$WORK/logs/podman-info.log" 2>&1; then PODMAN_WHY="podman cannot run here ($(grep -m1 -iE 'error' "$WORK/logs/podman-info.log" | cut -c1-160))"
fi
if [ -n "$PODMAN_WHY" ]; then
  echo "podman unavailable: $PODMAN_WHY; skipping the image build, run, stdio and compose steps"
  skip "podman steps (build, run, MCP over HTTP and stdio, compose)" "$PODMAN_WHY"
  echo "containers: $PASSED passed, $FAILED failed, $SKIPPED skipped"
  [ $FAILED -eq 0 ]; exit
fi

podman rm -f -t 2 "$SIGNER_CTR" >/dev/null 2>&1 || true
base_image() {
  if podman image exists "$BASE_TAG"; then echo "cached: $BASE_TAG"; return 0; fi
  mkdir -p "$CACHE"; TAG=$BASE_TAG NODE_VERSION=$BASE_NODE_VERSION "$HERE/make-base-image.sh" "$CACHE/rootfs"
}
step "base image stand-in for node:24-bookworm-slim (Debian bookworm + Node $BASE_NODE_VERSION)" base_image || true

PINNED=$(grep -m1 -oE '^FROM node:24-bookworm-slim@sha256:[0-9a-f]{64}' Dockerfile | cut -d' ' -f2)
CONTEXT=.
if [ "${SFS_CONTAINERS_FROM:-}" = head ]; then
  CONTEXT=$WORK/context; rm -rf "$CONTEXT"; mkdir -p "$CONTEXT"
  git archive HEAD | tar -x -C "$CONTEXT"
  note "building from the last commit ($(git rev-parse --short HEAD)), not the work tree"
fi
build_image() {
  # the digest-pinned FROM resolves to the local stand-in; the Dockerfile itself is built unchanged
  # --jobs 2: the deps and build stages are independent; on a cold cache they run side by side
  podman build --format docker --network=host --layers --jobs 2 \
    --build-context "$PINNED=container-image://$BASE_TAG" \
    --build-arg "REVISION=$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
    --build-arg "VERSION=$(node -p 'require("./package.json").version')" \
    -t "$IMAGE" "$CONTEXT"
}
t=$SECONDS
if ! step "podman build of the real Dockerfile" build_image; then
  for s in "image facts" "service container" "MCP over HTTP" "stdio relay container" "compose up/healthy/down"; do blocked "$s" "image build failed"; done
  echo "containers: $PASSED passed, $FAILED failed, $SKIPPED skipped"; exit 1
fi
FACTS[build_s]=$((SECONDS - t))
FACTS[image_mb]=$(podman image inspect "$IMAGE" --format '{{.Size}}' | awk '{printf "%.0f", $1/1000000}')
note "image $IMAGE: ${FACTS[image_mb]} MB, built in ${FACTS[build_s]} s"

image_facts() {
  local user cmd health
  user=$(podman image inspect "$IMAGE" --format '{{.Config.User}}'); echo "user=$user"; [ "$user" = "10001:10001" ] || return 1
  cmd=$(podman image inspect "$IMAGE" --format '{{json .Config.Cmd}}'); echo "cmd=$cmd"
  [ "$cmd" = '["sa-forge-signer-serve","--config","/etc/sa-forge-signer/config.yaml"]' ] || return 1
  health=$(podman image inspect "$IMAGE" --format '{{json .Config.Healthcheck}}'); echo "healthcheck=$health"; [[ $health == *'/health'* ]] || return 1
  podman image inspect "$IMAGE" --format '{{index .Labels "org.opencontainers.image.revision"}}' | grep -qE '^[0-9a-f]{40}$|^unknown$' || return 1
  # the three entrypoints answer on PATH; production dependencies only: no LiteSVM, no dev tools, no npm
  local run=(podman run --rm --no-healthcheck --read-only --cap-drop ALL --network none "$IMAGE")
  "${run[@]}" sa-forge-signer-serve --version && "${run[@]}" sa-forge-signer-mcp --version && "${run[@]}" sa-forge-signer --version || return 1
  "${run[@]}" node -e '
    for (const m of ["litesvm", "typescript", "jest", "autocannon", "kubernetes-models"]) {
      let found = true; try { require.resolve(m); } catch { found = false; }
      if (found) { console.error(`dev dependency ${m} is in the runtime image`); process.exit(1); }
    }
    require("better-sqlite3")(":memory:").prepare("select 1").get(); console.log("better-sqlite3 loads; no dev dependencies");' || return 1
  # the service's code cache was made for this image's node under the flags of serve.js's #! line: V8 takes it there
  "${run[@]}" sh -c 'exec $(sed -n "1s/^#!\/usr\/bin\/env -S //p" /app/dist/src/cli/serve.js) -e "$0"' '
    require("/app/dist/src/cli/heap.js").limitOldGenerationGrowth();
    const { cacheRejected } = require("/app/dist/src/cli/serve-launch.js").compileBundle("/app/dist/src/cli");
    console.log(`code cache rejected: ${cacheRejected}`); process.exit(cacheRejected === false ? 0 : 1);' || return 1
  ! "${run[@]}" sh -c 'command -v npm || command -v npx || command -v yarn' || { echo "a package manager is in the runtime image"; return 1; }
}
step "image: USER 10001:10001, exec CMD serve, HEALTHCHECK, labels, 3 bins, prod deps only, no npm, code cache taken" image_facts

# ---- the world the service runs in: a key and a token made with the image's own operator CLI, a chain on loopback
rm -rf "$WORK/world"; mkdir -p "$WORK/world/secrets/keys" "$WORK/world/state"
chown 10001:10001 "$WORK/world/secrets" "$WORK/world/secrets/keys" "$WORK/world/state"
chmod 0700 "$WORK/world/secrets/keys" "$WORK/world/state"
CLI=(podman run --rm --no-healthcheck --read-only --user 10001:10001 --cap-drop ALL --security-opt no-new-privileges --network none)
make_secrets() {
  PUBKEY=$("${CLI[@]}" -v "$WORK/world/secrets/keys:/run/keys" -w /run "$IMAGE" sa-forge-signer key new agent --class session) || return 1
  TOKEN_SHA=$("${CLI[@]}" -v "$WORK/world/secrets:/out" "$IMAGE" sa-forge-signer token new agent --out /out/agent.token) || return 1
  echo "pubkey=$PUBKEY token sha256=$TOKEN_SHA"
  [ "$(stat -c '%a %u' "$WORK/world/secrets/keys/agent.json")" = "600 10001" ] || return 1
  printf -- '- name: agent\n  sha256: %s\n  keys: [agent]\n' "$TOKEN_SHA" >"$WORK/world/secrets/tokens.yaml"
  chown 10001:10001 "$WORK/world/secrets/tokens.yaml"; chmod 0600 "$WORK/world/secrets/tokens.yaml"
  echo "$PUBKEY" >"$WORK/world/pubkey"
}
step "key and token made with the image's operator CLI (key file 0600, uid 10001)" make_secrets
PUBKEY=$(cat "$WORK/world/pubkey" 2>/dev/null || echo "")

# The chain: the embedded LiteSVM chain on the host's loopback (a development part, never in the image). The
# container reaches it at 10.0.2.2 through slirp4netns. Without it, the RPC points at a closed loopback port:
# /health and tools/list still work, /ready and key balances do not.
CHAIN_PORT=$(free_port)
GENESIS=""
start_chain() {
  [ -f dist/src/cli/signer.js ] && [ -d dist/src/localnet ] || npm run -s build || return 1
  node dist/src/cli/signer.js localnet --listen "127.0.0.1:$CHAIN_PORT" --fund "$PUBKEY=5000000000" >"$WORK/logs/localnet.out" 2>"$WORK/logs/localnet.err" &
  PIDS+=($!)
  for _ in $(seq 100); do
    GENESIS=$(curl -fsS -m 2 -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"}' \
      "http://127.0.0.1:$CHAIN_PORT" 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{console.log(JSON.parse(s).result??"")}catch{}})')
    [ -n "$GENESIS" ] && { echo "$GENESIS" >"$WORK/world/genesis"; echo "chain on 127.0.0.1:$CHAIN_PORT genesis $GENESIS"; return 0; }
    sleep 0.1
  done
  cat "$WORK/logs/localnet.err"; return 1
}
if step "embedded chain on the host's loopback (sa-forge-signer localnet)" start_chain; then
  GENESIS=$(cat "$WORK/world/genesis"); HAVE_CHAIN=1
else
  HAVE_CHAIN=""; GENESIS=6qaAozzun2WV83PRDgqf79WXtbqfnezKB3demjxXV5EY
fi

write_config() { # write_config FILE RPC_URL
  cat >"$1" <<EOF
# generated by scripts/containers/test-containers.sh
cluster: ci-localnet
clusters:
  ci-localnet:
    genesis_hash: $GENESIS
    rpc_url: $2
    explorer: null
    programs:
      - { label: compute-budget, address: ComputeBudget111111111111111111111111111111 }
      - { label: system, address: "11111111111111111111111111111111" }
    game_programs: []
    player_profile: null
key_dir: /run/keys
state_dir: /var/lib/sa-forge-signer
log_level: info
keys:
  agent:
    class: session
    pubkey: $PUBKEY
    transfer_to: []
ledger:
  store: sqlite
serve:
  listen: 0.0.0.0:8790
  allowed_hosts: [127.0.0.1, localhost]
  tokens_file: /run/secrets/signer_tokens
  metrics: 0.0.0.0:9791
  drain_ms: 5000
EOF
  chmod 0644 "$1"
}
CHAIN_IN_CTR=http://10.0.2.2:${CHAIN_PORT}
[ -n "$HAVE_CHAIN" ] || CHAIN_IN_CTR=http://10.0.2.2:9   # discard port on the host's loopback: nothing listens
write_config "$WORK/world/config.yaml" "$CHAIN_IN_CTR"

# ---- Kubernetes key install: the init container of deploy/base, run in the image against a Secret-shaped volume
# (root-owned files 0440 behind ..data symlinks, group 10001 as fsGroup makes them) and an fsGroup emptyDir; the
# keys it writes must be what the key loader accepts.
k8s_key_install() {
  [ -f "$WORK/base.yaml" ] || { echo "no rendered deploy/base"; return 1; }
  node -e '
    const { parseAllDocuments } = require("yaml");
    const dep = parseAllDocuments(require("fs").readFileSync(process.argv[1], "utf8")).map((d) => d.toJS()).find((o) => o?.kind === "Deployment");
    const init = dep.spec.template.spec.initContainers.find((c) => c.name === "install-keys");
    process.stdout.write([...init.command, ...init.args].join("\0"));' "$WORK/base.yaml" >"$WORK/init-cmd" || return 1
  local k=$WORK/k8s; rm -rf "$k"; mkdir -p "$k/secret/..2026_01_01_00_00_00.000000000" "$k/emptydir"
  cp "$WORK/world/secrets/keys/agent.json" "$k/secret/..2026_01_01_00_00_00.000000000/agent.json"
  chown -R 0:10001 "$k/secret"; chmod 0440 "$k/secret/..2026_01_01_00_00_00.000000000/agent.json"
  ln -s ..2026_01_01_00_00_00.000000000 "$k/secret/..data"; ln -s ..data/agent.json "$k/secret/agent.json"
  chown 0:10001 "$k/emptydir"; chmod 2777 "$k/emptydir"
  local cmd=(); mapfile -d '' -t cmd <"$WORK/init-cmd"
  podman run --rm --no-healthcheck --read-only --user 10001:10001 --cap-drop ALL --security-opt no-new-privileges --network none \
    -v "$k/secret:/run/secrets/keys:ro" -v "$k/emptydir:/run/signer" "$IMAGE" "${cmd[@]}" || return 1
  stat -c '%n %a uid=%u' "$k/emptydir/keys" "$k/emptydir/keys/agent.json"
  # the real loader, in the image, on the installed keys mounted read-only at /run/keys as the Deployment does (and a
  # writable state dir as its state volume: `key show` opens the ledger for the key's halts and spend)
  mkdir -p "$k/state"; chown 10001:10001 "$k/state"; chmod 0700 "$k/state"
  local state=(-v "$k/state:/var/lib/sa-forge-signer")
  "${CLI[@]}" "${state[@]}" -v "$WORK/world/config.yaml:/etc/sa-forge-signer/config.yaml:ro" -v "$k/emptydir/keys:/run/keys:ro" \
    -v "$WORK/world/secrets/tokens.yaml:/run/secrets/signer_tokens:ro" \
    "$IMAGE" sa-forge-signer --config /etc/sa-forge-signer/config.yaml key show agent >"$WORK/k8s-keyshow.txt" 2>&1
  cat "$WORK/k8s-keyshow.txt"; grep -qx 'key: ok' "$WORK/k8s-keyshow.txt" || return 1
  # why the init container exists: the Secret volume itself, mounted at /run/keys, is refused by the loader
  "${CLI[@]}" "${state[@]}" -v "$WORK/world/config.yaml:/etc/sa-forge-signer/config.yaml:ro" -v "$k/secret:/run/keys:ro" \
    -v "$WORK/world/secrets/tokens.yaml:/run/secrets/signer_tokens:ro" \
    "$IMAGE" sa-forge-signer --config /etc/sa-forge-signer/config.yaml key show agent 2>&1 | grep '^key:' | tee "$WORK/k8s-keyshow-direct.txt"
  grep -q '^key: unavailable' "$WORK/k8s-keyshow-direct.txt"
}
if [ -f "$WORK/base.yaml" ]; then
  step "k8s install-keys init container: Secret-shaped volume -> 0700/0600 keys the loader accepts (refuses the raw Secret)" k8s_key_install
else
  blocked "k8s install-keys init container" "deploy/base did not render"
fi

# ---- the service container: read-only root (no tmpfs but /tmp, as readOnlyRootFilesystem), uid 10001, no caps
HTTP_PORT=$(free_port)
run_service() {
  podman rm -f -t 2 "$SIGNER_CTR" >/dev/null 2>&1
  local t0; t0=$(date +%s%N)
  podman run -d --name "$SIGNER_CTR" \
    --read-only --read-only-tmpfs=false --tmpfs /tmp:rw,size=16m,mode=1777 \
    --user 10001:10001 --cap-drop ALL --security-opt no-new-privileges \
    --network slirp4netns:allow_host_loopback=true -p "127.0.0.1:$HTTP_PORT:8790" \
    -v "$WORK/world/config.yaml:/etc/sa-forge-signer/config.yaml:ro" \
    -v "$WORK/world/secrets/keys:/run/keys:ro" \
    -v "$WORK/world/secrets/tokens.yaml:/run/secrets/signer_tokens:ro" \
    -v "$WORK/world/state:/var/lib/sa-forge-signer" \
    --stop-timeout 230 "$IMAGE" || return 1
  local health_ms ready_ms
  health_ms=$(wait_http "http://127.0.0.1:$HTTP_PORT/health" 60) || { podman logs "$SIGNER_CTR" 2>&1 | tail -20; return 1; }
  health_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  echo "start -> /health 200: $health_ms ms"
  echo "$health_ms" >"$WORK/world/health_ms"
  curl -fsS "http://127.0.0.1:$HTTP_PORT/health" | grep -q '"status":"ok"' || return 1
  # the image's own HEALTHCHECK (no systemd here to schedule it: run it once on demand)
  podman healthcheck run "$SIGNER_CTR" && echo "image HEALTHCHECK: healthy" || return 1
  if [ -n "$HAVE_CHAIN" ]; then
    wait_http "http://127.0.0.1:$HTTP_PORT/ready" 60 >/dev/null || { curl -sS "http://127.0.0.1:$HTTP_PORT/ready"; podman logs "$SIGNER_CTR" 2>&1 | tail -20; return 1; }
    ready_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    echo "start -> /ready 200: $ready_ms ms"; echo "$ready_ms" >"$WORK/world/ready_ms"
  fi
}
if step "service container starts read-only as 10001, no capabilities; /health$([ -n "$HAVE_CHAIN" ] && echo ', /ready') 200, HEALTHCHECK healthy" run_service; then
  FACTS[start_health_ms]=$(cat "$WORK/world/health_ms"); FACTS[start_ready_ms]=$(cat "$WORK/world/ready_ms" 2>/dev/null || echo "n/a")
  note "start-to-ready: ${FACTS[start_ready_ms]} ms (/ready), ${FACTS[start_health_ms]} ms (/health), from podman run"
  SERVICE_UP=1
else
  SERVICE_UP=""
fi

if [ -n "$SERVICE_UP" ]; then
  confinement() {
    podman exec "$SIGNER_CTR" node -e '
      const fs = require("fs");
      const st = fs.readFileSync("/proc/1/status", "utf8");
      const field = (k) => (st.match(new RegExp(`^${k}:\\s*(.*)$`, "m")) || [])[1];
      const out = { uid: field("Uid"), CapEff: field("CapEff"), CapPrm: field("CapPrm"), CapBnd: field("CapBnd"), NoNewPrivs: field("NoNewPrivs") };
      for (const p of ["/app/x", "/etc/sa-forge-signer/x", "/run/keys/x", "/usr/local/bin/x"]) {
        try { fs.writeFileSync(p, "x"); out[p] = "WRITABLE"; } catch (e) { out[p] = e.code; }
      }
      try { fs.writeFileSync("/var/lib/sa-forge-signer/.probe", "x"); fs.unlinkSync("/var/lib/sa-forge-signer/.probe"); out.state = "writable"; } catch (e) { out.state = e.code; }
      console.log(JSON.stringify(out));
      const ok = out.uid.split(/\s+/).every((u) => u === "10001") && [out.CapEff, out.CapPrm, out.CapBnd].every((c) => /^0+$/.test(c)) &&
        out.NoNewPrivs === "1" && ["/app/x", "/etc/sa-forge-signer/x", "/run/keys/x", "/usr/local/bin/x"].every((p) => out[p] === "EROFS" || out[p] === "EACCES") &&
        out.state === "writable";
      process.exit(ok ? 0 : 1);'
    # nothing of the published port is reachable but 127.0.0.1
    # (no `tee /dev/stderr` here: it would reopen the step's log with O_TRUNC and leave NUL holes in it)
    podman port "$SIGNER_CTR" >"$WORK/ports.txt"; cat "$WORK/ports.txt"
    grep -q '^8790/tcp -> 127.0.0.1:' "$WORK/ports.txt" && ! grep -vq '^8790/tcp -> 127.0.0.1:' "$WORK/ports.txt" || return 1
    [ -f "$WORK/world/state/ledger.sqlite" ] || { echo "no ledger.sqlite in the state volume"; ls -la "$WORK/world/state"; return 1; }
  }
  step "inside: uid 10001, all capability sets 0, NoNewPrivs, root/config/keys read-only, state writable" confinement
  step "MCP over HTTP through the container: 401 without a token, tools/list with it" \
    node "$HERE/mcp-probe.mjs" http "http://127.0.0.1:$HTTP_PORT/mcp" "$WORK/world/secrets/agent.token"
  relay_cmd=(podman run --rm -i --no-healthcheck --network "container:$SIGNER_CTR" --read-only --user 10001:10001 --cap-drop ALL
    --security-opt no-new-privileges -e SIGNER_URL=http://127.0.0.1:8790/mcp -e SIGNER_TOKEN_FILE=/run/secrets/agent_token
    -v "$WORK/world/secrets/agent.token:/run/secrets/agent_token:ro" "$IMAGE" sa-forge-signer-mcp)
  step "podman run --rm -i IMAGE sa-forge-signer-mcp: discover, tools/list, key_show over stdio" \
    node "$HERE/mcp-probe.mjs" stdio agent "$PUBKEY" -- "${relay_cmd[@]}"
  graceful_stop() {
    local t=$SECONDS code
    podman stop -t 30 "$SIGNER_CTR" >/dev/null || return 1
    code=$(podman inspect "$SIGNER_CTR" --format '{{.State.ExitCode}}')
    echo "stopped in $((SECONDS - t)) s, exit code $code"; podman logs "$SIGNER_CTR" 2>&1 | tail -3
    [ "$code" = 0 ] && [ $((SECONDS - t)) -lt 30 ]
  }
  step "SIGTERM stops the service cleanly (exit 0, before the stop timeout)" graceful_stop
  podman rm -f -t 2 "$SIGNER_CTR" >/dev/null 2>&1
else
  for s in "confinement" "MCP over HTTP" "stdio relay container" "graceful stop"; do blocked "$s" "the service container did not start"; done
fi

# ---- replicas: two signer containers on one PostgreSQL ledger (the host's, reached through slirp4netns), set up as
# compose's `replicas` profile: no state volume, the ledger URL from a secret file. The compose step further down runs
# the profile itself, on a PostgreSQL container.
REPLICAS=(sfs-ci-replica-a sfs-ci-replica-b)
PG_DB=sfs_ci_containers_$$
replicas() {
  local ports=() i
  psql -h 127.0.0.1 -U postgres -d postgres -qc "create database $PG_DB" || return 1
  printf 'postgres://postgres@10.0.2.2:5432/%s\n' "$PG_DB" >"$WORK/world/secrets/ledger_url"
  chown 10001:10001 "$WORK/world/secrets/ledger_url"; chmod 0600 "$WORK/world/secrets/ledger_url"
  sed -e 's|^  store: sqlite$|  store: postgres\n  url_file: /run/secrets/ledger_url|' "$WORK/world/config.yaml" >"$WORK/world/config.replicas.yaml"
  grep -q 'store: postgres' "$WORK/world/config.replicas.yaml" || return 1
  for i in 0 1; do
    ports[$i]=$(free_port)
    podman rm -f -t 2 "${REPLICAS[$i]}" >/dev/null 2>&1; podman volume rm -f "${REPLICAS[$i]}-state" >/dev/null 2>&1
    podman run -d --name "${REPLICAS[$i]}" --read-only --read-only-tmpfs=false --tmpfs /tmp:rw,size=16m,mode=1777 \
      --user 10001:10001 --cap-drop ALL --security-opt no-new-privileges \
      --network slirp4netns:allow_host_loopback=true -p "127.0.0.1:${ports[$i]}:8790" \
      -v "$WORK/world/config.replicas.yaml:/etc/sa-forge-signer/config.yaml:ro" \
      -v "$WORK/world/secrets/keys:/run/keys:ro" \
      -v "$WORK/world/secrets/tokens.yaml:/run/secrets/signer_tokens:ro" \
      -v "$WORK/world/secrets/ledger_url:/run/secrets/ledger_url:ro" \
      -v "${REPLICAS[$i]}-state:/var/lib/sa-forge-signer" \
      "$IMAGE" >/dev/null || return 1
  done
  for i in 0 1; do
    wait_http "http://127.0.0.1:${ports[$i]}/ready" 60 >/dev/null || { podman logs "${REPLICAS[$i]}" 2>&1 | tail -20; return 1; }
  done
  echo "both replicas ready on 127.0.0.1:${ports[0]} and :${ports[1]}"
  local tok=$WORK/world/secrets/agent.token probe=$HERE/mcp-probe.mjs
  node "$probe" call "http://127.0.0.1:${ports[0]}/mcp" "$tok" halt '{"key":"agent","reason":"container replicas test"}' || return 1
  node "$probe" call "http://127.0.0.1:${ports[1]}/mcp" "$tok" key_show '{"key":"agent"}' | tee "$WORK/replica-b.json" || return 1
  node -e 'const v=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).keys[0];
    if (v.halted?.reason !== "container replicas test") { console.error("replica B does not see the halt made through A"); process.exit(1); }
    console.log("replica B sees the halt made through replica A")' "$WORK/replica-b.json" || return 1
  # only an operator releases a halt: the CLI inside replica B, on the shared ledger
  podman exec "${REPLICAS[1]}" sa-forge-signer --config /etc/sa-forge-signer/config.yaml resume agent || return 1
  node "$probe" call "http://127.0.0.1:${ports[0]}/mcp" "$tok" key_show '{"key":"agent"}' | tee "$WORK/replica-a.json" || return 1
  node -e 'const v=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).keys[0];
    if (v.halted !== null) { console.error("replica A still halted after resume through B"); process.exit(1); }
    console.log("replica A sees the resume made through replica B")' "$WORK/replica-a.json"
}
replicas_cleanup() {
  podman rm -f -t 5 "${REPLICAS[@]}" >/dev/null 2>&1
  for r in "${REPLICAS[@]}"; do podman volume rm -f "$r-state" >/dev/null 2>&1; done
  psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists $PG_DB" >/dev/null 2>&1
}
if ! command -v psql >/dev/null 2>&1 || ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  skip "replicas on PostgreSQL" "no PostgreSQL on 127.0.0.1:5432 (scripts/ci/ensure-system.sh starts one)"
elif [ -z "$HAVE_CHAIN" ]; then
  blocked "replicas on PostgreSQL" "no chain, so /ready cannot pass"
else
  step "two replica containers on one PostgreSQL ledger: a halt through A is seen by B, resume by the CLI in B" replicas
  replicas_cleanup
fi

# ---- compose: docker-compose 1.29 against podman's Docker API socket
SOCK=$WORK/podman.sock
compose() {
  DOCKER_HOST=unix://$SOCK docker-compose -p "$PROJECT" -f compose.yaml -f scripts/containers/compose.ci.yaml "$@"
}
export SFS_IMAGE=$IMAGE SFS_CONFIG=$WORK/world/config.yaml SFS_KEYS_DIR=$WORK/world/secrets/keys \
  SFS_TOKENS=$WORK/world/secrets/tokens.yaml SFS_AGENT_TOKEN=$WORK/world/secrets/agent.token
SFS_PORT=$(free_port); SFS_METRICS_PORT=$(free_port); export SFS_PORT SFS_METRICS_PORT
podman_api() {
  rm -f "$SOCK"
  podman system service --time=0 "unix://$SOCK" >"$WORK/logs/podman-service.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 100); do [ -S "$SOCK" ] && return 0; sleep 0.1; done
  echo "no podman API socket at $SOCK"; cat "$WORK/logs/podman-service.log"; return 1
}
compose_up() {
  [ -S "$SOCK" ] || podman_api || return 1
  COMPOSE_READY=1
  compose down -v -t 5 >/dev/null 2>&1
  compose up -d --no-build signer || return 1
  local ms; ms=$(wait_http "http://127.0.0.1:$SFS_PORT/health" 60) || { compose logs --tail 20 signer; return 1; }
  echo "compose signer /health 200 after ${ms} ms of polling"
  local ctr="${PROJECT}_signer_1"
  podman healthcheck run "$ctr" && echo "healthcheck: $(podman inspect "$ctr" --format '{{.State.Health.Status}}')" || return 1
  [ "$(podman inspect "$ctr" --format '{{.State.Health.Status}}')" = healthy ] || return 1
  podman inspect "$ctr" --format 'ro={{.HostConfig.ReadonlyRootfs}} user={{.Config.User}} stop={{.Config.StopTimeout}} capadd={{.HostConfig.CapAdd}}' >"$WORK/compose-inspect.txt"
  cat "$WORK/compose-inspect.txt"; grep -q '^ro=true user=10001:10001 stop=230 capadd=\[\]$' "$WORK/compose-inspect.txt" || return 1
  podman exec "$ctr" grep -E '^Cap(Eff|Prm|Bnd):' /proc/1/status | tee "$WORK/compose-caps.txt"
  [ "$(grep -c ':\s*0000000000000000$' "$WORK/compose-caps.txt")" = 3 ] || return 1
  curl -fsS -m 5 -o "$WORK/metrics.txt" "http://127.0.0.1:$SFS_METRICS_PORT/metrics" && grep -q '^# HELP' "$WORK/metrics.txt" \
    || { echo "no Prometheus metrics on 127.0.0.1:$SFS_METRICS_PORT"; return 1; }
  echo "metrics: $(grep -c '^# HELP' "$WORK/metrics.txt") families on 127.0.0.1:$SFS_METRICS_PORT"
}
if step "docker compose up: signer healthy (healthcheck run), read-only, uid 10001, metrics on 127.0.0.1" compose_up; then
  step "docker compose run --rm -T relay: discover, tools/list, key_show over stdio" \
    node "$HERE/mcp-probe.mjs" stdio agent "$PUBKEY" -- env DOCKER_HOST="unix://$SOCK" docker-compose -p "$PROJECT" \
      -f compose.yaml -f scripts/containers/compose.ci.yaml run --rm -T relay
else
  blocked "compose run relay" "compose up failed"
fi
compose_down() {
  compose down -v -t 30 || return 1
  [ -z "$(podman ps -a --filter "name=^${PROJECT}_" --format '{{.Names}}')" ] || { podman ps -a --filter "name=^${PROJECT}_"; return 1; }
  ! podman volume exists "${PROJECT}_signer-state"
}
step "docker compose down -v: containers and state volume gone" compose_down && COMPOSE_READY=""

# ---- compose --profile replicas: postgres (a stand-in built from Debian's package) and two replicas on one cap.
# The replicas and postgres are on slirp4netns (compose.ci.yaml says why): postgres publishes on the host's
# loopback and the replicas' ledger URL reaches it at 10.0.2.2, the chain likewise.
PG_IMAGE=docker.io/library/postgres:16-bookworm
RACE_N=20 RACE_K=6 RACE_AMOUNT=1000000
SFS_POSTGRES_PORT=$(free_port); SFS_REPLICA_A_PORT=$(free_port); SFS_REPLICA_B_PORT=$(free_port)
export SFS_POSTGRES_PORT SFS_REPLICA_A_PORT SFS_REPLICA_B_PORT SFS_REPLICAS_CONFIG=$WORK/world/config.compose-replicas.yaml \
  SFS_POSTGRES_PASSWORD=$WORK/world/secrets/postgres_password SFS_LEDGER_URL=$WORK/world/secrets/compose_ledger_url
rcompose() { compose --profile replicas "$@"; }
pg_image() { TAG=$PG_IMAGE "$HERE/make-postgres-image.sh" "$CACHE/rootfs"; }
compose_replicas() {
  local w=$WORK/world pg=${PROJECT}_postgres_1 a=${PROJECT}_signer-a_1 b=${PROJECT}_signer-b_1 dest pw cap port
  [ -S "$SOCK" ] || podman_api || return 1
  # the key may pay one destination: a second key made with the image's CLI (only its pubkey is used)
  rm -rf "$w/dest"; mkdir -p "$w/dest/keys"; chown 10001:10001 "$w/dest/keys"; chmod 0700 "$w/dest/keys"
  dest=$("${CLI[@]}" -v "$w/dest/keys:/run/keys" -w /run "$IMAGE" sa-forge-signer key new dest --class session) || return 1
  # a daily cap that admits RACE_K signs and half a sign more (the race checks this against a real `check`)
  cap=$((RACE_K * (RACE_AMOUNT + 2 * 5000) + RACE_AMOUNT / 2))
  sed -e 's|^  store: sqlite$|  store: postgres\n  url_file: /run/secrets/ledger_url|' \
    -e "s|^    transfer_to: \[\]$|    transfer_to: [$dest]\n    daily_lamport_cap: $cap|" "$w/config.yaml" >"$SFS_REPLICAS_CONFIG"
  grep -q 'store: postgres' "$SFS_REPLICAS_CONFIG" && grep -q "daily_lamport_cap: $cap" "$SFS_REPLICAS_CONFIG" || return 1
  # the password is read by the image's postgres user, the ledger URL (with it) by the signers' uid 10001
  pw=$(node -p 'require("crypto").randomBytes(18).toString("hex")')
  printf '%s\n' "$pw" >"$SFS_POSTGRES_PASSWORD"
  chown "$(podman run --rm --network none --entrypoint id "$PG_IMAGE" -u postgres)" "$SFS_POSTGRES_PASSWORD" || return 1
  printf 'postgres://signer:%s@10.0.2.2:%s/signer\n' "$pw" "$SFS_POSTGRES_PORT" >"$SFS_LEDGER_URL"
  chown 10001:10001 "$SFS_LEDGER_URL"; chmod 0600 "$SFS_POSTGRES_PASSWORD" "$SFS_LEDGER_URL"

  COMPOSE_REPLICAS_READY=1
  rcompose down -v -t 5 >/dev/null 2>&1
  rcompose up -d postgres || return 1
  # podman schedules healthchecks with systemd timers, which this machine lacks: run postgres's own (pg_isready)
  # until it passes, so that the replicas' `depends_on: {postgres: {condition: service_healthy}}` finds it healthy
  for _ in $(seq 60); do podman healthcheck run "$pg" >/dev/null 2>&1 && break; sleep 1; done
  [ "$(podman inspect "$pg" --format '{{.State.Health.Status}}')" = healthy ] || { rcompose logs --tail 30 postgres; return 1; }
  podman exec "$pg" psql -U signer -d signer -Atc 'select version()' || return 1
  # the way the replicas will come (slirp4netns, 10.0.2.2:port): refused without the password, served with it
  local via=(podman run --rm --no-healthcheck --network slirp4netns:allow_host_loopback=true --entrypoint psql)
  if "${via[@]}" "$PG_IMAGE" -h 10.0.2.2 -p "$SFS_POSTGRES_PORT" -U signer -d signer -w -Atc 'select 1' >"$WORK/pg-nopw.txt" 2>&1; then
    echo "postgres accepted a TCP client without a password"; return 1
  fi
  grep -q 'no password supplied' "$WORK/pg-nopw.txt" || { cat "$WORK/pg-nopw.txt"; return 1; }
  "${via[@]}" -e PGPASSWORD="$pw" "$PG_IMAGE" -h 10.0.2.2 -p "$SFS_POSTGRES_PORT" -U signer -d signer -w -Atc 'select current_user' \
    | grep -qx signer || return 1
  echo "postgres healthy; over 10.0.2.2:$SFS_POSTGRES_PORT a client without the password is refused, one with it served"

  rcompose up -d --no-build signer-a signer-b || return 1
  for port in "$SFS_REPLICA_A_PORT" "$SFS_REPLICA_B_PORT"; do
    wait_http "http://127.0.0.1:$port/ready" 90 >/dev/null || { rcompose logs --tail 20 signer-a signer-b; return 1; }
  done
  echo "signer-a and signer-b ready on 127.0.0.1:$SFS_REPLICA_A_PORT and :$SFS_REPLICA_B_PORT"
  node "$HERE/mcp-probe.mjs" race "$w/secrets/agent.token" agent "$PUBKEY" "$dest" "$RACE_AMOUNT" "$RACE_N" "$RACE_K" "$cap" \
    "http://127.0.0.1:$SFS_REPLICA_A_PORT/mcp" "http://127.0.0.1:$SFS_REPLICA_B_PORT/mcp" || return 1
  # the ledger and the chain agree: RACE_K intents, RACE_K transfers landed, and what the intents reserved is what
  # the destination received plus each sign's fee (5000 lamports: one signature; each sign sends its own amount)
  local intents reserved balance
  intents=$(podman exec "$pg" psql -U signer -d signer -Atc "select count(*) from entries where key = 'agent' and command = 'sign-intent'")
  reserved=$(podman exec "$pg" psql -U signer -d signer -Atc "select -sum(balance_change) from entries where key = 'agent' and command = 'sign-intent'")
  balance=$(curl -fsS -m 5 -H 'Content-Type: application/json' \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getBalance\",\"params\":[\"$dest\"]}" "http://127.0.0.1:$CHAIN_PORT" |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).result.value))')
  echo "ledger: $intents sign intents reserving $reserved lamports; chain: destination holds $balance lamports"
  [ "$intents" = "$RACE_K" ] && [ "$balance" -ge $((RACE_K * RACE_AMOUNT)) ] \
    && [ $((reserved - balance)) = $((RACE_K * 5000)) ] || return 1
  # the audit hash chain both replicas appended to verifies (the operator CLI inside replica B)
  podman exec "$b" sa-forge-signer --config /etc/sa-forge-signer/config.yaml audit verify | tee "$WORK/compose-audit.txt"
  grep -qE '^ok: [0-9]+ entries$' "$WORK/compose-audit.txt" || return 1
  podman inspect "$a" "$b" --format '{{.Name}} ro={{.HostConfig.ReadonlyRootfs}} user={{.Config.User}}' | tee "$WORK/compose-replicas.txt"
  [ "$(grep -c 'ro=true user=10001:10001$' "$WORK/compose-replicas.txt")" = 2 ]
}
compose_replicas_down() {
  rcompose down -v -t 30 || return 1
  [ -z "$(podman ps -a --filter "name=^${PROJECT}_" --format '{{.Names}}')" ] || { podman ps -a --filter "name=^${PROJECT}_"; return 1; }
  ! podman volume exists "${PROJECT}_postgres-data" || { echo "volume ${PROJECT}_postgres-data is left"; return 1; }
  ! podman network exists "${PROJECT}_default" || { echo "network ${PROJECT}_default is left"; return 1; }
}
if ! step "PostgreSQL stand-in for postgres:16-bookworm (Debian bookworm's postgresql package: PostgreSQL 15)" pg_image; then
  blocked "compose --profile replicas" "the PostgreSQL image did not build"
elif [ -z "$HAVE_CHAIN" ]; then
  blocked "compose --profile replicas" "no chain, so the replicas cannot be ready or sign"
elif step "compose --profile replicas: PostgreSQL (Debian build) and two replicas racing $RACE_N signs against one cap ($RACE_K admitted)" \
  compose_replicas; then
  step "compose --profile replicas down -v: containers, postgres volume and network gone" compose_replicas_down && COMPOSE_REPLICAS_READY=""
else
  rcompose logs --tail 15 >"$WORK/logs/compose-replicas-containers.log" 2>&1
  rcompose down -v -t 5 >/dev/null 2>&1 && COMPOSE_REPLICAS_READY=""
fi

echo "== facts"
note "image size: ${FACTS[image_mb]:-?} MB; build: ${FACTS[build_s]:-?} s"
note "start-to-ready: ${FACTS[start_ready_ms]:-n/a} ms to /ready, ${FACTS[start_health_ms]:-n/a} ms to /health (podman run to first 200)"
[ -n "$HAVE_CHAIN" ] || note "no embedded chain: /ready was not checked"
note "total: $((SECONDS - T0)) s"
echo "containers: $PASSED passed, $FAILED failed, $SKIPPED skipped"
[ $FAILED -eq 0 ]
