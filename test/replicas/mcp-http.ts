/**
 * A minimal MCP 2026-07-28 client over Streamable HTTP, as an agent's client would speak to a replica: one POST per
 * request with the bearer token and the SEP-2243 headers the service checks against the body (MCP-Protocol-Version,
 * Mcp-Method, Mcp-Name, Mcp-Param-Key for the tools' `key` argument).
 */

export const PROTOCOL_VERSION = '2026-07-28';

/** The report fields these tests read (signer://docs/outcomes); the service sends more. */
export interface ReportView {
  outcome: 'ok' | 'refused' | 'simulation_failed' | 'confirmed' | 'failed' | 'unknown';
  summary: string;
  key: string | null;
  signature: string | null;
  detail: string | null;
  failed_check: string | null;
  fee: number | null;
  balance_change: number | null;
  warnings: string[];
}

export interface ToolReply {
  /** HTTP status of the POST. */
  status: number;
  isError: boolean;
  /** The tool's structuredContent, when it returned one. */
  structured: Record<string, unknown> | null;
  /** The first text content: the report as JSON, or `error: …` when the tool failed before a report. */
  text: string;
}

let nextId = 1;

export class McpHttpClient {
  constructor(
    readonly baseUrl: string,
    private readonly token: string,
  ) {}

  /** tools/call with the headers a SEP-2243 client sends; `key` is mirrored into Mcp-Param-Key. */
  async tool(name: 'check' | 'sign' | 'key_show' | 'halt', args: Record<string, unknown>): Promise<ToolReply> {
    const headers: Record<string, string> = { 'Mcp-Name': name };
    if (typeof args.key === 'string') headers['Mcp-Param-Key'] = args.key;
    const res = await this.post('tools/call', { name, arguments: args }, headers);
    const body = (await res.json()) as {
      result?: {
        isError?: boolean;
        structuredContent?: Record<string, unknown>;
        content?: { type: string; text: string }[];
      };
      error?: { code: number; message: string };
    };
    if (!body.result)
      throw new Error(`tools/call ${name} answered HTTP ${res.status} with ${JSON.stringify(body.error ?? body)}`);
    return {
      status: res.status,
      isError: body.result.isError === true,
      structured: body.result.structuredContent ?? null,
      text: body.result.content?.[0]?.text ?? '',
    };
  }

  async sign(key: string, payload: Record<string, unknown>): Promise<ToolReply> {
    return this.tool('sign', { key, payload });
  }

  /** The report of a sign or check; throws with the tool's text when the tool failed before producing one. */
  static report(reply: ToolReply): ReportView {
    if (!reply.structured || typeof reply.structured.outcome !== 'string') throw new Error(`no report: ${reply.text}`);
    return reply.structured as unknown as ReportView;
  }

  /** GET /ready: the HTTP status (200 ready, 503 not). */
  async ready(): Promise<number> {
    const res = await fetch(`${this.baseUrl}/ready`, { signal: AbortSignal.timeout(10_000) });
    await res.arrayBuffer();
    return res.status;
  }

  private post(method: string, params: Record<string, unknown>, extra: Record<string, string>): Promise<Response> {
    const body = {
      jsonrpc: '2.0',
      id: nextId++,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': PROTOCOL_VERSION,
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    };
    return fetch(`${this.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${this.token}`,
        'MCP-Protocol-Version': PROTOCOL_VERSION,
        'Mcp-Method': method,
        ...extra,
      },
      body: JSON.stringify(body),
    });
  }
}
