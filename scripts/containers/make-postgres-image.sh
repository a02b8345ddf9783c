#!/usr/bin/env bash
# Builds a local stand-in for postgres:16-bookworm (no container registry is reachable from CI) from Debian
# bookworm's `postgresql` package (PostgreSQL 15): postgres/Containerfile on a bookworm minbase imported from the
# rootfs make-base-image.sh debootstraps (without the node it adds), tagged as the official image. compose.yaml
# pins that image by digest, which no local build can have: the CI override (compose.ci.yaml) names the tag.
# Usage: make-postgres-image.sh [ROOTFS_DIR]   (root; needs podman, and debootstrap when ROOTFS_DIR is empty)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOTFS=${1:-/var/tmp/sa-forge-signer-containers/rootfs}
TAG=${TAG:-docker.io/library/postgres:16-bookworm}
MINBASE=localhost/sfs-ci-bookworm:minbase
# this sandbox's podman settings (ulimits, runc) when not run from test-containers.sh
export CONTAINERS_CONF=${CONTAINERS_CONF:-$HERE/containers.conf}
if ! podman image exists "$MINBASE"; then
  [ -x "$ROOTFS/bin/sh" ] || "$HERE/make-base-image.sh" "$ROOTFS"
  tar -C "$ROOTFS" --numeric-owner \
    --exclude=./usr/local/bin/node --exclude=./usr/local/bin/npm --exclude=./usr/local/bin/npx \
    --exclude=./usr/local/lib/node_modules --exclude=./usr/local/include/node -cf - . |
    podman import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'CMD ["bash"]' - "$MINBASE" >/dev/null
fi
# --network=host: apt reaches the Debian mirror as the host does; --layers: an unchanged Containerfile is a cache hit
podman build --format docker --network=host --layers --build-arg "BOOKWORM=$MINBASE" -t "$TAG" "$HERE/postgres"
podman run --rm --network none --entrypoint postgres "$TAG" --version
