/**
 * The JSON Schemas (2020-12) of payloads v1 and v2 as src/signer/payload.ts parses them, and of the message payload
 * as src/signer/message/payload.ts does, so an agent can see the
 * shape in tools/list instead of a bare object. Fields the parser ignores are allowed (a builder may add its own);
 * the parser, not this schema, is the authority, and a payload it cannot read is an error, never a refusal.
 */
import { base64Chars } from '../util/base64';
import { MAX_MESSAGE_BYTES, MAX_TRANSACTION_BYTES } from '../signer/wire/sizes';

type Json = Record<string, unknown>;

/** Every payload kind carries the builder's warnings the same way. */
const WARNINGS: Json = {
  type: ['array', 'null'],
  items: { type: 'string' },
  description: "The builder's warnings, recorded with the request.",
};

/** A base58-encoded 32-byte public key (32 to 44 characters of the Bitcoin alphabet). */
const ADDRESS: Json = { type: 'string', pattern: '^[1-9A-HJ-NP-Za-km-z]{32,44}$' };

const ACCOUNT_META: Json = {
  type: 'object',
  properties: {
    pubkey: { ...ADDRESS, description: 'The account.' },
    is_signer: { type: 'boolean', description: 'Whether the account signs the transaction.' },
    is_writable: { type: 'boolean', description: 'Whether the instruction may write the account.' },
  },
  required: ['pubkey', 'is_signer', 'is_writable'],
};

const INSTRUCTION: Json = {
  type: 'object',
  properties: {
    program_id: { ...ADDRESS, description: 'The program the instruction calls.' },
    accounts: { type: 'array', items: ACCOUNT_META, description: 'Accounts in the order the program expects.' },
    data: {
      type: 'array',
      items: { type: 'integer', minimum: 0, maximum: 255 },
      description: 'The instruction data, one integer per byte.',
    },
  },
  required: ['program_id', 'accounts', 'data'],
};

export const PAYLOAD_V1_SCHEMA: Json = {
  type: 'object',
  title: 'Payload v1',
  description:
    'Instructions the signer compiles into a transaction itself (with a fresh blockhash), plus what the builder says ' +
    'it does. Pass the object a transaction builder returned unchanged. Format: signer://docs/payload.',
  properties: {
    version: { const: 1, description: 'Payload format version.' },
    summary: {
      type: ['string', 'null'],
      description: 'What the transaction does, in the words of whoever built it. Shown to operators as unverified.',
    },
    warnings: WARNINGS,
    transaction: {
      type: 'object',
      properties: {
        fee_payer: {
          ...ADDRESS,
          description: 'Pays the fee; must be the pubkey of a configured key this token may use.',
        },
        instructions: { type: 'array', minItems: 1, items: INSTRUCTION },
      },
      required: ['fee_payer', 'instructions'],
    },
    partial_signers: {
      type: ['array', 'null'],
      items: { type: 'string', contentEncoding: 'base64', minLength: 88, maxLength: 88 },
      description:
        'Secret keypairs (64 bytes, base64) of accounts the transaction creates and that must sign it. Never logged, ' +
        'hashed or shown.',
    },
  },
  required: ['version', 'transaction'],
};

export const PAYLOAD_V2_SCHEMA: Json = {
  type: 'object',
  title: 'Payload v2',
  description:
    'A transaction you compiled yourself (legacy or v0, e.g. with @solana/kit), unsigned or signed by others, ' +
    'as base64 wire bytes; the fee payer must be a key this token may use. Format: signer://docs/payload.',
  properties: {
    version: { const: 2, description: 'Payload format version.' },
    transaction: {
      type: 'string',
      contentEncoding: 'base64',
      minLength: 4,
      maxLength: base64Chars(MAX_TRANSACTION_BYTES),
      description:
        "The wire transaction (kit: getBase64EncodedWireTransaction). The key's signature slot may be zeroed; every other signer's slot must hold a valid signature.",
    },
    summary: {
      type: ['string', 'null'],
      description: 'What the transaction does, in the words of whoever built it. Shown to operators as unverified.',
    },
    warnings: WARNINGS,
    replace_blockhash: {
      type: ['boolean', 'null'],
      description: "Sign on a fresh blockhash instead of the transaction's own (only when no one else has signed it).",
    },
  },
  required: ['version', 'transaction'],
};

export const PAYLOAD_MESSAGE_SCHEMA: Json = {
  type: 'object',
  title: 'Message payload',
  description:
    'Bytes to sign that are not a transaction: a Solana off-chain message, or a sign-in text (SIWS-style). The key ' +
    'must have sign_messages on. Bytes that decode as a transaction are refused. Nothing is sent. Format: signer://docs/payload.',
  properties: {
    version: { const: 'message', description: 'Marks a message payload.' },
    format: {
      enum: ['offchain', 'text'],
      description:
        '"offchain": message is the base64 off-chain message (kit: getOffchainMessageEncoder().encode(...)); "text": message is the UTF-8 text itself, signed byte for byte.',
    },
    message: {
      type: 'string',
      minLength: 1,
      // the longer of the two forms: a text of MAX_MESSAGE_BYTES UTF-8 bytes has at most that many characters
      maxLength: base64Chars(MAX_MESSAGE_BYTES),
      description: `At most ${MAX_MESSAGE_BYTES} bytes once decoded (base64) or encoded (UTF-8 text).`,
    },
    signer: {
      anyOf: [ADDRESS, { type: 'null' }],
      description: "The key's pubkey; picks the key when `key` is not given (one of them is required).",
    },
    summary: {
      type: ['string', 'null'],
      description: 'Why this is signed, in the words of whoever built it. Shown to operators as unverified.',
    },
    warnings: WARNINGS,
  },
  required: ['version', 'format', 'message'],
};

/** The tools' `payload` argument: one schema per version. */
export const PAYLOAD_SCHEMA: Json = {
  description:
    'Payload v1 (instructions the signer compiles), v2 (a wire transaction you compiled), or a message payload (an off-chain message or sign-in text).',
  oneOf: [PAYLOAD_V1_SCHEMA, PAYLOAD_V2_SCHEMA, PAYLOAD_MESSAGE_SCHEMA],
};
