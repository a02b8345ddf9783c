/** MCP 2026-07-28 constants this server speaks (the specification's revision 2026-07-28; docs/mcp.md is our record). */
export const PROTOCOL_VERSION = '2026-07-28';
export const SUPPORTED_VERSIONS: readonly string[] = [PROTOCOL_VERSION];
export const SERVER_NAME = 'sa-forge-signer';

export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

/** Caching hints on discover, the lists and a read: answers sit behind a bearer token, so never shared. */
export const CACHE_TTL_MS = 300_000;
export const CACHE_SCOPE = 'private';

export const LOG_LEVELS: readonly string[] = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
];

export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  HeaderMismatch: -32020,
  UnsupportedProtocolVersion: -32022,
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** The HTTP status each JSON-RPC error travels with (streamable-http.mdx; method-level errors ride on 200). */
export function statusForError(code: ErrorCode, methodLevel: boolean): number {
  if (code === ErrorCode.MethodNotFound) return 404;
  if (methodLevel) return 200;
  return 400;
}

/** Methods the server implements; everything else (ping included) is -32601 on HTTP 404. */
export const METHODS = [
  'server/discover',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/read',
  'resources/templates/list',
] as const;
export type Method = (typeof METHODS)[number];
