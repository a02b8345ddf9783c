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
import { ErrorCode } from '../mcp/protocol';
import { isRecord } from '../util/is-record';
import type { RelayConfig } from './config';
import { PostError } from './http-post';
import { errorCodeOf, errorMessage, idKey, isRequestId, type Json, type RequestId } from './messages';
import { mcpHeaders, protocolVersionOf } from './request-headers';
import { LIST_TIMEOUT_MS, RelayFailure, ServiceExchange } from './service-exchange';
import { ToolHeaderCache } from './tool-cache';

// The service's own codes: a client sees the same number for the same fault whichever transport it uses.
const PARSE_ERROR = ErrorCode.ParseError;
const INVALID_REQUEST = ErrorCode.InvalidRequest;
const INTERNAL_ERROR = ErrorCode.InternalError;
const HEADER_MISMATCH = ErrorCode.HeaderMismatch;

export interface RelayIo {
  /** Writes one protocol message; `line` has no newline inside and ends with one. */
  write(line: string): void;
  /** A line for stderr. */
  log(line: string): void;
}

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

function isBlank(line: Buffer): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}

export class Relay {
  private readonly flights = new Map<string, Set<Flight>>();
  private readonly notes = new Set<Promise<void>>();
  private running = 0;
  private idle: (() => void)[] = [];
  private readonly service: ServiceExchange;
  private readonly tools: ToolHeaderCache;

  constructor(
    private readonly config: RelayConfig,
    version: string,
    private readonly io: RelayIo,
  ) {
    this.service = new ServiceExchange(config, version, (l) => io.log(l));
    this.tools = new ToolHeaderCache(
      (v, cursor) => this.service.fetchToolsPage(v, cursor),
      (l) => io.log(l),
    );
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
        this.answer(f, errorMessage(f.id, INTERNAL_ERROR, reason));
        f.controller.abort(new PostError('aborted', reason));
      }
    }
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.service.close();
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
            errorMessage(
              flight.id,
              INTERNAL_ERROR,
              this.service.failureText(e),
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
      const reply = await this.service.exchange(
        flight.id,
        body,
        mcpHeaders(msg, undefined),
        flight.controller.signal,
        (n) => this.passNotification(flight, n),
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
    const reply = await this.service.exchange(
      flight.id,
      body,
      mcpHeaders(msg, annotations),
      flight.controller.signal,
      (n) => this.passNotification(flight, n),
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
    return this.service.exchange(flight.id, body, mcpHeaders(msg, fresh), flight.controller.signal, (n) =>
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
      this.service
        .postRaw(body, mcpHeaders({ method, params }, undefined), controller.signal, () => false)
        .then((r) => {
          if (r.status < 200 || r.status > 299)
            this.io.log(`the service refused notification ${method}: HTTP ${r.status}`);
        })
        .catch((e: unknown) => this.io.log(`notification ${method} was not delivered: ${this.service.failureText(e)}`))
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

  // ------------------------------------------------------------------ output

  private answer(flight: Flight, reply: Json): void {
    if (flight.cancelled || flight.answered) return;
    flight.answered = true;
    this.writeMessage(reply);
  }

  private writeError(id: RequestId | undefined, code: number, message: string): void {
    this.writeMessage(errorMessage(id, code, message));
  }

  /** Compact JSON has no raw newline (JSON.stringify escapes them in strings), so one message is one line. */
  private writeMessage(m: unknown): void {
    this.io.write(`${JSON.stringify(m)}\n`);
  }
}

function sameHeaders(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => a[k] === b[k]);
}
