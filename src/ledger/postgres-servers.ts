/**
 * The PostgreSQL servers a ledger may write to: a primary and its standbys, any of which can be the writable one
 * after a failover. They come from `ledger.urls`, and from libpq's multi-host form in any one URL
 * (`postgres://user:pw@h1:5432,h2:5433/db?target_session_attrs=read-write`), which `pg` does not read itself: each
 * server becomes a single-host URL with the same user, password, database and parameters.
 *
 * `target_session_attrs` is taken out: the ledger always wants the writable server and finds it itself
 * (postgres-primary.ts), whatever the URL asks.
 */

export interface PostgresServer {
  /** `host:port`, for messages and logs (never the URL: it may hold a password). */
  label: string;
  /** A single-host URL for `pg`. */
  url: string;
}

const DEFAULT_PORT = 5432;
const URL_PARTS = /^(postgres(?:ql)?:\/\/)(?:([^@/?#]*)@)?([^/?#]*)(.*)$/;

/** The servers the URLs name, in order, each once; throws an Error naming the problem (never the password). */
export function postgresServers(urls: readonly string[]): PostgresServer[] {
  const out: PostgresServer[] = [];
  for (const [i, url] of urls.entries()) {
    for (const server of serversOf(url, i)) if (!out.some((s) => s.label === server.label)) out.push(server);
  }
  if (out.length === 0) throw new Error('no PostgreSQL server is named');
  return out;
}

function serversOf(url: string, index: number): PostgresServer[] {
  const m = URL_PARTS.exec(url.trim());
  if (!m) throw new Error(`URL ${String(index + 1)} must start with postgres:// or postgresql://`);
  const [, scheme = '', auth, hosts = '', rest = ''] = m;
  const tail = withoutTargetSessionAttrs(rest);
  const prefix = `${scheme}${auth === undefined ? '' : `${auth}@`}`;
  // No host: a Unix socket or the libpq defaults (PGHOST), one server as written.
  if (hosts === '') return [{ label: 'default', url: `${prefix}${tail}` }];
  return hosts.split(',').map((h) => {
    const { host, port } = hostPort(h.trim(), index);
    const hostText = host.includes(':') ? `[${host}]` : host;
    return { label: `${hostText}:${String(port)}`, url: `${prefix}${hostText}:${String(port)}${tail}` };
  });
}

/** `host`, `host:port`, `[v6]` or `[v6]:port`. */
function hostPort(text: string, index: number): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d+))?$/.exec(text);
  const host = m?.[1] ?? m?.[2];
  const port = m?.[3] === undefined ? DEFAULT_PORT : Number(m[3]);
  if (host === undefined || !Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error(`URL ${String(index + 1)}: "${text.slice(0, 80)}" is not a host or host:port`);
  return { host, port };
}

/** The path and query without `target_session_attrs` (pg would pass it on to the server, which rejects it). */
function withoutTargetSessionAttrs(rest: string): string {
  const q = rest.indexOf('?');
  if (q < 0) return rest;
  const hash = rest.indexOf('#', q);
  const query = rest.slice(q + 1, hash < 0 ? undefined : hash);
  const kept = query.split('&').filter((p) => p !== '' && !/^target_session_attrs=/i.test(p));
  return `${rest.slice(0, q)}${kept.length > 0 ? `?${kept.join('&')}` : ''}${hash < 0 ? '' : rest.slice(hash)}`;
}
