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
    return {
      kind: 'invalid',
      id: undefined,
      code: ErrorCode.ParseError,
      message: 'Parse error: the body is not valid JSON',
    };
  }
  if (Array.isArray(msg))
    return {
      kind: 'invalid',
      id: undefined,
      code: ErrorCode.InvalidRequest,
      message: 'Invalid request: batches are not supported; send one message per POST',
    };
  if (typeof msg !== 'object' || msg === null)
    return {
      kind: 'invalid',
      id: undefined,
      code: ErrorCode.InvalidRequest,
      message: 'Invalid request: the body must be one JSON-RPC object',
    };
  const m = msg as Record<string, unknown>;
  const hasId = Object.prototype.hasOwnProperty.call(m, 'id');
  const id = hasId && isRequestId(m.id) ? m.id : undefined;
  if (m.jsonrpc !== '2.0')
    return { kind: 'invalid', id, code: ErrorCode.InvalidRequest, message: 'Invalid request: jsonrpc must be "2.0"' };
  if (typeof m.method !== 'string') {
    const isResponse = 'result' in m || 'error' in m;
    return {
      kind: 'invalid',
      id,
      code: ErrorCode.InvalidRequest,
      message: isResponse
        ? 'Invalid request: clients must not send responses'
        : 'Invalid request: method must be a string',
    };
  }
  if (!hasId) return { kind: 'notification', method: m.method };
  if (id === undefined)
    return {
      kind: 'invalid',
      id: undefined,
      code: ErrorCode.InvalidRequest,
      message: 'Invalid request: id must be a string or an integer, never null',
    };
  return { kind: 'request', id, method: m.method, params: m.params };
}

/**
 * A reply's bytes in two parts, written to the socket together: the envelope's head with the request's id
 * (`{"jsonrpc":"2.0","id":1`) and the rest (`,"result":…}` or `,"error":…}`). A cached result keeps its rest as
 * bytes made once, so answering never copies it (tools/list is kilobytes; copying it into a new buffer per reply
 * was measurable).
 */
export interface ReplyBody {
  head: string;
  rest: Buffer;
}

function head(id: RequestId | undefined): string {
  if (id === undefined) return '{"jsonrpc":"2.0"';
  return `{"jsonrpc":"2.0","id":${typeof id === 'number' ? String(id) : JSON.stringify(id)}`;
}

/** The rest of a result reply around a serialised result object: made once for a cached result. */
export function resultRest(resultJson: string): Buffer {
  return Buffer.from(`,"result":${resultJson}}`, 'utf8');
}

export function resultReply(id: RequestId, rest: Buffer): ReplyBody {
  return { head: head(id), rest };
}

export function errorReply(id: RequestId | undefined, code: ErrorCode, message: string, data?: unknown): ReplyBody {
  const error = data === undefined ? { code, message } : { code, message, data };
  return { head: head(id), rest: Buffer.from(`,"error":${JSON.stringify(error)}}`, 'utf8') };
}

/** The whole reply as one buffer (tests, and callers that are not on the hot path). */
export function replyBytes(body: ReplyBody): Buffer {
  return Buffer.concat([Buffer.from(body.head, 'utf8'), body.rest]);
}
