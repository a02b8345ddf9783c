/**
 * What `check` and `sign` were given: a transaction payload (v1, v2) or a message payload, told apart by
 * `version` before either parser runs. An object (the MCP path) is bounded and walked once, by its own parser.
 */
import { isRecord } from '../../util/is-record';
import { parsePayload, type Payload } from '../payload';
import { payloadValue } from '../payload-json';
import { isMessagePayloadValue, parseMessagePayload, type MessagePayload } from './payload';

export function parseRequestPayload(input: unknown): Payload | MessagePayload {
  // JSON text (the CLI reads a file) is parsed here once, so the version can be read.
  const value = typeof input === 'string' ? payloadValue(input) : input;
  if (isRecord(value) && isMessagePayloadValue(value)) return parseMessagePayload(payloadValue(value));
  return parsePayload(value);
}
