/**
 * A fault-injecting JSON-RPC proxy on a loopback port, in front of the embedded chain: real HTTP both ways, with
 * the faults an RPC provider or a network inflicts on a signer staged per JSON-RPC method — answers that never
 * come, 500s and 429s, connections dropped before or after the node saw the call, slow answers, bodies that are
 * not JSON or cut short, node errors, results of the wrong shape, another chain's genesis, a send that is lost,
 * statuses that never come. It records every call it saw, and every transaction a sendTransaction carried
 * (whether or not it was passed on), so a test can tell what could have reached the chain.
 *
 * The engine batches calls made together (one HTTP request, a JSON array): a rule for a method applies to the
 * HTTP request that carries it; result rewrites touch only that method's replies.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodeBase58 } from '../../../src/util/base58';

export const FAULT_KINDS = [
  'timeout', // never answers (the client's deadline fires)
  'http500', // 500 Internal Server Error, text body
  'http429', // 429 Too Many Requests, as a provider rate-limits
  'drop', // the connection is cut before the call reaches the node
  'forwardThenDrop', // the node gets the call, the answer is lost with the connection
  'slow', // the answer comes, late (delayMs)
  'garbage', // 200 with an HTML body
  'truncated', // 200 with the JSON cut in half and the connection closed
  'rpcError', // JSON-RPC -32005 "Node is unhealthy" for every call in the request
  'wrongShape', // the method's result replaced by a string
  'wrongGenesis', // getGenesisHash answers another chain's hash
  'loseSend', // sendTransaction answers the signature but the transaction never reaches the node
  'nullStatuses', // getSignatureStatuses answers null for every signature, with or without history
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultRule {
  kind: FaultKind;
  /** The JSON-RPC method it targets; any method when absent. */
  method?: string;
  /** How many matching HTTP requests it hits (default: all). */
  times?: number;
  delayMs?: number;
  /** `http429` only: the Retry-After header sent ('1' when absent; null sends none). */
  retryAfter?: string | null;
}

interface RpcCall {
  jsonrpc?: string;
  id?: unknown;
  method?: string;
  params?: unknown[];
}

const OTHER_GENESIS = '4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY';

export class FaultProxy {
  readonly calls: Record<string, number> = {};
  /** base64 of every transaction a sendTransaction carried, in order, passed on or not. */
  readonly sends: string[] = [];
  /** The subset passed on to the node. */
  readonly forwardedSends: string[] = [];
  /** Called for every JSON-RPC call before faults apply (to drive the chain's own fault controls). */
  onCall: ((method: string) => void) | null = null;
  /**
   * Awaited before the calls of one request are passed on to the node: lets a test change the chain between two
   * calls of the signer (land a transaction between a simulation and the read that follows it).
   */
  beforeForward: ((calls: readonly { method: string; params: unknown[] }[]) => Promise<void>) | null = null;
  /** Rewrites the node's result of a call before the client gets it (a node that answers wrongly). */
  rewrite: ((method: string, result: unknown) => unknown) | null = null;
  private rules: (FaultRule & { left: number })[] = [];
  private readonly open = new Set<http.ServerResponse>();
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

  private target: URL | null = null;

  private constructor(
    private readonly server: http.Server,
    readonly port: number,
  ) {}

  /** Starts on a free loopback port; `target` may be given later (the chain may start after the proxy). */
  static async start(target?: string): Promise<FaultProxy> {
    const server = http.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const proxy = new FaultProxy(server, (server.address() as AddressInfo).port);
    if (target) proxy.setTarget(target);
    server.on('request', (req, res) => proxy.handle(req, res));
    return proxy;
  }

  /** The node the proxy passes calls on to. */
  setTarget(url: string): void {
    this.target = new URL(url);
  }

  /** The proxy's URL; any userinfo, path and query (an RPC provider's API key) are accepted and ignored. */
  url(credentials: { user?: string; password?: string; path?: string } = {}): string {
    const auth = credentials.user
      ? `${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.password ?? '')}@`
      : '';
    return `http://${auth}127.0.0.1:${this.port}${credentials.path ?? ''}`;
  }

  add(rule: FaultRule): void {
    this.rules.push({ ...rule, left: rule.times ?? Number.POSITIVE_INFINITY });
  }

  clear(): void {
    this.rules = [];
  }

  /** Forgets what was recorded (between scenarios). */
  reset(): void {
    this.clear();
    this.sends.length = 0;
    this.forwardedSends.length = 0;
    for (const k of Object.keys(this.calls)) Reflect.deleteProperty(this.calls, k);
    this.onCall = null;
    this.beforeForward = null;
    this.rewrite = null;
  }

  async close(): Promise<void> {
    for (const res of this.open) res.destroy();
    this.agent.destroy();
    await new Promise<void>((r) => {
      this.server.close(() => r());
      this.server.closeAllConnections();
    });
  }

