/**
 * What `check` and `sign` were given: a transaction payload (v1, v2) or a message payload, told apart by
 * `version` before either parser runs.
 */
import { parsePayload, payloadValue, type Payload } from '../payload';
import { isMessagePayloadValue, parseMessagePayload, type MessagePayload } from './payload';

export function parseRequestPayload(input: unknown): Payload | MessagePayload {
  const value = payloadValue(input);
  return isMessagePayloadValue(value) ? parseMessagePayload(value) : parsePayload(value);
}
