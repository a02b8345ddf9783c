# syntax=docker/dockerfile:1
# sa-forge-signer: the MCP signing service. Three stages:
#   deps    production node_modules only, exactly as the lockfile says (pkcs11js compiled here; no LiteSVM, no dev
#           dependencies)
#   build   every dependency + TypeScript -> dist/, the service's entrypoint bundled (esbuild) with its V8 code cache
#   runtime node + production node_modules + dist, uid 10001, read-only root filesystem friendly
# Both FROM lines pin node:24-bookworm-slim (Node 24.18.0, an LTS line) by digest; bump it deliberately (see
# docs/running.md).

FROM node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d AS toolchain
# pkcs11js builds from source (it ships no prebuilt binary), as would any native module without one for this platform
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
WORKDIR /src
COPY package.json package-lock.json ./

FROM toolchain AS deps
RUN --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev \
 # @solana/kit names TypeScript as an optional peer (for its type definitions only); npm installs it because the
 # lockfile has it, but nothing loads it at run time
 && rm -rf node_modules/typescript node_modules/.bin/tsc node_modules/.bin/tsserver \
 # better-sqlite3 ships its sources and a prebuilt binary for every platform: keep this platform's binary only
 && rm -rf node_modules/better-sqlite3/deps node_modules/better-sqlite3/src \
 && find node_modules/better-sqlite3/prebuilds -name '*.node' ! -name "linux-$(node -p process.arch).node" -delete \
 && rm -rf node_modules/pkcs11js/src node_modules/pkcs11js/build/Release/obj.target node_modules/pkcs11js/build/Release/.deps

FROM toolchain AS build
# dev dependencies are needed only to compile; install scripts are skipped (nothing here runs the code)
RUN --mount=type=cache,target=/root/.npm \
    npm ci --ignore-scripts
COPY tsconfig.json ./
COPY src ./src
COPY scripts/bundle-serve.mjs ./scripts/
# the service's entrypoint is bundled into one file with a V8 code cache made by this stage's node, which is the
# runtime's (same base image), under the flags of serve.js's #! line (faster start; docs/performance.md, "Start-up")
RUN npx tsc -p tsconfig.json && node scripts/bundle-serve.mjs

FROM node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d AS runtime
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="sa-forge-signer" \
      org.opencontainers.image.description="Self-hosted transaction signer for AI agents: policy checks, simulation, signing and confirmation for SVM transactions, over MCP 2026-07-28." \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="docker.io/library/node:24-bookworm-slim"
ENV NODE_ENV=production \
    SIGNER_LISTEN=0.0.0.0:8790
WORKDIR /app
COPY --from=deps --chown=0:0 /src/node_modules ./node_modules
COPY --from=build --chown=0:0 /src/dist/src ./dist/src
COPY --chown=0:0 package.json ./
# The three entrypoints on PATH; the service's runs serve.js itself, whose #! line passes node the V8 flags its code
# cache was made under (src/cli/serve-launch.ts). The package managers go (nothing at run time installs anything).
# The state directory belongs to the service user, so a fresh named volume inherits 10001:10001 0700.
RUN set -eu; \
    for bin in sa-forge-signer-mcp:mcp sa-forge-signer:signer; do \
      printf '#!/bin/sh\nexec node /app/dist/src/cli/%s.js "$@"\n' "${bin#*:}" > "/usr/local/bin/${bin%%:*}"; \
    done; \
    printf '#!/bin/sh\nexec /app/dist/src/cli/serve.js "$@"\n' > /usr/local/bin/sa-forge-signer-serve; \
    chmod 0755 /usr/local/bin/sa-forge-signer-mcp /usr/local/bin/sa-forge-signer /usr/local/bin/sa-forge-signer-serve; \
    rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack /opt/yarn-* \
           /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /usr/local/bin/yarn /usr/local/bin/yarnpkg; \
    mkdir -p /etc/sa-forge-signer /var/lib/sa-forge-signer; \
    chown 10001:10001 /var/lib/sa-forge-signer; \
    chmod 0700 /var/lib/sa-forge-signer
# pkcs11 keys (docs/keys.md): mount the HSM vendor's PKCS#11 module read-only, e.g. at /opt/pkcs11, and set
# key_stores.pkcs11.module to the .so in it. The module must be built for glibc (Debian bookworm) on the image's
# architecture; the variables it reads for its own config (YUBIHSM_PKCS11_CONF, ChrystokiConfigurationPath, …) are
# passed like any other environment variable.
RUN mkdir -p /opt/pkcs11
USER 10001:10001
EXPOSE 8790 9791
STOPSIGNAL SIGTERM
# Liveness of the HTTP listener, whatever port SIGNER_LISTEN chose; no curl in the image.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "const p=(process.env.SIGNER_LISTEN||'').split(':').pop()||'8790';fetch('http://127.0.0.1:'+p+'/health',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["sa-forge-signer-serve", "--config", "/etc/sa-forge-signer/config.yaml"]

