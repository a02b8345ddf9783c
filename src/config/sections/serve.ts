/**
 * `serve`: the MCP service's listener, who may call it (bearer tokens, allowed hosts) and how much it takes at once
 * (in-flight places, rates, body and socket limits); also the metrics listener and the operator console.
 */
import { parseListen, type ListenAddress } from '../formats';
import { fail } from '../fail';
import { defaultsOf, section, type Infer } from '../setting';
import { bearerTokensSchema, type TokenConfig } from './bearer-tokens';
import { credentialsSchema, type CredentialsConfig } from './credentials';
import { buildOperatorListener, operatorConsoleSchema, type OperatorListenerConfig } from './operator-console';

export const serveSchema = section({
  serve: {
    listen: {
      doc: 'Address of the MCP service (host:port). Bind 127.0.0.1 unless a container or pod network fronts it.',
      format: 'listen-address',
      default: '127.0.0.1:8790',
      env: 'SIGNER_LISTEN',
    },
    allowed_hosts: {
      doc: 'Host names (or host:port) the Host and Origin headers may name; the DNS-rebinding guard. Comma-separated in the env var.',
      format: 'string-list',
      default: ['127.0.0.1', 'localhost'],
      env: 'SIGNER_ALLOWED_HOSTS',
    },
    ...bearerTokensSchema,
    credentials: credentialsSchema,
    max_in_flight: {
      doc: 'Requests handled at once; more are answered 503 with Retry-After.',
      format: 'positive-int',
      default: 32,
      env: 'SIGNER_MAX_IN_FLIGHT',
    },
    max_in_flight_per_token: {
      doc: "One token's share of max_in_flight: more of its requests at once are answered 503 with Retry-After while other tokens are served. As many of its signs may wait for an operator's approval besides, holding no place. `halt` and the lists never need a place.",
      format: 'positive-int',
      default: 16,
      env: 'SIGNER_MAX_IN_FLIGHT_PER_TOKEN',
    },
    rate_limit_per_minute: {
      doc: 'HTTP requests per minute per token; more are answered 429 with Retry-After.',
      format: 'positive-int',
      default: 600,
      env: 'SIGNER_HTTP_RATE_LIMIT_PER_MINUTE',
    },
    body_limit_bytes: {
      doc: 'Largest request body; larger is answered 413. The body is parsed on the event loop before any payload bound can see it, so its size bounds that work: the largest payload a 1232-byte transaction needs is far below 64 KiB.',
      format: 'positive-int',
      default: 65_536,
      env: 'SIGNER_BODY_LIMIT_BYTES',
    },
    body_timeout_ms: {
      doc: 'A request body must arrive within this long of its headers; a slower one is answered 408 and its connection closed.',
      format: 'positive-int',
      default: 10_000,
      env: 'SIGNER_BODY_TIMEOUT_MS',
    },
    headers_timeout_ms: {
      doc: 'A connection must send complete request headers within this long (also on a new connection that sends nothing); else 408 and closed.',
      format: 'positive-int',
      default: 10_000,
      env: 'SIGNER_HEADERS_TIMEOUT_MS',
    },
    keep_alive_timeout_ms: {
      doc: "An idle kept-alive connection is closed after this long. Behind a load balancer, set it above the balancer's idle timeout.",
      format: 'positive-int',
      default: 5_000,
      env: 'SIGNER_KEEP_ALIVE_TIMEOUT_MS',
    },
    max_connections: {
      doc: 'Open connections at most; more are refused at accept.',
      format: 'positive-int',
      default: 1024,
      env: 'SIGNER_MAX_CONNECTIONS',
    },
    drain_ms: {
      doc: 'On SIGTERM/SIGINT, how long running requests (signs) may finish: 150 s confirmation + 4 × 15 s RPC + 10 s. Give the container at least 10 s more.',
      format: 'nat-strict',
      default: 220_000,
      env: 'SIGNER_DRAIN_MS',
    },
    param_headers: {
      doc: 'Annotate the tools\' `key` argument with x-mcp-header "Key" (SEP-2243), so clients send Mcp-Param-Key; turn off for clients that cannot send custom headers.',
      format: 'bool-strict',
      default: true,
      env: 'SIGNER_PARAM_HEADERS',
    },
    metrics: {
      doc: 'Prometheus /metrics listener (host:port), separate from the service; null turns it off.',
      format: 'listen-address-or-off',
      default: '127.0.0.1:9791',
      nullable: true,
      env: 'SIGNER_METRICS_LISTEN',
    },
    operator: operatorConsoleSchema,
  },
});

type Raw = Infer<typeof serveSchema>['serve'];

/** The service's settings resolved: addresses parsed, tokens checked against the keys, the console's listener. */
export type ServeConfig = Omit<Raw, 'listen' | 'metrics' | 'tokens' | 'tokens_file' | 'operator' | 'credentials'> & {
  listen: ListenAddress;
  tokens: TokenConfig[];
  /** Attenuable credentials (docs/credentials.md); absent or null: off. */
  credentials?: CredentialsConfig | null;
  metrics: ListenAddress | null;
  /** The operator console's listener; absent or null: off. */
  operator?: OperatorListenerConfig | null;
};

const serveDefaults = defaultsOf(serveSchema.serve);

/** The socket limits of `serve` by default, for services built in code. */
export const DEFAULT_SOCKET_LIMITS = Object.freeze({
  body_timeout_ms: serveDefaults.body_timeout_ms,
  headers_timeout_ms: serveDefaults.headers_timeout_ms,
  keep_alive_timeout_ms: serveDefaults.keep_alive_timeout_ms,
  max_connections: serveDefaults.max_connections,
}) satisfies Partial<ServeConfig>;

/**
 * The service's settings; its tokens and credentials are built first (buildBearerTokens, buildCredentials), as they
 * check the keys.
 */
export function buildServe(
  raw: Raw,
  tokens: TokenConfig[],
  credentials: CredentialsConfig | null,
  resolve: (p: string) => string,
): ServeConfig {
  /* eslint-disable @typescript-eslint/no-unused-vars -- the token lists and credentials are resolved apart */
  const {
    listen,
    allowed_hosts,
    tokens: _list,
    tokens_file: _file,
    credentials: _c,
    metrics,
    operator,
    ...limits
  } = raw;
  /* eslint-enable @typescript-eslint/no-unused-vars */
  return {
    // The `listen` formats have already refused anything parseListen cannot read.
    listen: parseListen(listen) ?? fail(`serve.listen: not host:port`),
    allowed_hosts: allowed_hosts.map((h) => h.toLowerCase()),
    tokens,
    credentials,
    ...limits,
    metrics: metrics === null ? null : (parseListen(metrics) ?? fail(`serve.metrics: not host:port`)),
    operator: buildOperatorListener(operator, resolve),
  };
}
