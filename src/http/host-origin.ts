/**
 * The DNS-rebinding guard as pure functions (the MCP SDK's pattern: protocol rules pure, middleware glue).
 * `allowed_hosts` entries are `host` (any port) or `host:port`; IPv6 in brackets. Compared case-insensitively.
 */
export interface Authority {
  host: string; // lowercase, IPv6 without brackets
  port: string | null;
}

export interface AllowList {
  anyPort: Set<string>;
  exact: Set<string>; // `host:port`
}

/** `host`, `host:port`, `[v6]`, `[v6]:port`; anything after `/` is dropped (a Host never carries a path). */
export function parseAuthority(text: string): Authority | null {
  const s = (text.split('/')[0] ?? '').trim().toLowerCase();
  if (s === '') return null;
  if (s.startsWith('[')) {
    const end = s.indexOf(']');
    if (end < 0) return null;
    const rest = s.slice(end + 1);
    if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return null;
    return { host: s.slice(1, end), port: rest === '' ? null : rest.slice(1) };
  }
  const colon = s.lastIndexOf(':');
  if (colon < 0) return { host: s, port: null };
  if (s.indexOf(':') !== colon) return { host: s, port: null }; // bare IPv6 without brackets
  const port = s.slice(colon + 1);
  if (!/^\d{1,5}$/.test(port)) return null;
  return { host: s.slice(0, colon), port };
}

export function compileAllowList(entries: readonly string[]): AllowList {
  const list: AllowList = { anyPort: new Set(), exact: new Set() };
  for (const e of entries) {
    const a = parseAuthority(e);
    if (!a) continue;
    if (a.port === null) list.anyPort.add(a.host);
    else list.exact.add(`${a.host}:${a.port}`);
  }
  return list;
}

export function isAllowed(list: AllowList, a: Authority): boolean {
  return list.anyPort.has(a.host) || (a.port !== null && list.exact.has(`${a.host}:${a.port}`));
}

/** The authority of an Origin (`scheme://host[:port]`); `null` and anything else is not a valid origin. */
export function originAuthority(origin: string): Authority | null {
  const m = /^[a-z][a-z0-9+.-]*:\/\/([^/?#@]+)$/i.exec(origin.trim());
  const authority = m?.[1];
  return authority === undefined ? null : parseAuthority(authority);
}

/**
 * `Host` or `Origin` when the request carries it more than once (from Node's rawHeaders), else null. Node keeps
 * only the first Host and joins Origins, so a second Host would otherwise pass unseen by this guard while another
 * component (a proxy, a logger) reads the other one; RFC 9112 §3.2 makes such a request invalid.
 */
export function repeatedGuardHeader(rawHeaders: readonly string[]): 'Host' | 'Origin' | null {
  const names = rawHeaders.filter((_, i) => i % 2 === 0).map((name) => name.toLowerCase());
  if (names.filter((name) => name === 'host').length > 1) return 'Host';
  if (names.filter((name) => name === 'origin').length > 1) return 'Origin';
  return null;
}

export type HostOriginVerdict = { ok: true } | { ok: false; error: string };

/**
 * Host and Origin against the allow-list. A probe (`/health`, `/ready`) may name any Host, as Kubernetes
 * sends the pod IP, but only without an Origin: a browser page (the DNS-rebinding attacker) always sends one
 * on the cross-origin and non-GET requests that matter, and a probe never does.
 */
export function checkHostOrigin(
  list: AllowList,
  host: string | undefined,
  origin: string | undefined,
  probe: boolean,
): HostOriginVerdict {
  let hostAllowed = false;
  if (host === undefined || host === '') {
    if (!probe) return { ok: false, error: 'missing Host header' };
  } else {
    const a = parseAuthority(host);
    hostAllowed = a !== null && isAllowed(list, a);
    if (!hostAllowed && !probe) return { ok: false, error: `host ${JSON.stringify(host)} is not allowed` };
  }
  if (origin !== undefined) {
    const o = originAuthority(origin);
    if (o === null || !isAllowed(list, o))
      return { ok: false, error: `origin ${JSON.stringify(origin)} is not allowed` };
    if (probe && !hostAllowed) return { ok: false, error: `host ${JSON.stringify(host ?? '')} is not allowed` };
  }
  return { ok: true };
}

/** What the guard reads of a request: Node's raw header list and the parsed Host and Origin. */
export interface GuardedRequest {
  rawHeaders: readonly string[];
  headers: { host?: string | undefined; origin?: string | undefined };
}

/**
 * The whole guard for one request, for every listener that answers browsers' requests (the MCP app, /metrics): a
 * repeated Host or Origin is refused, then both are checked against the allow-list.
 */
export function guardRequest(list: AllowList, req: GuardedRequest, probe: boolean): HostOriginVerdict {
  const repeated = repeatedGuardHeader(req.rawHeaders);
  if (repeated !== null) return { ok: false, error: `several ${repeated} headers: the request is ambiguous` };
  return checkHostOrigin(list, req.headers.host, req.headers.origin, probe);
}
