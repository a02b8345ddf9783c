/** The JSON-RPC 2.0 message shapes the relay reads and writes on stdio. */
import { isRecord } from '../util/is-record';

export type Json = Record<string, unknown>;
export type RequestId = string | number;

export function isRequestId(v: unknown): v is RequestId {
  return typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v));
}

/** A JSON-RPC 2.0 response: a result or a well-formed error, never both. */
export function isResponse(m: unknown): m is Json {
  if (!isRecord(m) || m.jsonrpc !== '2.0' || typeof m.method === 'string') return false;
  const hasResult = Object.prototype.hasOwnProperty.call(m, 'result');
  const hasError = Object.prototype.hasOwnProperty.call(m, 'error');
  if (hasResult === hasError) return false;
  if (hasError) return isRecord(m.error) && Number.isInteger(m.error.code) && typeof m.error.message === 'string';
  return true;
}

export function errorCodeOf(m: Json): number | undefined {
  return isRecord(m.error) && typeof m.error.code === 'number' ? m.error.code : undefined;
}

/** Ids compare by their JSON text: `1` and `"1"` are different requests. */
export const idKey = (id: unknown): string => (id === undefined ? 'undefined' : JSON.stringify(id));

/** An error response; without a usable id it carries none, as JSON-RPC asks for errors it cannot tie to a request. */
export function errorMessage(id: unknown, code: number, message: string, data?: Json): Json {
  const error = data === undefined ? { code, message } : { code, message, data };
  return isRequestId(id) ? { jsonrpc: '2.0', id, error } : { jsonrpc: '2.0', error };
}
