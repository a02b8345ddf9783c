/**
 * JSON-RPC 2.0 over HTTP POST, as Solana nodes serve it: single calls and batches, -32700 for a body that is
 * not JSON, -32600 for a request that is not JSON-RPC, `GET /health` → "ok". Every answer is HTTP 200 with a
 * JSON-RPC body, as on a node. A WebSocket upgrade on the same port goes to `upgrade` (the subscriptions).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { RpcFault } from './embedded-chain';

const MAX_BODY_BYTES = 10 * 1024 * 1024;

export type CallHandler = (method: string, params: unknown) => unknown;

export interface RpcHttpServer {
  url: string;
  close(): Promise<void>;
}

export type UpgradeHandler = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void;

export async function listenJsonRpc(
  handler: CallHandler,
  host: string,
  port: number,
  upgrade?: UpgradeHandler,
): Promise<RpcHttpServer> {
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/health') {
      reply(res, 200, 'ok', 'text/plain');
      return;
    }
    if (req.method !== 'POST') {
      reply(res, 405, 'Used HTTP Method is not allowed. POST or OPTIONS is required', 'text/plain');
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reply(res, 413, 'Payload Too Large', 'text/plain');
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (res.headersSent) return;
      reply(res, 200, JSON.stringify(answerBody(Buffer.concat(chunks).toString('utf8'), handler)), 'application/json');
    });
  });
  if (upgrade) server.on('upgrade', upgrade);
  // Longer than the client's idle sockets live, so a reused keep-alive socket is not closed under a request.
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 65_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function reply(res: http.ServerResponse, status: number, body: string, type: string): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function answerBody(body: string, handler: CallHandler): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return errorResponse(null, -32700, 'Parse error');
  }
  if (Array.isArray(parsed)) {
    if (parsed.length === 0) return errorResponse(null, -32600, 'Invalid request');
    return parsed.map((one) => answerOne(one, handler));
  }
  return answerOne(parsed, handler);
}

function answerOne(request: unknown, handler: CallHandler): unknown {
  if (typeof request !== 'object' || request === null) return errorResponse(null, -32600, 'Invalid request');
  const { jsonrpc, method, params, id } = request as Record<string, unknown>;
  const replyId = typeof id === 'string' || typeof id === 'number' ? id : null;
  if (jsonrpc !== '2.0' || typeof method !== 'string') return errorResponse(replyId, -32600, 'Invalid request');
  try {
    return { jsonrpc: '2.0', result: handler(method, params), id: replyId };
  } catch (e) {
    if (e instanceof RpcFault) return errorResponse(replyId, e.code, e.message);
    // A bug or a LiteSVM panic: answer as a node does with an internal error rather than dropping the call.
    return errorResponse(replyId, -32603, `Internal error: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function errorResponse(id: string | number | null, code: number, message: string): unknown {
  return { jsonrpc: '2.0', error: { code, message }, id };
}
