/**
 * Request headers as the access log may show them: credentials, and every `Mcp-Param-*` header (it mirrors a tool
 * argument, which may be anything an agent sent), replaced by a marker.
 */
import type { IncomingHttpHeaders } from 'node:http';

export const REDACTED = '[redacted]';

const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);

export function redactHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name] = SECRET_HEADERS.has(name) || name.startsWith('mcp-param-') ? REDACTED : value;
  }
  return out;
}
