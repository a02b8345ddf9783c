/**
 * The four tool definitions, always in the order check, sign, key_show, halt (docs/mcp.md). Plain JSON Schema
 * 2020-12 literals, built once at start: nothing is converted per request. Each description tells the agent what
 * a refusal means and what to do next, because the description is all a model reads before calling.
 */
import { PAYLOAD_SCHEMA } from './payload-schema';
import { REPORT_SCHEMA } from './report-schema';

const KEY_HEADER = 'Key';

type Json = Record<string, unknown>;

export interface ToolDef {
  name: 'check' | 'sign' | 'key_show' | 'halt';
  title: string;
  description: string;
  inputSchema: Json;
  outputSchema: Json;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
}

const nullable = (type: string, extra: Json = {}): Json => ({ type: [type, 'null'], ...extra });

const KEY_VIEW_SCHEMA: Json = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    pubkey: { type: 'string' },
    class: { type: 'string', enum: ['session', 'wallet'] },
    approval: { type: 'string', enum: ['auto', 'confirm', 'deny'] },
    profile: nullable('string'),
    balance_lamports: nullable('integer'),
    rate_limit_per_minute: { type: 'integer' },
    daily_lamport_cap: { type: 'integer' },
    signs_last_minute: { type: 'integer' },
    spent_or_reserved_24h: { type: 'integer' },
    halted: {
      oneOf: [
        { type: 'null' },
        {
          type: 'object',
          properties: { reason: { type: 'string' }, by: { type: 'string' }, ts: { type: 'integer' } },
          required: ['reason', 'by', 'ts'],
        },
      ],
    },
    sign_messages: {
      type: 'boolean',
      description: 'Whether sign accepts message payloads (off-chain messages, sign-in texts) for this key.',
    },
    policy: {
      type: 'object',
      description:
        "The key's policy, to plan a sign: lamport caps and what is left today, destinations, programs, sign-only, token authority operations, and per mint its caps and what is left (base units as strings).",
      properties: {
        per_tx_lamports: nullable('integer'),
        max_fee_lamports: nullable('integer'),
        approve_above_lamports: nullable('integer'),
        remaining_daily_lamports: { type: 'integer' },
        transfer_to: { type: 'array', items: { type: 'string' } },
        programs: { type: 'array', items: { type: 'string' } },
        sign_only: { type: 'boolean' },
        allow_token_ops: { type: 'array', items: { type: 'string' } },
        tokens: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              mint: { type: 'string' },
              program: { type: 'string', enum: ['spl-token', 'token-2022'] },
              per_tx: nullable('string'),
              per_day: { type: 'string' },
              spent_or_reserved_24h: { type: 'string' },
              remaining_daily: { type: 'string' },
              destinations: { type: ['array', 'null'], items: { type: 'string' } },
              per_destination_per_day: nullable('string'),
              approve_above: nullable('string'),
            },
            required: [
              'mint',
              'program',
              'per_tx',
              'per_day',
              'spent_or_reserved_24h',
              'remaining_daily',
              'destinations',
              'per_destination_per_day',
              'approve_above',
            ],
          },
        },
      },
      required: [
        'per_tx_lamports',
        'max_fee_lamports',
        'approve_above_lamports',
        'remaining_daily_lamports',
        'transfer_to',
        'programs',
        'sign_only',
        'allow_token_ops',
        'tokens',
      ],
    },
  },
  required: [
    'name',
    'pubkey',
    'class',
    'approval',
    'profile',
    'balance_lamports',
    'rate_limit_per_minute',
    'daily_lamport_cap',
    'signs_last_minute',
    'spent_or_reserved_24h',
    'halted',
    'sign_messages',
    'policy',
  ],
};

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

function keyArg(description: string, paramHeaders: boolean): Json {
  return {
    type: 'string',
    minLength: 1,
    maxLength: 64,
    description,
    ...(paramHeaders ? { 'x-mcp-header': KEY_HEADER } : {}),
  };
}

const PAYLOAD_ARG: Json = PAYLOAD_SCHEMA;

const ON_REFUSAL =
  'outcome "refused" means a policy check failed before anything was signed: failed_check names it and detail says ' +
  'why (signer://docs/checks). Change the payload to satisfy that check, or ask the operator; sending the same payload ' +
  'again is refused the same way.';

/** The tool list; `paramHeaders` adds SEP-2243 `x-mcp-header: "Key"` to every `key` argument. */
export function toolDefinitions(paramHeaders: boolean): ToolDef[] {
  const signKey =
    "Configured key name; default: the key whose pubkey is the payload's fee payer. Required when another account pays the fee (x402: the key is one of the signers; sign_only). Your token may use only its own keys.";
  return [
    {
      name: 'check',
      title: 'Check a payload',
      description:
        'Run every policy check and a simulation on a payload without signing or sending anything. Call it before sign; the report says whether sign would go ahead (outcome "ok") and what it would cost (fee, balance_change). ' +
        ON_REFUSAL +
        ' outcome "simulation_failed" means the program would reject the transaction: read logs and program_error, fix the payload.',
      inputSchema: {
        type: 'object',
        properties: { payload: PAYLOAD_ARG, key: keyArg(signKey, paramHeaders) },
        required: ['payload'],
        additionalProperties: false,
      },
      outputSchema: REPORT_SCHEMA,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    {
      name: 'sign',
      title: 'Sign and send a payload',
      description:
        'Check, simulate, sign, send and confirm a payload; returns the report. May take minutes (confirmation, or an operator approving a confirm key: raise your request timeout). ' +
        'With mode "sign_only" it stops after signing: outcome "signed" and signed_transaction (base64) for you to send before its blockhash expires; the amount counts against the daily cap until it lands or expires. ' +
        'A message payload (off-chain message or sign-in text, on a key with sign_messages on) is signed, never sent: outcome "signed" with signature, and signed_message for the off-chain format. ' +
        ON_REFUSAL +
        ' A key that needs approval and was rejected or not approved in time is refused with failed_check "approval": ask the operator. ' +
        'Only outcomes confirmed, failed, refused and simulation_failed are final: after "unknown" the transaction may still land, so look up the signature before building a new one (signer://docs/outcomes).',
      inputSchema: {
        type: 'object',
        properties: {
          payload: PAYLOAD_ARG,
          key: keyArg(signKey, paramHeaders),
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
    },
    {
      name: 'key_show',
      title: 'Show keys',
      description:
        'Show a key this token may use (or all of them, without `key`): pubkey, class, approval mode, balance, limits, what was signed in the last minute and spent or reserved in 24 h, and whether it is halted. Use it to plan: a sign above the remaining cap or rate, or on a halted key, is refused. The figures may be up to a second old; check and sign always use fresh ones. ' +
        'A key this token may not use is an error result (isError): use one of the keys listed without `key`.',
      inputSchema: {
        type: 'object',
        properties: { key: keyArg('Configured key name; omit it to list every key this token may use.', paramHeaders) },
        additionalProperties: false,
      },
      outputSchema: {
        type: 'object',
        properties: { keys: { type: 'array', items: KEY_VIEW_SCHEMA } },
        required: ['keys'],
      },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    {
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
    },
  ];
}
