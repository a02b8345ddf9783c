/**
 * ajv validators for the MCP 2026-07-28 JSON-RPC envelopes. The schema is a copy of
 * ../shared/spec/2026-07-28/schema.json kept in test/abuse/fixtures so a clean clone can run the suite; when the
 * shared spec is present, the copy must be byte-identical to it (checked by the protocol fuzz suite).
 */
import fs from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import type { ValidateFunction } from 'ajv';

export const SCHEMA_COPY = path.join(__dirname, '../fixtures/mcp-2026-07-28.schema.json');
export const SHARED_SCHEMA = path.resolve(__dirname, '../../../../shared/spec/2026-07-28/schema.json');

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
