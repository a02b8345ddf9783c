/**
 * The relay's side of HTTP: one POST per message to the signer service with the bearer token and the MCP headers,
 * and the service's answer read back as one JSON-RPC response (from a JSON body or an event stream). Every failure
 * becomes a message that names its cause and what to check, never the token.
 */
import { META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION } from '../mcp/protocol';
import { isRecord } from '../util/is-record';
import type { RelayConfig } from './config';
import { post, PostError, postTarget, type PostTarget } from './http-post';
import { idKey, isRequestId, isResponse, type Json } from './messages';
import { mcpHeaders } from './request-headers';

const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
/** The relay's own tools/list (to learn annotations) gives up sooner than a tool call. */
export const LIST_TIMEOUT_MS = 30_000;

/** A failure the relay answers with -32603: the message names the cause (never the token). */
export class RelayFailure extends Error {
  constructor(
    message: string,
    readonly data?: Json,
  ) {
    super(message);
  }
}

function describeNetwork(code: string | undefined, message: string): string {
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused: is sa-forge-signer-serve running, and does SIGNER_URL name it?';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name does not resolve: check SIGNER_URL';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'the connection was reset before the reply was complete';
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `the host is unreachable (${code})`;
    default:
      return code ? `${code}: ${message}` : message;
  }
}

export class ServiceExchange {
  private readonly target: PostTarget | null;
  private readonly userAgent: string;
  private listSeq = 0;

  constructor(
    private readonly config: RelayConfig,
    private readonly version: string,
    private readonly log: (line: string) => void,
  ) {
    this.target = config.url.ok ? postTarget(config.url.url) : null;
    this.userAgent = `sa-forge-signer-mcp/${version}`;
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.target?.agent.destroy();
  }

