#!/usr/bin/env bash
# Makes a fresh Debian machine able to run the suite: a C++ toolchain for better-sqlite3's and pkcs11js's native
# builds, SoftHSM2 and age for the key stores' tests, chromium for the operator console's, and a PostgreSQL server on 127.0.0.1:5432 that trusts local
# connections as user postgres (the replica and ledger tests create and drop their own databases there). Idempotent: it only installs and starts what is missing.
set -euo pipefail

say() { printf 'setup: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then as_root apt-get update -qq >/dev/null; apt_updated=1; fi
  say "installing Debian packages: $*"
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

missing=()
for tool in python3 make g++; do command -v "$tool" >/dev/null || missing+=("$tool"); done
[ ${#missing[@]} -eq 0 ] || apt_install python3 make g++

# The key stores' tests: SoftHSM2 is a real PKCS#11 module (the pkcs11 store), `age` opens the encrypted store's
# files as an operator would.
missing=()
[ -e /usr/lib/softhsm/libsofthsm2.so ] && command -v softhsm2-util >/dev/null || missing+=(softhsm2)
command -v age >/dev/null || missing+=(age)
[ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"

# The operator console's browser tests drive Debian's chromium (playwright-core never downloads a browser here).
command -v chromium >/dev/null || apt_install chromium

pg_ready() { command -v pg_isready >/dev/null && pg_isready -q -h 127.0.0.1 -p 5432; }

if ! pg_ready; then
  if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    apt_install postgresql postgresql-client
  fi
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  conf=/etc/postgresql/$version/main
  # The suite connects over TCP as postgres without a password: trust loopback only.
  if ! grep -q '^host all postgres 127.0.0.1/32 trust' "$conf/pg_hba.conf"; then
    as_root sed -i '1i host all postgres 127.0.0.1/32 trust' "$conf/pg_hba.conf"
  fi
  say "starting PostgreSQL $version"
  as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start 2>/dev/null \
    || as_root pg_ctlcluster --skip-systemctl-redirect "$version" main restart
  for _ in $(seq 1 50); do pg_ready && break; sleep 0.2; done
  pg_ready || { say "PostgreSQL did not become ready on 127.0.0.1:5432"; exit 1; }
fi
say "PostgreSQL ready on 127.0.0.1:5432"
