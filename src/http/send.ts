/**
 * Writing JSON answers. Every JSON answer says exactly `Content-Type: application/json` (the transport's rule; a
 * string through Express's `res.send` would gain `; charset=utf-8`, so the bytes go as a Buffer). The HTTP
 * layer's own answers (not JSON-RPC) are `{"error": "…"}` with a message a person can act on.
 */
import type { Response } from 'express';

export function sendJson(
  res: Response,
  status: number,
  json: string | Buffer,
  headers: Record<string, string> = {},
): void {
  res.status(status).set(headers).setHeader('Content-Type', 'application/json');
  res.send(typeof json === 'string' ? Buffer.from(json, 'utf8') : json);
}

export function sendError(res: Response, status: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, JSON.stringify({ error: message }), headers);
}
