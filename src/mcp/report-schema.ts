/**
 * The report's JSON Schema, the `outputSchema` of check and sign. Its lists (outcomes, check names, reasons,
 * figures) come from their one definition (src/signer/vocabulary.ts, src/signer/refusals.ts); its properties are
 * typed against the Report interface, so a field added to one and not the other does not compile.
 */
import { FIGURES, REASON_NAMES, type FigureName } from '../signer/refusals';
import type { Report } from '../signer/report';
import { CHECK_NAMES, OUTCOMES, PASS_NAMES } from '../signer/vocabulary';
import { nullable } from './tools/shared';
import type { Json } from './tools/tool';

/** Every field of the report; `required` lists them in this order. */
const REPORT_FIELDS = [
  'outcome',
  'key',
  'signature',
  'slot',
  'explorer',
  'detail',
  'failed_check',
  'reason',
  'figures',
  'program_error',
  'error',
  'checks',
  'compute_units',
  'fee',
  'fee_payer',
  'balance_change',
  'summary',
  'warnings',
  'payload_hash',
  'logs',
  'signed_transaction',
  'would_need_approval',
  'remaining_daily_lamports',
  'usd_value',
  'remaining_daily_usd',
  'token_changes',
  'remaining_daily_tokens',
  'signed_message',
] as const satisfies readonly (keyof Report)[];
/** Compiles only while REPORT_FIELDS names every field of the report. */
type Holds<T extends true> = T;
export type EveryReportField = Holds<
  [Exclude<keyof Report, (typeof REPORT_FIELDS)[number]>] extends [never] ? true : false
>;

const FIGURE_TYPES = {
  amount: { type: ['integer', 'string'] },
  integer: { type: 'integer' },
  string: { type: 'string' },
};

const FIGURES_SCHEMA = Object.fromEntries(
  (Object.keys(FIGURES) as FigureName[]).map((name) => [
    name,
    { ...FIGURE_TYPES[FIGURES[name].type], description: FIGURES[name].meaning },
  ]),
);

export const REPORT_SCHEMA: Json = {
  type: 'object',
  description: 'The report (signer://docs/outcomes): act on `outcome`.',
  properties: {
    outcome: { type: 'string', enum: [...OUTCOMES] },
    key: nullable('string'),
    signature: nullable('string'),
    slot: nullable('integer'),
    explorer: nullable('string'),
    detail: nullable('string'),
    failed_check: { enum: [...CHECK_NAMES, null] },
    reason: {
      enum: [...REASON_NAMES, null],
      description: 'Why it was not signed, for a program to act on (signer://docs/checks lists each); null otherwise.',
    },
    figures: {
      type: ['object', 'null'],
      description:
        "The refusal's figures where it has any (lamports as numbers; with `mint`, base units as decimal strings); null otherwise.",
      properties: FIGURES_SCHEMA,
      additionalProperties: false,
    },
    program_error: nullable('string'),
    error: { description: 'The raw transaction error, or null.' },
    checks: { type: 'array', items: { type: 'string', enum: [...PASS_NAMES] } },
    compute_units: nullable('integer'),
    fee: nullable('integer'),
    fee_payer: {
      ...nullable('string'),
      description:
        'Who pays `fee`: the key, or another account (an x402 facilitator); null before the message is built.',
    },
    balance_change: nullable('integer'),
    summary: { type: 'string' },
    warnings: { type: 'array', items: { type: 'string' } },
    payload_hash: { type: 'string' },
    logs: { type: 'array', items: { type: 'string' } },
    signed_transaction: {
      ...nullable('string'),
      description: 'mode "sign_only": the signed wire transaction (base64) for you to send; null otherwise.',
    },
    would_need_approval: {
      ...nullable('boolean'),
      description: 'Whether signing it needs an operator (approval confirm, spend above approve_above_lamports).',
    },
    remaining_daily_lamports: {
      ...nullable('integer'),
      description: "The key's daily allowance left after this transaction's spend; null when unknown.",
    },
    usd_value: {
      ...nullable('string'),
      description:
        'What the transaction takes out of the key in dollars ("1.503"), for a key with usd caps; null otherwise.',
    },
    remaining_daily_usd: {
      ...nullable('string'),
      description: "What is left of the key's usd.per_day after this transaction, in dollars; null without one.",
    },
    token_changes: {
      type: ['array', 'null'],
      description:
        "Per mint, from the simulation: the key's change (`change`, base units; negative is a spend; `ui_change` in the mint's units) and what each other owner receives (`credits`).",
      items: {
        type: 'object',
        properties: {
          mint: { type: 'string' },
          decimals: nullable('integer'),
          change: { type: 'string' },
          ui_change: nullable('string'),
          credits: {
            type: 'array',
            items: {
              type: 'object',
              properties: { owner: { type: 'string' }, amount: { type: 'string' } },
              required: ['owner', 'amount'],
            },
          },
          delegated: {
            type: 'array',
            description:
              'Present when the key spent as the delegate of token accounts it does not own (a treasury): the part of `change` made in each, by account.',
            items: {
              type: 'object',
              properties: { account: { type: 'string' }, change: { type: 'string' } },
              required: ['account', 'change'],
            },
          },
        },
        required: ['mint', 'decimals', 'change', 'ui_change', 'credits'],
      },
    },
    signed_message: {
      ...nullable('string'),
      description:
        'A message payload of format "offchain": the signed off-chain message envelope (base64: signatures, then the message); null otherwise.',
    },
    remaining_daily_tokens: {
      type: ['array', 'null'],
      description: "Each of the key's mints: its daily allowance left after this transaction (base units).",
      items: {
        type: 'object',
        properties: { mint: { type: 'string' }, remaining: { type: 'string' } },
        required: ['mint', 'remaining'],
      },
    },
  } satisfies Record<keyof Report, Json>,
  required: [...REPORT_FIELDS],
};
