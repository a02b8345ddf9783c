/**
 * The JSON-RPC envelope: reading one message from a parsed body, and writing replies as JSON text. An error for a
 * message whose id cannot be read carries no `id` member (MCP's schema allows none, and never null).
 */
import { isRecord } from '../util/is-record';
import { ErrorCode } from './protocol';

export type RequestId = string | number;

export type Parsed =
  | { kind: 'request'; id: RequestId; method: string; params: unknown }
  | { kind: 'notification'; method: string }
  | { kind: 'invalid'; id: RequestId | undefined; code: ErrorCode; message: string };

function isRequestId(v: unknown): v is RequestId {
  return typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v));
}

export const PARSE_ERROR_MESSAGE = 'Parse error: the body is not valid JSON';

/** One message from a parsed JSON body: a single object, a request or a notification (never a batch or a response). */
export function readMessage(msg: unknown): Parsed {
  if (Array.isArray(msg))
    return {
      kind: 'invalid',
      id: undefined,
      code: ErrorCode.InvalidRequest,
      message: 'Invalid request: batches are not supported; send one message per POST',
    };
  if (!isRecord(msg))
    return {
      kind: 'invalid',
      id: undefined,
      code: ErrorCode.InvalidRequest,
      message: 'Invalid request: the body must be one JSON-RPC object',
    };
  const hasId = Object.prototype.hasOwnProperty.call(msg, 'id');
  const id = hasId && isRequestId(msg.id) ? msg.id : undefined;
  if (msg.jsonrpc !== '2.0')
    return { kind: 'invalid', id, code: ErrorCode.InvalidRequest, message: 'Invalid request: jsonrpc must be "2.0"' };
  if (typeof msg.method !== 'string') {
    const isResponse = 'result' in msg || 'error' in msg;
    return {
      kind: 'invalid',
      id,
      code: ErrorCode.InvalidRequest,
      message: isResponse
        ? 'Invalid request: clients must not send responses'
        : 'Invalid request: method must be a string',
    };
  }
  if (!hasId) return { kind: 'notification', method: msg.method };
  if (id === undefined)
    return {
      kind: 'invalid',
      id: undefined,
      code: ErrorCode.InvalidRequest,
      message: 'Invalid request: id must be a string or an integer, never null',
    };
  return { kind: 'request', id, method: msg.method, params: msg.params };
}

function envelopeHead(id: RequestId | undefined): string {
  return id === undefined ? '{"jsonrpc":"2.0"' : `{"jsonrpc":"2.0","id":${JSON.stringify(id)}`;
}

/** A result reply around a result already serialised. */
export function resultReply(id: RequestId, resultJson: string): string {
  return `${envelopeHead(id)},"result":${resultJson}}`;
}

const CLOSE = Buffer.from('}');

/**
 * A result reply as bytes around a result already encoded (the static answers, encoded once at start). Only the
 * short head is encoded per reply: the result (tools/list is ~17 KB) is copied, never turned back into a string
 * and re-encoded (docs/performance.md, "Replies").
 */
export function resultReplyBytes(id: RequestId, result: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${envelopeHead(id)},"result":`), result, CLOSE]);
}

export function errorReply(id: RequestId | undefined, code: ErrorCode, message: string, data?: unknown): string {
  const error = data === undefined ? { code, message } : { code, message, data };
  return `${envelopeHead(id)},"error":${JSON.stringify(error)}}`;
}

/** The reply to a body that is not JSON at all (the HTTP layer's parser found that out). */
export function parseErrorReply(): string {
  return errorReply(undefined, ErrorCode.ParseError, PARSE_ERROR_MESSAGE);
}