  private take(methods: string[]): FaultRule | null {
    const rule = this.rules.find((r) => r.left > 0 && (r.method === undefined || methods.includes(r.method)));
    if (!rule) return null;
    rule.left--;
    return rule;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.open.add(res);
      res.once('close', () => this.open.delete(res));
      void this.answer(Buffer.concat(chunks), res).catch(() => res.destroy());
    });
  }

  private async answer(body: Buffer, res: http.ServerResponse): Promise<void> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      parsed = null;
    }
    const batch = Array.isArray(parsed);
    const calls = (batch ? parsed : [parsed]) as (RpcCall | null)[]; // null or junk where the body was not JSON-RPC
    const methods = calls.map((c) => (c && typeof c.method === 'string' ? c.method : '?'));
    for (const m of methods) {
      this.calls[m] = (this.calls[m] ?? 0) + 1;
      this.onCall?.(m);
    }
    const sendTxs = calls.filter((c) => c?.method === 'sendTransaction').map((c) => String(c?.params?.[0]));
    this.sends.push(...sendTxs);
    const rule = this.take(methods);

    switch (rule?.kind) {
      case 'timeout':
        return; // held open until the client gives up (or the proxy closes)
      case 'http500':
        return void res.writeHead(500, { 'content-type': 'text/plain' }).end('Internal Server Error');
      case 'http429': {
        const retryAfter = rule.retryAfter === undefined ? '1' : rule.retryAfter;
        return void res
          .writeHead(429, {
            'content-type': 'text/plain',
            ...(retryAfter === null ? {} : { 'retry-after': retryAfter }),
          })
          .end('Too many requests for a specific RPC call');
      }
      case 'drop':
        return void res.socket?.destroy();
      case 'garbage':
        return void res
          .writeHead(200, { 'content-type': 'text/html' })
          .end('<html><body>502 Bad Gateway</body></html>');
      case 'rpcError': {
        const errors = calls.map((c) => ({
          jsonrpc: '2.0',
          id: c?.id ?? null,
          error: { code: -32005, message: 'Node is unhealthy' },
        }));
        reply(res, 200, JSON.stringify(batch ? errors : errors[0]));
        return;
      }
      default:
        break;
    }
    if (rule?.kind === 'slow') await sleep(rule.delayMs ?? 500);

    // Calls the node never sees: a lost send gets a plausible answer (its signature) from the proxy.
    const lost = new Set<number>();
    if (rule?.kind === 'loseSend') calls.forEach((c, i) => c?.method === 'sendTransaction' && lost.add(i));
    const forwarded = calls.filter((_, i) => !lost.has(i));
    for (const c of forwarded) if (c?.method === 'sendTransaction') this.forwardedSends.push(String(c.params?.[0]));
    let replies: unknown[] = [];
    if (forwarded.length > 0) {
      await this.beforeForward?.(
        forwarded.map((c) => ({ method: typeof c?.method === 'string' ? c.method : '?', params: c?.params ?? [] })),
      );
      const upstream = await this.forward(Buffer.from(JSON.stringify(batch ? forwarded : forwarded[0])));
      const value = JSON.parse(upstream) as unknown;
      replies = Array.isArray(value) ? value : [value];
    }
    const byId = new Map(replies.map((r) => [(r as { id?: unknown }).id, r as Record<string, unknown>]));
    const out = calls.map((c, i) =>
      lost.has(i)
        ? { jsonrpc: '2.0', id: c?.id, result: signatureOf(String(c?.params?.[0])) }
        : (byId.get(c?.id) ?? replies[0]),
    );

    if (rule?.kind === 'forwardThenDrop') return void res.socket?.destroy();
    calls.forEach((c, i) => {
      const r = out[i] as Record<string, unknown> | undefined;
      if (!r || !('result' in r)) return;
      if (this.rewrite && typeof c?.method === 'string') r.result = this.rewrite(c.method, r.result);
      if (rule?.kind === 'wrongGenesis' && c?.method === 'getGenesisHash') r.result = OTHER_GENESIS;
      if (rule?.kind === 'wrongShape' && (rule.method === undefined || c?.method === rule.method))
        r.result = 'unexpected';
      if (rule?.kind === 'nullStatuses' && c?.method === 'getSignatureStatuses') {
        const v = r.result as { value: unknown[] };
        r.result = { ...v, value: v.value.map(() => null) };
      }
    });
    const text = JSON.stringify(batch ? out : out[0]);
    if (rule?.kind === 'truncated') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.write(text.slice(0, Math.floor(text.length / 2)));
      setImmediate(() => res.socket?.destroy());
      return;
    }
    reply(res, 200, text);
  }

  private forward(body: Buffer): Promise<string> {
    const target = this.target;
    if (!target) return Promise.reject(new Error('the fault proxy has no target yet'));
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: '/',
          method: 'POST',
          agent: this.agent,
          headers: { 'content-type': 'application/json', 'content-length': body.length },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }
}

function reply(res: http.ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

/** The fee payer's signature of a wire transaction (base64): bytes 1..65 after the one-byte signature count. */
export function signatureOf(txBase64: string): string {
  const bytes = Buffer.from(txBase64, 'base64');
  return encodeBase58(bytes.subarray(1, 65));
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
