/** `check`: every policy check and a simulation, nothing signed or sent. */
import { REPORT_SCHEMA } from '../report-schema';
import { keyArg, ON_REFUSAL, PAYLOAD_ARG, SIGN_KEY_ARG } from './shared';
import { reportResult } from './report-result';
import type { Tool } from './tool';

export const checkTool: Tool = {
  definition: (paramHeaders) => ({
    name: 'check',
    title: 'Check a payload',
    description:
      'Run every policy check and a simulation on a payload without signing or sending anything. Call it before sign; the report says whether sign would go ahead (outcome "ok") and what it would cost (fee, balance_change). ' +
      ON_REFUSAL +
      ' outcome "simulation_failed" means the program would reject the transaction: read logs and program_error, fix the payload.',
    inputSchema: {
      type: 'object',
      properties: { payload: PAYLOAD_ARG, key: keyArg(SIGN_KEY_ARG, paramHeaders) },
      required: ['payload'],
      additionalProperties: false,
    },
    outputSchema: REPORT_SCHEMA,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  }),

  async run({ engine, args, key, principal, signal }) {
    // Only check and sign wait on anything a departed client could cancel (simulation, confirmation).
    const report = await engine.check({ payload: args.payload, key, principal, signal: signal?.() });
    return reportResult(report, key);
  },
};
