/**
 * A well-formed MCP 2026-07-28 request over HTTP, as a conforming client sends it: the body with `_meta`, and the
 * SEP-2243 headers mirroring it. Fuzzers start from these and break them; the crash and load suites use them as is.
 */
import http from 'node:http';

export const PROTOCOL_VERSION = '2026-07-28';
export const META = {
  'io.modelcontextprotocol/protocolVersion': PROTOCOL_VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
};

export interface McpRequestSpec {
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

let nextId = 1;

/** Body and headers for `method` with `params` (the `_meta` added), authorised by `token`. */
export function mcpRequest(
  method: string,
  params: Record<string, unknown>,
  token: string,
  host = '127.0.0.1',
): McpRequestSpec {
  const body = { jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: META } };
  const headers: Record<string, string> = {
    Host: host,
    Authorization: `Bearer ${token}`,
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': PROTOCOL_VERSION,
    'Mcp-Method': method,
  };
  const name = method === 'tools/call' ? params.name : method === 'resources/read' ? params.uri : undefined;
  if (typeof name === 'string') headers['Mcp-Name'] = name;
  const args = params.arguments as Record<string, unknown> | undefined;
  if (method === 'tools/call' && args && typeof args.key === 'string') headers['Mcp-Param-Key'] = args.key;
  return { body, headers };
}

export const toolCall = (tool: string, args: Record<string, unknown>, token: string): McpRequestSpec =>
  mcpRequest('tools/call', { name: tool, arguments: args }, token);

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

/** POSTs raw bytes (or a spec's body) to `url` with exactly the given headers. */
export function post(
  url: string,
  body: Buffer | string,
  headers: Record<string, string | string[]>,
  timeoutMs = 30_000,
): Promise<HttpAnswer> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers, agent, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer from ${u.host} within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

export function send(url: string, spec: McpRequestSpec, timeoutMs?: number): Promise<HttpAnswer> {
  return post(`${url}/mcp`, JSON.stringify(spec.body), spec.headers, timeoutMs);
}

/** The structured result of a tools/call answer, or throws with the answer's text. */
export function toolResult(a: HttpAnswer): {
  isError: boolean;
  structured: Record<string, unknown> | null;
  text: string;
} {
  const body = JSON.parse(a.text) as {
    result?: { isError: boolean; structuredContent?: Record<string, unknown>; content: { text: string }[] };
  };
  if (!body.result) throw new Error(`not a tool result (HTTP ${a.status}): ${a.text.slice(0, 300)}`);
  return {
    isError: body.result.isError,
    structured: body.result.structuredContent ?? null,
    text: body.result.content[0]?.text ?? '',
  };
}

export function closeAgent(): void {
  agent.destroy();
}
