/**
 * A payload as a JSON value: bounded as a whole (how many values, how deep) before anything else reads it, and
 * hashed for the audit log and the approvals (without partial signers, which are secrets).
 */
import crypto from 'node:crypto';
import { isRecord } from '../util/is-record';
import { canonicalJson } from './canonical-json';
import { invalid } from './payload-errors';
import { PAYLOAD_LIMITS } from './payload-limits';
import type { SignerError } from '../util/errors';

/** Hash of the payload without partial signers: the same with and without them. */
export function payloadHash(value: unknown): string {
  let hashed = value;
  if (isRecord(value) && 'partial_signers' in value) {
    const rest = { ...value };
    delete rest.partial_signers;
    hashed = rest;
  }
  return crypto.createHash('sha256').update(canonicalJson(hashed)).digest('hex');
}

/**
 * The payload as a bounded JSON object: the object itself, or its JSON text (the CLI reads a file). Every kind of
 * payload, transaction or message, goes through this first.
 */
export function payloadValue(input: unknown): Record<string, unknown> {
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch {
      throw invalid('payload is not valid JSON');
    }
  }
  const tooBig = jsonSizeError(value);
  if (tooBig) throw tooBig;
  if (!isRecord(value)) throw invalid('payload has an unexpected shape (it must be a JSON object)');
  return value;
}

/**
 * Counts the JSON values and their depth without recursion, stopping at the first bound passed: the hash walks
 * the whole value, so a value of half a million numbers would hold the event loop for over 100 ms.
 */
function jsonSizeError(value: unknown): SignerError | null {
  const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 1 }];
  let count = 0;
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    count++;
    if (count > PAYLOAD_LIMITS.jsonValues)
      return invalid(`payload has more than ${PAYLOAD_LIMITS.jsonValues} JSON values; a transaction needs far fewer`);
    if (top.depth > PAYLOAD_LIMITS.jsonDepth)
      return invalid(`payload nests deeper than ${PAYLOAD_LIMITS.jsonDepth} levels`);
    const { v, depth } = top;
    if (Array.isArray(v)) {
      if (count + stack.length + v.length > PAYLOAD_LIMITS.jsonValues)
        return invalid(`payload has more than ${PAYLOAD_LIMITS.jsonValues} JSON values; a transaction needs far fewer`);
      for (const item of v as unknown[]) stack.push({ v: item, depth: depth + 1 });
    } else if (isRecord(v)) {
      for (const k in v) {
        stack.push({ v: v[k], depth: depth + 1 });
        if (count + stack.length > PAYLOAD_LIMITS.jsonValues)
          return invalid(
            `payload has more than ${PAYLOAD_LIMITS.jsonValues} JSON values; a transaction needs far fewer`,
          );
      }
    }
  }
  return null;
}