  private headers(mcp: Record<string, string>): Record<string, string> {
    if (!this.config.token.ok) throw new RelayFailure(this.config.token.problem);
    return {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${this.config.token.token}`,
      'User-Agent': this.userAgent,
      ...mcp,
    };
  }

  async postRaw(body: Buffer, mcp: Record<string, string>, signal: AbortSignal, onStream: (data: string) => boolean) {
    if (!this.target) throw new RelayFailure((this.config.url as { problem: string }).problem);
    return post(this.target, {
      headers: this.headers(mcp),
      body,
      signal,
      maxBodyBytes: this.config.maxReplyBytes,
      onStreamMessage: onStream,
    });
  }

  /** POSTs a request and answers the service's JSON-RPC response to it, or throws a RelayFailure. */
  async exchange(
    id: unknown,
    body: Buffer,
    mcp: Record<string, string>,
    signal: AbortSignal,
    onNotification: (n: Json) => void,
  ): Promise<Json> {
    let final: Json | undefined;
    const result = await this.postRaw(body, mcp, signal, (data) => {
      let m: unknown;
      try {
        m = JSON.parse(data);
      } catch {
        this.log('ignored an event-stream event that is not JSON');
        return false;
      }
      if (isResponse(m)) {
        final = m;
        return true;
      }
      if (isRecord(m) && typeof m.method === 'string' && !Object.prototype.hasOwnProperty.call(m, 'id'))
        onNotification(m);
      else this.log('ignored a message on the event stream that is neither a notification nor the response');
      return false;
    });
    const where = `the signer service (${this.config.shownUrl})`;
    switch (result.kind) {
      case 'stream':
        if (final === undefined)
          throw new RelayFailure(`${where} ended its event stream without a response (HTTP ${result.status})`, {
            httpStatus: result.status,
          });
        return this.tieToRequest(final, id, result.status);
      case 'json': {
        let m: unknown;
        try {
          m = JSON.parse(result.text);
        } catch {
          throw new RelayFailure(`${where} answered HTTP ${result.status} with a body that is not JSON`, {
            httpStatus: result.status,
          });
        }
        if (isResponse(m)) return this.tieToRequest(m, id, result.status);
        throw new RelayFailure(this.outsideJsonRpc(where, result.status, m), { httpStatus: result.status });
      }
      case 'empty':
        throw new RelayFailure(`${where} answered HTTP ${result.status} with no body`, { httpStatus: result.status });
      case 'other':
        throw new RelayFailure(
          `${where} answered HTTP ${result.status} with ${result.contentType || 'no content type'}, not a JSON-RPC message`,
          { httpStatus: result.status },
        );
    }
  }

  /** One POST carries one request, so an error the service could not tie to an id answers this request. */
  private tieToRequest(m: Json, id: unknown, status: number): Json {
    const hasId = Object.prototype.hasOwnProperty.call(m, 'id') && m.id !== null;
    if (!hasId && 'error' in m && isRequestId(id)) return { jsonrpc: '2.0', id, error: m.error };
    if (hasId && idKey(m.id) === idKey(id)) return m;
    throw new RelayFailure(
      `the signer service (${this.config.shownUrl}) answered HTTP ${status} for another request id (${JSON.stringify(m.id)})`,
      { httpStatus: status },
    );
  }

  /** A JSON body that is not JSON-RPC: the HTTP layer's own refusal, such as a 401 for a wrong token. */
  private outsideJsonRpc(where: string, status: number, body: unknown): string {
    const said = isRecord(body) && typeof body.error === 'string' ? `: ${this.redact(body.error).slice(0, 300)}` : '';
    if (status === 401)
      return `${where} refused the bearer token (HTTP 401${said}); check SIGNER_TOKEN_FILE or SIGNER_TOKEN against the service's serve.tokens`;
    if (status === 403)
      return `${where} refused the request (HTTP 403${said}); the Host it was sent to must be in serve.allowed_hosts`;
    return `${where} answered HTTP ${status} outside JSON-RPC${said}`;
  }

  async fetchToolsPage(protocolVersion: string, cursor: string | undefined): Promise<unknown> {
    const id = `sa-forge-signer-mcp/tools-list/${++this.listSeq}`;
    const params = {
      ...(cursor !== undefined ? { cursor } : {}),
      _meta: {
        [META_PROTOCOL_VERSION]: protocolVersion,
        [META_CLIENT_CAPABILITIES]: {},
        [META_CLIENT_INFO]: { name: 'sa-forge-signer-mcp', version: this.version },
      },
    };
    const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params }));
    const signal = AbortSignal.timeout(Math.min(this.config.timeoutMs, LIST_TIMEOUT_MS));
    const reply = await this.exchange(
      id,
      body,
      mcpHeaders({ method: 'tools/list', params }, undefined),
      signal,
      () => undefined,
    );
    if (isRecord(reply.error))
      throw new Error(`tools/list answered error ${String(reply.error.code)}: ${String(reply.error.message)}`);
    return reply.result;
  }

  failureText(e: unknown): string {
    const where = `the signer service (${this.config.shownUrl})`;
    if (e instanceof RelayFailure) return this.redact(e.message);
    if (e instanceof PostError) {
      switch (e.kind) {
        case 'timeout':
          return `${where} did not answer within ${seconds(this.config.timeoutMs)} s (SIGNER_RELAY_TIMEOUT_MS); the request was abandoned, and a sign may still have been sent: check key_show or the audit log before retrying`;
        case 'too_large':
          return `${where} sent a reply larger than ${this.config.maxReplyBytes} bytes`;
        case 'aborted':
          return this.redact(e.message);
        case 'network':
          return `cannot reach ${where}: ${describeNetwork(e.code, this.redact(e.message))}`;
      }
    }
    return this.redact(`the relay failed: ${e instanceof Error ? e.message : String(e)}`);
  }

  /** Belt and braces: no message leaves the relay with the token in it. */
  private redact(text: string): string {
    return this.config.token.ok ? text.split(this.config.token.token).join('[token]') : text;
  }
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1);
}
