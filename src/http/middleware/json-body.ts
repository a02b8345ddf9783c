/**
 * The JSON body of POST /mcp through `express.json`, bounded by `limit` (413, before reading when Content-Length
 * says so). A Content-Type that is not JSON is 415; none at all is read as JSON, as the MCP transport's clients
 * send. Any JSON value is accepted here: the endpoint answers a wrong shape with the JSON-RPC error the protocol
 * names. The parser's failures reach the error handler, which maps them (body-errors.ts).
 */
import express, { type RequestHandler } from 'express';
import { sendError } from '../send';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** An empty body is not JSON (body-parser would hand on `{}`); it is reported as the parse error it is. */
function refuseEmpty(_req: unknown, _res: unknown, body: Buffer): void {
  if (body.length === 0) throw Object.assign(new SyntaxError('empty body'), { type: 'entity.parse.failed' });
}

/** 415 for a Content-Type that is not JSON, then `express.json`. */
export function jsonBody(limit: number): RequestHandler[] {
  const requireJsonType: RequestHandler = (req, res, next) => {
    const type = req.headers['content-type'];
    if (type !== undefined && !JSON_TYPE.test(type)) {
      sendError(res, 415, 'Content-Type must be application/json');
      return;
    }
    next();
  };
  return [requireJsonType, express.json({ limit, strict: false, type: () => true, verify: refuseEmpty })];
}
