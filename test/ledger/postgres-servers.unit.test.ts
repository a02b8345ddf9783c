/** The servers a PostgreSQL ledger URL names (src/ledger/postgres-servers.ts): libpq's multi-host form and lists. */
import { postgresServers } from '../../src/ledger/postgres-servers';

test('a multi-host URL becomes one single-host URL per server, with the same credentials, database and parameters', () => {
  expect(
    postgresServers(['postgres://u:p%40ss@h1:5432,h2:5433/signer?sslmode=require&target_session_attrs=read-write']),
  ).toEqual([
    { label: 'h1:5432', url: 'postgres://u:p%40ss@h1:5432/signer?sslmode=require' },
    { label: 'h2:5433', url: 'postgres://u:p%40ss@h2:5433/signer?sslmode=require' },
  ]);
});

test('a host without a port gets 5432; IPv6 hosts keep their brackets; a list is read in order, each server once', () => {
  expect(
    postgresServers(['postgresql://u@a/db', 'postgresql://u@[::1]:6000,a:5432/db?target_session_attrs=any']).map(
      (s) => [s.label, s.url],
    ),
  ).toEqual([
    ['a:5432', 'postgresql://u@a:5432/db'],
    ['[::1]:6000', 'postgresql://u@[::1]:6000/db'],
  ]);
});

test('no host (a Unix socket, or libpq defaults) is one server as written', () => {
  expect(postgresServers(['postgres:///db?host=/run/postgresql'])).toEqual([
    { label: 'default', url: 'postgres:///db?host=/run/postgresql' },
  ]);
});

test('refuses what is not a PostgreSQL URL or a host:port, never echoing a password', () => {
  expect(() => postgresServers(['mysql://u:secret@h/db'])).toThrow(/URL 1 must start with postgres/);
  expect(() => postgresServers(['postgres://u:secret@h:99999/db'])).toThrow(/is not a host or host:port/);
  expect(() => postgresServers(['postgres://u:secret@h:99999/db'])).not.toThrow(/secret/);
  expect(() => postgresServers([])).toThrow(/no PostgreSQL server/);
});
