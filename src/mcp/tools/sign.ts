/** `sign`: check, simulate, sign, and send and confirm (or, with mode sign_only, return the signed bytes). */
import { REPORT_SCHEMA } from '../report-schema';
import { keyArg, ON_REFUSAL, PAYLOAD_ARG, SIGN_KEY_ARG } from './shared';
import { reportResult } from './report-result';
import type { Tool } from './tool';

export const signTool: Tool = {
  definition: (paramHeaders) => ({
    name: 'sign',
    title: 'Sign and send a payload',
    description:
      'Check, simulate, sign, send and confirm a payload; returns the report. May take minutes (confirmation, or an operator approving a confirm key: raise your request timeout). ' +
      'With mode "sign_only" it stops after signing: outcome "signed" and signed_transaction (base64) for you to send before its blockhash expires; the amount counts against the daily cap until it lands or expires. ' +
      'A message payload (off-chain message or sign-in text, on a key with sign_messages on) is signed, never sent: outcome "signed" with signature, and signed_message for the off-chain format. ' +
      ON_REFUSAL +
      ' A key that needs approval and was rejected or not approved in time is refused with failed_check "approval": ask the operator. ' +
      'Operators may take longer than your request timeout: if your call times out while they decide, sign the exact same payload again (same key): it waits on the same pending approval, with the votes already cast, until that approval expires; a changed payload asks for a new one. ' +
      'Only outcomes confirmed, failed, refused and simulation_failed are final: after "unknown" the transaction may still land, so look up the signature before building a new one (signer://docs/outcomes).',
    inputSchema: {
      type: 'object',
      properties: {
        payload: PAYLOAD_ARG,
        key: keyArg(SIGN_KEY_ARG, paramHeaders),
        intent: {
          type: 'string',
          maxLength: 1000,
          description: 'Why this is signed, in one sentence; recorded in the audit log. Never put secrets here.',
        },
        mode: {
          type: 'string',
          enum: ['send', 'sign_only'],
          description:
            '"send" (default): the signer sends and confirms. "sign_only": the same checks, simulation, caps and approval, then the signed transaction is returned unsent.',
        },
      },
      required: ['payload'],
      additionalProperties: false,
    },
    outputSchema: REPORT_SCHEMA,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  }),

  async run({ engine, args, key, principal, signal, onProgress }) {
    const report = await engine.sign({
      payload: args.payload,
      key,
      intent: typeof args.intent === 'string' ? args.intent : null,
      mode: args.mode === 'sign_only' ? 'sign_only' : 'send', // the schema allows only these two
      principal,
      signal: signal?.(),
      onProgress,
    });
    return reportResult(report, key);
  },
};
