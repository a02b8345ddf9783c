/**
 * The JSON-RPC envelope: reading one message from a body, and writing replies as bytes. An error for a message
 * whose id cannot be read carries no `id` member (MCP's schema allows none, and never null).
 */
import { ErrorCode } from './protocol';

export type RequestId = string | number;

export type Parsed =
  | { kind: 'request'; id: RequestId; method: string; params: unknown }
  | { kind: 'notification'; method: string }
  | { kind: 'invalid'; id: RequestId | undefined; code: ErrorCode; message: string };

function isRequestId(v: unknown): v is RequestId {
  return typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v));
}

/** One message from a body: JSON, a single object, a request or a notification (never a batch or a response). */
export function parseMessage(body: Buffer): Parsed {
  let msg: unknown;
  try {
    msg = JSON.parse(body.toString('utf8'));
  } catch {
    return { kind: 'invalid', id: undefined, code: ErrorCode.ParseError, message: 'Parse error: the body is not valid JSON' };
  }
  if (Array.isArray(msg)) return { kind: 'invalid', id: undefined, code: ErrorCode.InvalidRequest, message: 'Invalid request: batches are not supported; send one message per POST' };
  if (typeof msg !== 'object' || msg === null) return { kind: 'invalid', id: undefined, code: ErrorCode.InvalidRequest, message: 'Invalid request: the body must be one JSON-RPC object' };
  const m = msg as Record<string, unknown>;
  const hasId = Object.prototype.hasOwnProperty.call(m, 'id');
  const id = hasId && isRequestId(m.id) ? m.id : undefined;
  if (m.jsonrpc !== '2.0') return { kind: 'invalid', id, code: ErrorCode.InvalidRequest, message: 'Invalid request: jsonrpc must be "2.0"' };
  if (typeof m.method !== 'string') {
    const isResponse = 'result' in m || 'error' in m;
    return { kind: 'invalid', id, code: ErrorCode.InvalidRequest, message: isResponse ? 'Invalid request: clients must not send responses' : 'Invalid request: method must be a string' };
  }
  if (!hasId) return { kind: 'notification', method: m.method };
  if (id === undefined) return { kind: 'invalid', id: undefined, code: ErrorCode.InvalidRequest, message: 'Invalid request: id must be a string or an integer, never null' };
  return { kind: 'request', id, method: m.method, params: m.params };
}

const PREFIX = '{"jsonrpc":"2.0","id":';

function idJson(id: RequestId): string {
  return typeof id === 'number' ? String(id) : JSON.stringify(id);
}

const CLOSE = Buffer.from('}');

/** A result reply around an already-serialised result object (static results are kept as bytes). */
export function resultBytes(id: RequestId, result: string | Buffer): Buffer {
  if (typeof result === 'string') return Buffer.from(`${PREFIX}${idJson(id)},"result":${result}}`, 'utf8');
  const head = Buffer.from(`${PREFIX}${idJson(id)},"result":`, 'utf8');
  return Buffer.concat([head, result, CLOSE], head.length + result.length + 1);
}

export function errorBytes(id: RequestId | undefined, code: ErrorCode, message: string, data?: unknown): Buffer {
  const error = data === undefined ? { code, message } : { code, message, data };
  const head = id === undefined ? '{"jsonrpc":"2.0"' : `${PREFIX}${idJson(id)}`;
  return Buffer.from(`${head},"error":${JSON.stringify(error)}}`, 'utf8');
}
