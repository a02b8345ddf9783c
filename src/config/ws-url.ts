/**
 * The WebSocket endpoint beside an HTTP JSON-RPC endpoint, as providers serve it: the same URL with the scheme
 * swapped (http → ws, https → wss), host, port, path and query kept (a provider's API key stays where it was). The
 * embedded chain serves both on one port. A node that serves WebSocket on a port of its own (solana-test-validator's
 * is the HTTP port + 1) is given `ws_url` in the config instead.
 */
export function wsUrlFor(httpUrl: string): string {
  if (/^https:/i.test(httpUrl)) return `wss:${httpUrl.slice('https:'.length)}`;
  if (/^http:/i.test(httpUrl)) return `ws:${httpUrl.slice('http:'.length)}`;
  throw new RangeError('a JSON-RPC endpoint is an http(s) URL');
}

/** The WebSocket endpoints of a cluster: the configured ones, else one beside each HTTP endpoint, in order. */
export function wsUrlsFor(httpUrls: readonly string[], configured: readonly string[] | undefined): string[] {
  return configured !== undefined && configured.length > 0 ? [...configured] : httpUrls.map(wsUrlFor);
}
