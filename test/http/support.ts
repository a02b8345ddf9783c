/** Builds the real HTTP app (createApp) around a config made in code, for supertest. */
import { pino, type Logger } from 'pino';
import { localCluster } from '../../src/config/clusters';
import type { Express } from 'express';
import { DEFAULT_SOCKET_LIMITS, DEFAULT_TIMINGS, type SignerConfig, type TokenConfig } from '../../src/config/types';
import { createApp } from '../../src/http/app';
import type { Metrics } from '../../src/http/metrics';
import { createServiceState, type ServiceState } from '../../src/http/service-state';
import { tokenSha256 } from '../../src/http/bearer-tokens';
import type { SignerEngine } from '../../src/signer/types';
import { SignerError } from '../../src/util/errors';

export const TOKEN = 'sfs_test-token-for-the-http-suite';
export const OTHER_TOKEN = 'sfs_second-token';
export const VERSION = '2026-07-28';
export const META = {
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
};

export function serveConfig(over: Partial<SignerConfig['serve']> = {}, base?: SignerConfig): SignerConfig {
  const tokens: TokenConfig[] = [
    { name: 'agent', sha256: tokenSha256(TOKEN), keys: base ? base.keys.map((k) => k.name) : [] },
    { name: 'other', sha256: tokenSha256(OTHER_TOKEN), keys: [] },
  ];
  const config: SignerConfig = base ?? {
    source: null,
    cluster: localCluster({ rpc_url: 'http://127.0.0.1:9', game_programs: [], player_profile: null }),
    key_dir: '/nonexistent',
    state_dir: '/nonexistent',
    keys: [],
    ledger: { store: 'sqlite', path: ':memory:' },
    timings: DEFAULT_TIMINGS,
    serve: undefined as unknown as SignerConfig['serve'],
    localnet: null,
    log_level: 'silent',
  };
  return {
    ...config,
    serve: {
      listen: { host: '127.0.0.1', port: 0 },
      allowed_hosts: ['127.0.0.1', 'localhost'],
      tokens,
      max_in_flight: 32,
      max_in_flight_per_token: 16,
      rate_limit_per_minute: 10_000,
      body_limit_bytes: 1_048_576,
      ...DEFAULT_SOCKET_LIMITS,
      drain_ms: 1000,
      param_headers: true,
      metrics: null,
      ...over,
    },
  };
}

export function makeApp(
  opts: {
    config?: SignerConfig;
    engine?: SignerEngine | null;
    metrics?: Metrics | (() => Metrics | null);
    logger?: Logger;
    state?: ServiceState;
  } = {},
): Express {
  const config = opts.config ?? serveConfig();
  const engine = opts.engine ?? null;
  const metrics = opts.metrics;
  return createApp({
    config,
    version: '9.9.9-test',
    logger: opts.logger ?? pino({ level: 'silent' }),
    engine: () =>
      engine ? Promise.resolve(engine) : Promise.reject(new SignerError('internal', 'no engine in this test')),
    engineIfOpen: () => engine,
    state: opts.state ?? createServiceState(),
    metrics: typeof metrics === 'function' ? metrics : () => metrics ?? null,
  });
}

/** The standard SEP-2243 headers for a body. */
export function headersFor(body: { method: string; params?: Record<string, unknown> }): Record<string, string> {
  const h: Record<string, string> = {
    Authorization: `Bearer ${TOKEN}`,
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': VERSION,
    'Mcp-Method': body.method,
  };
  if (body.method === 'tools/call' || body.method === 'prompts/get') h['Mcp-Name'] = String(body.params?.name);
  if (body.method === 'resources/read') h['Mcp-Name'] = String(body.params?.uri);
  const key = (body.params?.arguments as Record<string, unknown> | undefined)?.key;
  if (body.method === 'tools/call' && typeof key === 'string') h['Mcp-Param-Key'] = key;
  return h;
}

/**
 * A reply from POST /mcp as the tests read it: supertest hands `res.body` over as `any`, so each test reads it
 * through this shape. The plain-JSON refusals before JSON-RPC (401, 403, 413) are `{ error: string }` instead.
 */
export interface RpcReply {
  jsonrpc?: string;
  id?: string | number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

let nextId = 1;
export function rpc(
  method: string,
  params: Record<string, unknown> = {},
  id: string | number = nextId++,
): { jsonrpc: '2.0'; id: string | number; method: string; params: Record<string, unknown> } {
  return { jsonrpc: '2.0', id, method, params: { _meta: META, ...params } };
}
