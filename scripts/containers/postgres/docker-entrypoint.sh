#!/bin/sh
# What compose.yaml uses of the official postgres image's entrypoint: POSTGRES_USER, POSTGRES_DB and
# POSTGRES_PASSWORD(_FILE); initdb into $PGDATA on the first start (that user as superuser, trust on the
# container's own socket, scram-sha-256 passwords for every TCP client); then the server on all addresses.
# It runs as the postgres user throughout (the image's USER), so the data volume must be writable by it.
set -eu
PGDATA=${PGDATA:-/var/lib/postgresql/data}
POSTGRES_USER=${POSTGRES_USER:-postgres}
POSTGRES_DB=${POSTGRES_DB:-$POSTGRES_USER}
if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then POSTGRES_PASSWORD=$(cat "$POSTGRES_PASSWORD_FILE"); fi

if [ "${1:-}" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo "docker-entrypoint: set POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE (the data directory is not initialised)" >&2
    exit 1
  fi
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb -D "$PGDATA" --username="$POSTGRES_USER" --pwfile="$pwfile" --encoding=UTF8 \
    --auth-local=trust --auth-host=scram-sha-256
  rm -f "$pwfile"
  printf '\n# every other TCP client: with a password\nhost all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != postgres ]; then
    # create the database on a server no one else can reach: no TCP listener, and its socket in a private
    # directory, so the healthcheck (pg_isready on the usual socket) cannot pass before the real server is up
    sockdir=$(mktemp -d)
    pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -k $sockdir" -w start
    psql -h "$sockdir" -v ON_ERROR_STOP=1 -v db="$POSTGRES_DB" --username="$POSTGRES_USER" --dbname=postgres -q <<'SQL'
CREATE DATABASE :"db";
SQL
    pg_ctl -D "$PGDATA" -m fast -w stop
    rmdir "$sockdir"
  fi
  echo "docker-entrypoint: initialised $PGDATA (user $POSTGRES_USER, database $POSTGRES_DB)"
fi

if [ "${1:-}" = postgres ]; then
  shift
  exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
fi
exec "$@"
