/**
 * ajv validators for the MCP 2026-07-28 JSON-RPC envelopes. The schema is the one published with the 2026-07-28
 * specification, kept in test/abuse/fixtures so a clean clone can run the suite offline; its sha256 is pinned here
 * so an edited copy is caught (checked by the protocol fuzz suite).
 */
import fs from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import type { ValidateFunction } from 'ajv';

export const SCHEMA_COPY = path.join(__dirname, '../fixtures/mcp-2026-07-28.schema.json');
export const SCHEMA_SHA256 = 'ef70b61f99b6d2e5e3b46863822eab08dff6a45bedc7a08914e0e5b133f40203';

export interface EnvelopeValidators {
  error: ValidateFunction;
  result: ValidateFunction;
}

let cached: EnvelopeValidators | null = null;

export function envelopeValidators(): EnvelopeValidators {
  if (cached) return cached;
  const schema = JSON.parse(fs.readFileSync(SCHEMA_COPY, 'utf8')) as object;
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
  ajv.addSchema(schema, 'mcp');
  cached = {
    error: ajv.getSchema('mcp#/$defs/JSONRPCErrorResponse')!,
    result: ajv.getSchema('mcp#/$defs/JSONRPCResultResponse')!,
  };
  return cached;
}

export function describeErrors(v: ValidateFunction): string {
  return (v.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`).join('; ');
}
