/**
 * One JSON-RPC 2.0 call over HTTP(S) POST to one endpoint, on a keep-alive connection pool, with a deadline per
 * call. It knows nothing about Solana and does not retry (resilient-rpc.ts does): it returns the `result` value or
 * throws an RpcError whose kind says what went wrong (transport / timeout / node error / unexpected shape), with
 * the HTTP status and the endpoint's Retry-After when there were any, and whose message names the method and the
 * cause, never the URL's path, query or credentials (providers put API keys there). Every HTTP request it sends is
 * counted for the operations whose calls it carries (request-count.ts).
 */
import http from 'node:http';
import https from 'node:https';
import type { RpcErrorKind } from './types';
import { SignerError } from '../util/errors';
import { parseRetryAfter } from './retry-after';
import { currentRequestCounter, type RequestCounter } from './request-count';

const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
const MAX_NODE_MESSAGE_CHARS = 500;
/**
 * The largest JSON-RPC batch body sent. Agave's RPC refuses a request body over 50 KiB unless its operator raised
 * `--rpc-max-request-body-size`; providers in front of it keep that default or less.
 */
const MAX_BATCH_BODY_BYTES = 40 * 1024;
/**
 * The most calls one batch carries. Providers cap batches by count too, some at 20; one sign's calls are at most
 * six, so a provider's cap never turns batching off for the signs of a busy turn.
 */
const MAX_BATCH_CALLS = 20;

export class RpcError extends SignerError {
  readonly kind: RpcErrorKind;
  readonly method: string;
  /** The JSON-RPC error code, for kind `node`. */
  readonly rpcCode: number | undefined;
  /** The HTTP status when the endpoint answered with one other than 200. */
  readonly httpStatus: number | undefined;
  /** How long the endpoint asked us to wait (its `Retry-After`), in milliseconds, when it said. */
  readonly retryAfterMs: number | undefined;

  constructor(kind: RpcErrorKind, method: string, message: string, options?: RpcErrorOptions) {
    super('rpc', message, { cause: options?.cause, context: { method, failure: kind } });
    this.kind = kind;
    this.method = method;
    this.rpcCode = options?.rpcCode;
    this.httpStatus = options?.httpStatus;
    this.retryAfterMs = options?.retryAfterMs;
  }
}

export interface RpcErrorOptions {
  rpcCode?: number;
  httpStatus?: number;
  retryAfterMs?: number;
  cause?: unknown;
}

/** What one POST brought back: the status, the body, and the `Retry-After` header turned into a wait. */
interface HttpReply {
  status: number;
  text: string;
  retryAfterMs: number | undefined;
}

export function isRpcError(e: unknown): e is RpcError {
  return e instanceof RpcError;
}

/** Scheme, host and port only: safe to show in a message or a log. */
export function describeEndpoint(url: URL): string {
  return `${url.protocol}//${url.host}`;
}

export class JsonRpcTransport {
  readonly endpoint: string;
  private readonly url: URL;
  private readonly agent: http.Agent;
  /** Connections used once and closed, for calls that must not be re-sent. */
  private readonly freshAgent: http.Agent;
  private readonly request: typeof http.request;
  private readonly auth: string | undefined;
  private nextId = 1;
  private batching = true;
  private readonly queue: QueuedCall[] = [];

