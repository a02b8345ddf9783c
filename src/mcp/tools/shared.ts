/**
 * What the tools' definitions share: the `key` argument (with its SEP-2243 header annotation when enabled), the
 * payload argument, and the sentence every report-returning tool says about a refusal.
 */
import { PAYLOAD_SCHEMA } from '../payload-schema';
import type { Json } from './tool';

const KEY_HEADER = 'Key';

export const nullable = (type: string, extra: Json = {}): Json => ({ type: [type, 'null'], ...extra });

/** `paramHeaders` adds SEP-2243 `x-mcp-header: "Key"`. */
export function keyArg(description: string, paramHeaders: boolean): Json {
  return {
    type: 'string',
    minLength: 1,
    maxLength: 64,
    description,
    ...(paramHeaders ? { 'x-mcp-header': KEY_HEADER } : {}),
  };
}

export const PAYLOAD_ARG: Json = PAYLOAD_SCHEMA;

/** check's and sign's `key`: how the key is chosen when it is not named. */
export const SIGN_KEY_ARG =
  "Configured key name; default: the key whose pubkey is the payload's fee payer. Required when another account pays the fee (x402: the key is one of the signers; sign_only). Your token may use only its own keys.";

export const ON_REFUSAL =
  'outcome "refused" means a policy check failed before anything was signed: failed_check names it, reason says why as ' +
  'a stable code to branch on (figures carries its amounts) and detail says it in words (signer://docs/checks). Change ' +
  'the payload to satisfy that check, or ask the operator; sending the same payload again is refused the same way.';
