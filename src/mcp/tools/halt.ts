/** `halt`: the emergency brake, durable and seen by every replica; only an operator resumes. */
import { haltedByForAgents } from '../../signer/policy/rules/halted';
import { keyArg } from './shared';
import type { Json, Tool } from './tool';

const HALT_SCHEMA: Json = {
  type: 'object',
  properties: {
    halted: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          key: { type: 'string' },
          reason: { type: 'string' },
          by: { type: 'string' },
          ts: { type: 'integer' },
          already_halted: { type: 'boolean' },
        },
        required: ['key', 'reason', 'by', 'ts', 'already_halted'],
      },
    },
    not_recorded: {
      type: 'array',
      description: 'Keys halted in this process only, because the ledger could not record it.',
      items: {
        type: 'object',
        properties: { key: { type: 'string' }, error: { type: 'string' } },
        required: ['key', 'error'],
      },
    },
  },
  required: ['halted', 'not_recorded'],
};

export const haltTool: Tool = {
  definition: (paramHeaders) => ({
    name: 'halt',
    title: 'Halt signing',
    description:
      'Emergency brake: stop all signing with a key (or every key this token may use, without `key`) now, durably and in every replica. Only a human operator can release it (sa-forge-signer resume KEY): after a halt every check and sign on the key is refused with failed_check "halted", so stop and tell the operator. A sign already sent still runs to its outcome. ' +
      'Keys listed under not_recorded were halted in this process only: tell the operator.',
    inputSchema: {
      type: 'object',
      properties: {
        key: keyArg('Configured key name; omit it to halt every key this token may use.', paramHeaders),
        reason: {
          type: 'string',
          minLength: 1,
          maxLength: 1000,
          description: 'Why, for the operator who will read it.',
        },
      },
      required: ['reason'],
      additionalProperties: false,
    },
    outputSchema: HALT_SCHEMA,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  }),

  async run({ engine, args, key, principal }) {
    const reason = typeof args.reason === 'string' ? args.reason : '';
    const halted = await engine.halt({ key, reason, principal });
    // A key an operator halted earlier answers with that halt: its `by` as agents may read it.
    const result = { ...halted, halted: halted.halted.map((h) => ({ ...h, by: haltedByForAgents(h.by) })) };
    const outcome = result.not_recorded.length > 0 ? 'not_recorded' : 'ok';
    return {
      structured: result,
      outcome,
      failedCheck: null,
      key,
      signature: null,
      isError: outcome !== 'ok',
      read: false,
    };
  },
};
