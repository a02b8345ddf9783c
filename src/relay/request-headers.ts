/**
 * The HTTP headers a Streamable HTTP client sends with one JSON-RPC message, built from the message body alone
 * (on stdio the metadata lives only in `_meta`; streamable-http.mdx §Request Metadata):
 *   MCP-Protocol-Version  ← params._meta["io.modelcontextprotocol/protocolVersion"]
 *   Mcp-Method            ← method
 *   Mcp-Name              ← params.name (tools/call, prompts/get) or params.uri (resources/read), SEP-2243 encoded
 *   Mcp-Param-{Name}      ← tools/call arguments annotated with x-mcp-header in the service's tools/list
 * A value that cannot be a header (a method with control characters, say) is left out, and the service's
 * -32020 then names what is missing.
 */
import type { ParamAnnotation } from '../mcp/headers';
import { NAME_SOURCE } from '../mcp/headers';
import { META_PROTOCOL_VERSION } from '../mcp/protocol';
import { encodeHeaderText, headerValueFor } from './header-values';
import { hasOnlyHeaderSafeChars } from '../mcp/base64';
import { isRecord } from '../util/is-record';

export interface RelayMessage {
  method: string;
  params: unknown;
}

/** The protocol version a message names in `_meta`, if any. */
export function protocolVersionOf(params: unknown): string | undefined {
  if (!isRecord(params) || !isRecord(params._meta)) return undefined;
  const v = params._meta[META_PROTOCOL_VERSION];
  return typeof v === 'string' ? v : undefined;
}

function valueAt(args: unknown, path: readonly string[]): unknown {
  let cur = args;
  for (const step of path) {
    if (!isRecord(cur)) return undefined;
    cur = cur[step];
  }
  return cur;
}

/** The `mcp-*` headers for a message; `annotations` are the called tool's (tools/call only). */
export function mcpHeaders(
  msg: RelayMessage,
  annotations: readonly ParamAnnotation[] | undefined,
): Record<string, string> {
  const h: Record<string, string> = {};
  const version = protocolVersionOf(msg.params);
  if (version !== undefined && hasOnlyHeaderSafeChars(version)) h['MCP-Protocol-Version'] = version;
  if (hasOnlyHeaderSafeChars(msg.method)) h['Mcp-Method'] = msg.method;
  const nameField = NAME_SOURCE[msg.method];
  if (nameField !== undefined && isRecord(msg.params)) {
    const name = msg.params[nameField];
    if (typeof name === 'string') h['Mcp-Name'] = encodeHeaderText(name);
  }
  if (annotations && annotations.length > 0 && isRecord(msg.params)) {
    for (const a of annotations) {
      const value = headerValueFor(valueAt(msg.params.arguments, a.path));
      if (value !== null) h[`Mcp-Param-${a.header}`] = value;
    }
  }
  return h;
}
