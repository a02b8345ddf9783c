/**
 * The stdio relay: one JSON-RPC message per input line in, one POST to the service per message, one output line
 * per reply. Requests run concurrently and are answered in completion order. The relay is generic: it knows the
 * transports' rules, never the service's tools (their header annotations come from the service's tools/list).
 *
 *   request        → POST; the service's JSON-RPC reply (any HTTP status) re-serialised onto one line;
 *                    anything else (unreachable, timed out, 401, an HTML 502…) → -32603 for that id
 *   notification   → POST, never answered (also when the POST fails)
 *   notifications/cancelled → the named request's POST is aborted (on HTTP the disconnect is the
 *                    cancellation) and nothing more is written for that id
 *   not JSON       → -32700 with no id; a batch or a non-object → -32600 with no id
 *   a response     → dropped (clients send none)
 */
import { ErrorCode, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION } from '../mcp/protocol';
import { isRecord } from '../util/is-record';
import type { RelayConfig } from './config';
import { post, PostError, postTarget, type PostTarget } from './http-post';
import { mcpHeaders, protocolVersionOf } from './request-headers';
import { ToolHeaderCache } from './tool-cache';

// The service's own codes: a client sees the same number for the same fault whichever transport it uses.
const PARSE_ERROR = ErrorCode.ParseError;
const INVALID_REQUEST = ErrorCode.InvalidRequest;
const INTERNAL_ERROR = ErrorCode.InternalError;
const HEADER_MISMATCH = ErrorCode.HeaderMismatch;

const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
/** The relay's own tools/list (to learn annotations) gives up sooner than a tool call. */
const LIST_TIMEOUT_MS = 30_000;

export interface RelayIo {
  /** Writes one protocol message; `line` has no newline inside and ends with one. */
  write(line: string): void;
  /** A line for stderr. */
  log(line: string): void;
}

type Json = Record<string, unknown>;
type RequestId = string | number;

interface Flight {
  /** The id as the client sent it. */
  id: unknown;
  key: string;
  method: string;
  controller: AbortController;
  /** Cancelled by the client: nothing more is written for it. */
  cancelled: boolean;
  /** An answer has been written. */
  answered: boolean;
}

/** A failure the relay answers with -32603: the message names the cause (never the token). */
class RelayFailure extends Error {
  constructor(
    message: string,
    readonly data?: Json,
  ) {
    super(message);
  }
}

function isRequestId(v: unknown): v is RequestId {
  return typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v));
}

/** A JSON-RPC 2.0 response: a result or a well-formed error, never both. */
function isResponse(m: unknown): m is Json {
  if (!isRecord(m) || m.jsonrpc !== '2.0' || typeof m.method === 'string') return false;
  const hasResult = Object.prototype.hasOwnProperty.call(m, 'result');
  const hasError = Object.prototype.hasOwnProperty.call(m, 'error');
  if (hasResult === hasError) return false;
  if (hasError) return isRecord(m.error) && Number.isInteger(m.error.code) && typeof m.error.message === 'string';
  return true;
}

function errorCodeOf(m: Json): number | undefined {
  return isRecord(m.error) && typeof m.error.code === 'number' ? m.error.code : undefined;
}

function isBlank(line: Buffer): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}

const idKey = (id: unknown): string => (id === undefined ? 'undefined' : JSON.stringify(id));

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

export class Relay {
  private readonly flights = new Map<string, Set<Flight>>();
  private readonly notes = new Set<Promise<void>>();
  private running = 0;
  private idle: (() => void)[] = [];
  private readonly target: PostTarget | null;
  private readonly tools: ToolHeaderCache;
  private readonly userAgent: string;
  private listSeq = 0;

  constructor(
    private readonly config: RelayConfig,
    private readonly version: string,
    private readonly io: RelayIo,
  ) {
    this.target = config.url.ok ? postTarget(config.url.url) : null;
    this.tools = new ToolHeaderCache(
      (v, cursor) => this.fetchToolsPage(v, cursor),
      (l) => io.log(l),
    );
    this.userAgent = `sa-forge-signer-mcp/${version}`;
  }

  /** Requests and notifications still on their way. */
  inFlight(): number {
    return this.running;
  }