  constructor(
    url: string,
    private readonly timeoutMs: number,
  ) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new SignerError('config_invalid', 'the RPC URL is not a valid URL');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new SignerError(
        'config_invalid',
        `the RPC URL must be http or https, not ${parsed.protocol.replace(/:$/, '')}`,
      );
    }
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
      throw new SignerError('config_invalid', 'the RPC timeout must be positive');
    this.url = parsed;
    this.endpoint = describeEndpoint(parsed);
    this.auth = parsed.username
      ? `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`
      : undefined;
    const tls = parsed.protocol === 'https:';
    this.request = tls ? https.request : http.request;
    // LIFO keeps the hottest sockets busy so idle ones age out instead of racing the server's idle timeout.
    const agentOptions = { keepAlive: true, maxSockets: 64, scheduling: 'lifo' as const };
    this.agent = tls ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
    this.freshAgent = tls ? new https.Agent({ keepAlive: false }) : new http.Agent({ keepAlive: false });
  }

  /**
   * Sends one call and returns its `result` (not yet shape-checked). Calls made before the event loop next
   * polls for I/O leave as one JSON-RPC batch in one HTTP request: those of one sign (the engine issues them with
   * Promise.all), so a sign costs a few round trips instead of a dozen, and under load those of every sign whose
   * reply or notice arrived in the same turn, so a busy signer sends a fraction of the requests (each costs the
   * process far more than the JSON it carries). A batch's body stays under MAX_BATCH_BODY_BYTES and its calls at
   * MAX_BATCH_CALLS, so a node's limits on request size and batch length never refuse it. A node that refuses batches is detected once and then called one by one.
   *
   * `once` is for a call that must not reach the node twice (requestAirdrop): it goes alone, on a connection of
   * its own, and is never re-sent here, not even after a reset that looks like a stale pooled socket (such a
   * reset can also come after the node took the call).
   */
  call(method: string, params: unknown[], opts: { once?: boolean } = {}): Promise<unknown> {
    const counter = currentRequestCounter();
    if (opts.once === true) return this.single(method, params, counter, true);
    if (!this.batching) return this.single(method, params, counter);
    return new Promise((resolve, reject) => {
      this.queue.push({ method, params, counter, resolve, reject });
      if (this.queue.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    for (const calls of this.batchesOf(this.queue.splice(0))) {
      const [only] = calls;
      if (only !== undefined && calls.length === 1) {
        this.sendOne(only).then(
          (v) => settleAll(only, (c) => c.resolve(v)),
          (e: unknown) => settleAll(only, (c) => c.reject(e)),
        );
        continue;
      }
      this.batch(calls).catch((e: unknown) => {
        for (const c of calls) settleAll(c, (q) => q.reject(e));
      });
    }
  }

  /**
   * The queued calls serialized, each question once: the same method with the same parameters asked by several
   * signs in one turn (the finalized height, the genesis) is sent once and its answer given to each. In runs of at
   * most MAX_BATCH_CALLS calls whose bodies stay under MAX_BATCH_BODY_BYTES (a larger call goes alone).
   */
  private *batchesOf(queued: QueuedCall[]): Generator<SerializedCall[]> {
    const asked = new Map<string, SerializedCall>();
    for (const call of queued) {
      const params = JSON.stringify(call.params);
      const key = `${call.method}\n${params}`;
      const same = asked.get(key);
      if (same) same.waiting.push(call);
      else asked.set(key, this.serialize(call, params));
    }
    let run: SerializedCall[] = [];
    let bytes = 0;
    for (const c of asked.values()) {
      const size = Buffer.byteLength(c.json) + 1;
      if (run.length > 0 && (bytes + size > MAX_BATCH_BODY_BYTES || run.length === MAX_BATCH_CALLS)) {
        yield run;
        run = [];
        bytes = 0;
      }
      run.push(c);
      bytes += size;
    }
    if (run.length > 0) yield run;
  }

  private serialize(call: QueuedCall, params = JSON.stringify(call.params)): SerializedCall {
    const id = this.nextId++;
    const json = `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(call.method)},"params":${params}}`;
    return { method: call.method, waiting: [call], id, json };
  }

  private async single(
    method: string,
    params: unknown[],
    counter: RequestCounter | undefined,
    once = false,
  ): Promise<unknown> {
    // The caller awaits the answer itself, so nothing waits on the serialized call.
    const c = this.serialize({ method, params, counter, resolve: () => {}, reject: () => {} });
    return this.sendOne(c, once);
  }

  private async sendOne(c: SerializedCall, once = false): Promise<unknown> {
    const { method, id, json } = c;
    const body = Buffer.from(json);
    const sent = { methods: [method], counters: countersOf([c]) };
    const reply = once
      ? await this.post(method, body, sent, Date.now() + this.timeoutMs, this.freshAgent)
      : await this.postOnce(method, body, sent);
    return this.resultOf(method, id, reply);
  }

  private async batch(serialized: SerializedCall[]): Promise<void> {
    // Each method named once: a batch may carry the same calls of many signs.
    const label = [...new Set(serialized.map((c) => c.method))].join('+');
    const body = Buffer.from(`[${serialized.map((c) => c.json).join(',')}]`);
    const rejectAll = (e: unknown) => {
      for (const c of serialized) settleAll(c, (q) => q.reject(e));
    };
    const response = await this.postOnce(label, body, {
      methods: serialized.map((c) => c.method),
      counters: countersOf(serialized),
    });
    let replies: unknown;
    try {
      replies = JSON.parse(response.text);
    } catch {
      // An HTML error page, a cut-off body: a failure of this request, not a verdict on batching.
      rejectAll(
        response.status === 200
          ? new RpcError('shape', label, `${label}: the response is not JSON`)
          : this.httpError(label, response),
      );
      return;
    }
    if (!Array.isArray(replies) && response.status !== 200) {
      // Rate limited or failing (a 429 or 5xx with a JSON body): this request failed; batching may still work.
      rejectAll(this.httpError(label, response));
      return;
    }
    if (!Array.isArray(replies)) {
      // A JSON-RPC error object in answer to a batch: this node does not take batches (they are optional and
      // some providers turn them off). Call it one by one from now on.
      this.batching = false;
      for (const c of serialized)
        for (const q of c.waiting) this.single(q.method, q.params, q.counter).then(q.resolve, q.reject);
      return;
    }
    const byId = new Map<unknown, unknown>();
    for (const r of replies) if (typeof r === 'object' && r !== null) byId.set((r as { id?: unknown }).id, r);
    for (const c of serialized) {
      const reply = byId.get(c.id);
      try {
        if (reply === undefined)
          throw new RpcError('shape', c.method, `${c.method}: the batch response has no answer for this call`);
        const result = this.resultOf(c.method, c.id, { ...response, text: '' }, reply);
        settleAll(c, (q) => q.resolve(result));
      } catch (e) {
        settleAll(c, (q) => q.reject(e));
      }
    }
  }

  /** One POST, retried once when a pooled socket turned out closed before the request reached the server. */
  private async postOnce(method: string, body: Buffer, sent: SentRequest): Promise<HttpReply> {
    const deadline = Date.now() + this.timeoutMs;
    try {
      return await this.post(method, body, sent, deadline);
    } catch (e) {
      // The request never reached the server, so one retry is safe (also for sendTransaction: the same
      // bytes carry the same signature).
      if (!(e instanceof StaleSocketError)) throw e;
      // On a connection of its own: a second pooled socket may be just as stale, and that must not end the call.
      return this.post(method, body, sent, deadline, this.freshAgent);
    }
  }

  close(): void {
    this.agent.destroy();
    this.freshAgent.destroy();
  }

  private post(
    method: string,
    body: Buffer,
    sent: SentRequest,
    deadline: number,
    agent: http.Agent = this.agent,
  ): Promise<HttpReply> {
    for (const counter of sent.counters) counter.add(sent.methods);
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        fn();
      };
      const req = this.request(
        {
          protocol: this.url.protocol,
          hostname: this.url.hostname.replace(/^\[|\]$/g, ''),
          port: this.url.port || undefined,
          path: this.url.pathname + this.url.search,
          method: 'POST',
          agent,
          auth: this.auth,
          headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': body.length },
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_RESPONSE_BYTES) {
              req.destroy();
              finish(() =>
                reject(
                  new RpcError('shape', method, `${method}: the response is larger than ${MAX_RESPONSE_BYTES} bytes`),
                ),
              );
              return;
            }
            chunks.push(chunk);
          });
          res.on('end', () =>
            finish(() =>
              resolve({
                status: res.statusCode ?? 0,
                text: Buffer.concat(chunks).toString('utf8'),
                retryAfterMs: parseRetryAfter(res.headers['retry-after'], Date.now()),
              }),
            ),
          );
          res.on('error', (e) => finish(() => reject(this.transportError(method, e))));
        },
      );
      const timer = setTimeout(
        () => {
          req.destroy();
          finish(() => reject(new RpcError('timeout', method, `${method}: timed out after ${this.timeoutMs} ms`)));
        },
        Math.max(0, deadline - Date.now()),
      );
      req.on('error', (e: NodeJS.ErrnoException) => {
        const stale = req.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE');
        finish(() => reject(stale ? new StaleSocketError() : this.transportError(method, e)));
      });
      req.end(body);
    });
  }

  private transportError(method: string, e: NodeJS.ErrnoException): RpcError {
    const cause = e.code ?? e.message;
    return new RpcError('transport', method, `${method}: cannot reach ${this.endpoint}: ${cause}`, { cause: e });
  }

  /** A non-200 answer without a JSON-RPC verdict: the request failed at the HTTP level. */
  private httpError(method: string, response: HttpReply): RpcError {
    return new RpcError('transport', method, `${method}: ${this.endpoint} answered HTTP ${response.status}`, {
      httpStatus: response.status,
      ...(response.retryAfterMs === undefined ? {} : { retryAfterMs: response.retryAfterMs }),
    });
  }

  private resultOf(method: string, id: number, response: HttpReply, parsed?: unknown): unknown {
    const body = parsed === undefined ? this.parseBody(method, response) : parsed;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new RpcError('shape', method, `${method}: the response is not a JSON-RPC object`);
    }
    const reply = body as Record<string, unknown>;
    const error = reply['error'];
    if (error !== undefined && error !== null) {
      const code =
        typeof error === 'object' && typeof (error as { code?: unknown }).code === 'number'
          ? (error as { code: number }).code
          : undefined;
      const text = typeof error === 'object' ? (error as { message?: unknown }).message : error;
      const detail = typeof text === 'string' ? text.slice(0, MAX_NODE_MESSAGE_CHARS) : 'no message';
      return this.throwNodeError(method, code, detail, response);
    }
    if (response.status !== 200) throw this.httpError(method, response);
    if (reply['id'] !== id) throw new RpcError('shape', method, `${method}: the response answers another request id`);
    if (!('result' in reply))
      throw new RpcError('shape', method, `${method}: the response has neither result nor error`);
    return reply['result'];
  }

  private parseBody(method: string, response: HttpReply): unknown {
    try {
      return JSON.parse(response.text);
    } catch {
      if (response.status !== 200) throw this.httpError(method, response);
      throw new RpcError('shape', method, `${method}: the response is not JSON`);
    }
  }

  /** A JSON-RPC error; under a 429 or 5xx status it keeps the status (and any Retry-After) so it can be retried. */
  private throwNodeError(method: string, code: number | undefined, detail: string, response: HttpReply): never {
    const label = code === undefined ? 'node error' : `node error ${code}`;
    const http = response.status === 200 ? {} : { httpStatus: response.status };
    const wait = response.retryAfterMs === undefined ? {} : { retryAfterMs: response.retryAfterMs };
    throw new RpcError('node', method, `${method}: ${label}: ${detail}`, {
      ...(code === undefined ? {} : { rpcCode: code }),
      ...http,
      ...wait,
    });
  }
}

class StaleSocketError extends Error {}

interface QueuedCall {
  method: string;
  params: unknown[];
  /** The operation the call is counted for (request-count.ts). */
  counter: RequestCounter | undefined;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/**
 * One question on the wire: its id and its JSON, serialized once whether it leaves alone or in a batch, and every
 * queued call that asked it.
 */
interface SerializedCall {
  method: string;
  waiting: QueuedCall[];
  id: number;
  json: string;
}

/** Gives every call that asked the question its answer. */
function settleAll(c: SerializedCall, settle: (q: QueuedCall) => void): void {
  for (const q of c.waiting) settle(q);
}

/** The operations the calls are counted for, each once. */
function countersOf(calls: SerializedCall[]): RequestCounter[] {
  const counters = new Set<RequestCounter>();
  for (const c of calls) for (const q of c.waiting) if (q.counter !== undefined) counters.add(q.counter);
  return [...counters];
}

/** What one HTTP request carries, for the request counts of the operations waiting on it. */
interface SentRequest {
  methods: readonly string[];
  counters: readonly RequestCounter[];
}
