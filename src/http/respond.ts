/** Writing JSON without Express's send (no ETag, no content sniffing): the bytes are ready, just frame them. */
import type { ServerResponse } from 'node:http';

const JSON_TYPE = 'application/json';

export function sendBytes(res: ServerResponse, status: number, body: Buffer | string, extra?: Record<string, string>): void {
  res.statusCode = status;
  res.setHeader('Content-Type', JSON_TYPE);
  res.setHeader('Content-Length', typeof body === 'string' ? Buffer.byteLength(body) : body.length);
  if (extra) for (const k in extra) res.setHeader(k, extra[k]!);
  res.end(body);
}

/** A plain (non-JSON-RPC) error body, as the HTTP layer answers: `{"error":"…"}`. */
export function sendError(res: ServerResponse, status: number, message: string, extra?: Record<string, string>): void {
  sendBytes(res, status, JSON.stringify({ error: message }), extra);
}