  /** Resolves when nothing is in flight. */
  whenIdle(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** One input line (without its newline). */
  line(raw: Buffer): void {
    if (isBlank(raw)) return;
    let msg: unknown;
    try {
      msg = JSON.parse(raw.toString('utf8'));
    } catch {
      this.writeError(undefined, PARSE_ERROR, 'Parse error: the line is not valid JSON');
      return;
    }
    if (Array.isArray(msg)) {
      this.writeError(
        undefined,
        INVALID_REQUEST,
        'Invalid request: batches are not supported; send one message per line',
      );
      return;
    }
    if (!isRecord(msg)) {
      this.writeError(undefined, INVALID_REQUEST, 'Invalid request: a message must be a JSON object');
      return;
    }
    const hasId = Object.prototype.hasOwnProperty.call(msg, 'id');
    if (typeof msg.method !== 'string') {
      if (
        hasId &&
        (Object.prototype.hasOwnProperty.call(msg, 'result') || Object.prototype.hasOwnProperty.call(msg, 'error'))
      ) {
        this.io.log('dropped a JSON-RPC response from the client: this server sends no requests to answer');
        return;
      }
      this.writeError(
        isRequestId(msg.id) ? msg.id : undefined,
        INVALID_REQUEST,
        'Invalid request: method must be a string',
      );
      return;
    }
    if (hasId) this.request(msg.id, msg.method, msg.params, raw);
    else this.notification(msg.method, msg.params, raw);
  }

  /** A line longer than the limit, already discarded; `id` is its top-level id when one could be read. */
  oversized(bytes: number, limit: number, id: RequestId | undefined): void {
    this.io.log(`dropped a message of ${bytes} bytes (limit ${limit}, SIGNER_RELAY_MAX_LINE_BYTES)`);
    this.writeError(
      id,
      INVALID_REQUEST,
      `Invalid request: the message is ${bytes} bytes, more than the relay's limit of ${limit} bytes`,
    );
  }

  /**
   * Shutdown after the grace period: every request still running is aborted (its POST closed, so the service
   * stops it if it can) and answered with -32603.
   */
  abortAll(reason: string): void {
    for (const set of this.flights.values()) {
      for (const f of set) {
        this.answer(f, this.errorMessage(f.id, INTERNAL_ERROR, reason));
        f.controller.abort(new PostError('aborted', reason));
      }
    }
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.target?.agent.destroy();
  }

  // ------------------------------------------------------------------ requests

  private request(id: unknown, method: string, params: unknown, body: Buffer): void {
    const flight: Flight = {
      id,
      key: idKey(id),
      method,
      controller: new AbortController(),
      cancelled: false,
      answered: false,
    };
    const set = this.flights.get(flight.key) ?? new Set<Flight>();
    this.flights.set(flight.key, set);
    set.add(flight);
    const timer = setTimeout(() => {
      flight.controller.abort(new PostError('timeout', 'timeout'));
    }, this.config.timeoutMs);
    this.track(
      this.run(flight, method, params, body)
        .then((reply) => this.answer(flight, reply))
        .catch((e: unknown) =>
          this.answer(
            flight,
            this.errorMessage(
              flight.id,
              INTERNAL_ERROR,
              this.failureText(e),
              e instanceof RelayFailure ? e.data : undefined,
            ),
          ),
        )
        .finally(() => {
          clearTimeout(timer);
          set.delete(flight);
          if (set.size === 0 && this.flights.get(flight.key) === set) this.flights.delete(flight.key);
        }),
    );
  }

  private async run(flight: Flight, method: string, params: unknown, body: Buffer): Promise<Json> {
    const msg = { method, params };
    if (method !== 'tools/call') {
      const reply = await this.exchange(flight.id, body, mcpHeaders(msg, undefined), flight.controller.signal, (n) =>
        this.passNotification(flight, n),
      );
      if (method === 'tools/list' && isRecord(reply.result)) {
        const filtered = this.tools.observe(params, reply.result);
        if (filtered !== reply.result) return { ...reply, result: filtered };
      }
      return reply;
    }
    const name = isRecord(params) && typeof params.name === 'string' ? params.name : undefined;
    const version = protocolVersionOf(params);
    const annotations =
      name !== undefined && version !== undefined ? await this.tools.forTool(name, version) : undefined;
    const reply = await this.exchange(flight.id, body, mcpHeaders(msg, annotations), flight.controller.signal, (n) =>
      this.passNotification(flight, n),
    );
    if (
      errorCodeOf(reply) !== HEADER_MISMATCH ||
      name === undefined ||
      version === undefined ||
      flight.controller.signal.aborted
    )
      return reply;
    // The service's annotations may have changed since they were learned: re-list once, and retry once if that
    // changes the headers (the service rejected the call at its header check, so nothing ran).
    this.io.log(
      `tools/call ${JSON.stringify(name)} was refused with -32020 (${String((reply.error as Json).message)}); reading tools/list again`,
    );
    await this.tools.refresh(version);
    const fresh = this.tools.current(name);
    if (sameHeaders(mcpHeaders(msg, annotations), mcpHeaders(msg, fresh))) return reply;
    return this.exchange(flight.id, body, mcpHeaders(msg, fresh), flight.controller.signal, (n) =>
      this.passNotification(flight, n),
    );
  }

  /** A notification the service sent on a request's event stream, for the client unless it cancelled. */
  private passNotification(flight: Flight, n: Json): void {
    if (!flight.cancelled && !flight.answered) this.writeMessage(n);
  }

  private notification(method: string, params: unknown, body: Buffer): void {
    if (method === 'notifications/cancelled') {
      // On HTTP, closing the request is the cancellation (cancellation.mdx): the notification is not posted.
      const requestId = isRecord(params) ? params.requestId : undefined;
      const set = this.flights.get(idKey(requestId));
      if (!set || requestId === undefined) {
        this.io.log(`ignored notifications/cancelled for ${JSON.stringify(requestId)}: no such request in flight`);
        return;
      }
      for (const f of set) {
        f.cancelled = true;
        f.controller.abort(new PostError('aborted', 'cancelled'));
      }
      this.io.log(`cancelled request ${JSON.stringify(requestId)}: its HTTP request was aborted`);
      return;
    }
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new PostError('timeout', 'timeout')),
      Math.min(this.config.timeoutMs, LIST_TIMEOUT_MS),
    );
    this.track(
      this.postRaw(body, mcpHeaders({ method, params }, undefined), controller.signal, () => false)
        .then((r) => {
          if (r.status < 200 || r.status > 299)
            this.io.log(`the service refused notification ${method}: HTTP ${r.status}`);
        })
        .catch((e: unknown) => this.io.log(`notification ${method} was not delivered: ${this.failureText(e)}`))
        .finally(() => clearTimeout(timer)),
    );
  }

  private track(p: Promise<void>): void {
    this.running++;
    void p.finally(() => {
      this.running--;
      if (this.running === 0) for (const resolve of this.idle.splice(0)) resolve();
    });
  }

  // ------------------------------------------------------------------ HTTP

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

  private async postRaw(
    body: Buffer,
    mcp: Record<string, string>,
    signal: AbortSignal,
    onStream: (data: string) => boolean,
  ) {
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
  private async exchange(
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
        this.io.log('ignored an event-stream event that is not JSON');
        return false;
      }
      if (isResponse(m)) {
        final = m;
        return true;
      }
      if (isRecord(m) && typeof m.method === 'string' && !Object.prototype.hasOwnProperty.call(m, 'id'))
        onNotification(m);
      else this.io.log('ignored a message on the event stream that is neither a notification nor the response');
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

  private async fetchToolsPage(protocolVersion: string, cursor: string | undefined): Promise<unknown> {
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

  // ------------------------------------------------------------------ output

  private failureText(e: unknown): string {
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

  private errorMessage(id: unknown, code: number, message: string, data?: Json): Json {
    const error = data === undefined ? { code, message } : { code, message, data };
    return isRequestId(id) ? { jsonrpc: '2.0', id, error } : { jsonrpc: '2.0', error };
  }

  private answer(flight: Flight, reply: Json): void {
    if (flight.cancelled || flight.answered) return;
    flight.answered = true;
    this.writeMessage(reply);
  }

  private writeError(id: RequestId | undefined, code: number, message: string): void {
    this.writeMessage(this.errorMessage(id, code, message));
  }

  /** Compact JSON has no raw newline (JSON.stringify escapes them in strings), so one message is one line. */
  private writeMessage(m: unknown): void {
    this.io.write(`${JSON.stringify(m)}\n`);
  }
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1);
}

function sameHeaders(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => a[k] === b[k]);
}
