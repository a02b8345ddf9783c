/**
 * What to tell an operator when a listener cannot open: which address, and which setting moves it. Without this
 * the message is Node's `listen EADDRINUSE: address already in use`, which names neither.
 */

/** The listeners the signer opens, each with the config key and the environment variable that set it. */
export const LISTENERS = {
  mcp: { what: 'the MCP endpoint', setting: 'serve.listen', env: 'SIGNER_LISTEN' },
  metrics: { what: 'the metrics endpoint', setting: 'serve.metrics', env: 'SIGNER_METRICS_LISTEN' },
  operator: { what: 'the operator console', setting: 'serve.operator.listen', env: 'SIGNER_OPERATOR_LISTEN' },
  chain: { what: 'the embedded chain', setting: 'rpc_url', env: 'SIGNER_RPC_URL' },
} as const;

export type ListenerName = keyof typeof LISTENERS;

function errnoCode(e: unknown): string | undefined {
  if (typeof e !== 'object' || e === null || !('code' in e)) return undefined;
  return typeof e.code === 'string' ? e.code : undefined;
}

/**
 * A message naming the address and the setting to change when `e` is a busy or forbidden address; undefined for
 * any other error (the caller shows its own message).
 */
export function listenErrorMessage(e: unknown, listener: ListenerName, address: string): string | undefined {
  const l = LISTENERS[listener];
  const code = errnoCode(e);
  const move =
    listener === 'chain'
      ? `set ${l.env} to another loopback address (e.g. ${l.env}=http://127.0.0.1:18899)`
      : `set ${l.setting} in the config or ${l.env}=HOST:PORT (port 0 picks a free one)`;
  if (code === 'EADDRINUSE')
    return `${l.what} cannot listen on ${address}: the address is already in use (is another sa-forge-signer running?); ${move}`;
  if (code === 'EACCES' || code === 'EPERM')
    return `${l.what} may not listen on ${address} (ports below 1024 need privileges); ${move}`;
  if (code === 'EADDRNOTAVAIL') return `${l.what} cannot listen on ${address}: no interface has that address; ${move}`;
  return undefined;
}
