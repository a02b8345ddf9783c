/** `key_show`: the keys a token may use, with their policy and what is left of it today. */
import { credentialLimits } from '../../credentials/limits';
import { STORE_STATES } from '../../keys/key-status';
import { haltedByForAgents } from '../../signer/policy/rules/halted';
import { keyArg, nullable } from './shared';
import type { Json, Tool } from './tool';

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
    store_status: {
      type: 'string',
      enum: [...STORE_STATES],
      description:
        "Whether the key's store can sign with it now: ok; key_unavailable (the store cannot open this key: a file, passphrase or token object an operator must fix); store_unavailable (the store cannot sign at all now, e.g. an HSM token gone). A sign is refused with an error until it is ok: ask an operator.",
    },
    policy: {
      type: 'object',
      description:
        "The key's policy, to plan a sign: lamport caps and what is left today, destinations, programs, sign-only, token authority operations, and per mint its caps and what is left (base units as strings).",
      properties: {
        per_tx_lamports: nullable('integer'),
        max_fee_lamports: nullable('integer'),
        approve_above_lamports: nullable('integer'),
        approvals_required: nullable('integer', {
          description:
            'How many distinct operators must approve a sign that needs approval (a confirm key); null when the key never asks.',
        }),
        remaining_daily_lamports: { type: 'integer' },
        per_destination_per_day_lamports: nullable('integer', {
          description: 'Most lamports one account may receive from the key in 24 h; null: no such cap.',
        }),
        usd: {
          type: ['object', 'null'],
          description:
            "The key's dollar caps (docs/pricing.md) as dollar strings, the dollars its signs of the last 24 h recorded when signed, and what is left of per_day; null for a key without dollar caps.",
          properties: {
            per_tx: nullable('string'),
            per_day: nullable('string'),
            approve_above: nullable('string'),
            spent_or_reserved_24h: { type: 'string' },
            remaining_daily: nullable('string'),
          },
          required: ['per_tx', 'per_day', 'approve_above', 'spent_or_reserved_24h', 'remaining_daily'],
        },
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
        'approvals_required',
        'remaining_daily_lamports',
        'per_destination_per_day_lamports',
        'usd',
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
    'store_status',
    'policy',
  ],
};

const CREDENTIAL_SCHEMA: Json = {
  type: 'object',
  description:
    "Present when the request's bearer is a credential (docs/credentials.md): its own block, every block's checks (each binds: a sign must pass all of them and the key's policy), the earliest expiry and the smallest per-transaction lamport, dollar and per-mint limits they state, and each block's daily budget with what is left of it.",
  properties: {
    root: { type: 'string' },
    block: { type: 'integer' },
    revocation_id: { type: 'string' },
    expires_at: nullable('string'),
    per_tx_lamports: nullable('integer'),
    per_tx_usd: nullable('string'),
    per_tx_tokens: {
      type: 'object',
      description: 'The smallest per-transaction limit the blocks state for each mint they name, in base units.',
      additionalProperties: { type: 'integer' },
    },
    blocks: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          block: { type: 'integer' },
          revocation_id: { type: 'string' },
          checks: { type: 'array', items: { type: 'string' } },
        },
        required: ['block', 'revocation_id', 'checks'],
      },
    },
    budgets: {
      type: 'array',
      description:
        "Each block's daily budgets (`per_day_lamports`, `per_day_usd_micros`; all keys together): what its signs spent or reserved in 24 h and what is left (dollars as strings with cents, the figures the ledger recorded); null where the block states no such budget. A sign must fit every one.",
      items: {
        type: 'object',
        properties: {
          block: { type: 'integer' },
          revocation_id: { type: 'string' },
          per_day_lamports: nullable('integer'),
          spent_or_reserved_24h: { type: 'integer' },
          remaining_lamports: nullable('integer'),
          per_day_usd: nullable('string'),
          spent_or_reserved_usd_24h: nullable('string'),
          remaining_usd: nullable('string'),
        },
        required: [
          'block',
          'revocation_id',
          'per_day_lamports',
          'spent_or_reserved_24h',
          'remaining_lamports',
          'per_day_usd',
          'spent_or_reserved_usd_24h',
          'remaining_usd',
        ],
      },
    },
  },
  required: [
    'root',
    'block',
    'revocation_id',
    'expires_at',
    'per_tx_lamports',
    'per_tx_usd',
    'per_tx_tokens',
    'blocks',
    'budgets',
  ],
};

export const keyShowTool: Tool = {
  definition: (paramHeaders) => ({
    name: 'key_show',
    title: 'Show keys',
    description:
      'Show a key this token may use (or all of them, without `key`): pubkey, class, approval mode, balance, limits, what was signed in the last minute and spent or reserved in 24 h, whether it is halted, and whether its store can sign with it now. Use it to plan: a sign above the remaining cap or rate, or on a halted key, is refused, and one on a key whose store_status is not ok fails. The figures may be up to a second old; check and sign always use fresh ones. ' +
      'A key this token may not use is an error result (isError): use one of the keys listed without `key`.',
    inputSchema: {
      type: 'object',
      properties: { key: keyArg('Configured key name; omit it to list every key this token may use.', paramHeaders) },
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: { keys: { type: 'array', items: KEY_VIEW_SCHEMA }, credential: CREDENTIAL_SCHEMA },
      required: ['keys'],
    },
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  }),

  async run({ engine, key, principal }) {
    const keys = (await engine.keyShow({ key, principal })).map((k) =>
      k.halted === null ? k : { ...k, halted: { ...k.halted, by: haltedByForAgents(k.halted.by) } },
    );
    const credential = principal.kind === 'token' ? principal.credential : undefined;
    const structured =
      credential === undefined
        ? { keys }
        : { keys, credential: credentialLimits(credential, await engine.budgetsShow(principal)) };
    return { structured, outcome: 'ok', failedCheck: null, key, signature: null, isError: false, read: true };
  },
};
