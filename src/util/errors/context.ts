/**
 * What each error code carries besides its message, for a program to act on: the fields, their meaning, and the
 * type of an error's `context` derived from them. Only names and public data go here (key names, tool names, the
 * sentence a site wrote from them); never a secret (a key, a token, a passphrase, a partial signer, an RPC URL,
 * which may hold an API key).
 */
import type { ErrorCode } from './codes';

interface FieldSpec {
  meaning: string;
  /** Agent-written or otherwise untrusted: written into a message JSON-quoted, so it cannot pass for the signer's words. */
  quoted: boolean;
}

export const CONTEXT_FIELDS = {
  detail: {
    meaning: 'what went wrong, in words, built from names and public data only',
    quoted: false,
  },
  key: { meaning: 'the key named in the request', quoted: true },
  tool: { meaning: 'the tool called', quoted: false },
  method: { meaning: 'the JSON-RPC method that failed', quoted: false },
  failure: {
    meaning:
      'how the RPC call failed: `transport` (no answer), `node` (the node answered an error), `shape` (an answer the signer cannot read), `timeout`, `aborted`',
    quoted: false,
  },
} as const satisfies Record<string, FieldSpec>;

export type ContextField = keyof typeof CONTEXT_FIELDS;

/** The fields each code's context holds; a code whose sentence differs from site to site carries it as `detail`. */
export const ERROR_CONTEXT = {
  arguments_invalid: ['tool', 'detail'],
  payload_invalid: ['detail'],
  request_invalid: ['detail'],
  key_not_authorized: ['key'],
  key_unknown: ['detail'],
  key_store: ['detail'],
  rpc: ['detail'],
  ledger: ['detail'],
  ledger_unavailable: ['detail'],
  cancelled: ['detail'],
  internal: ['detail'],
  key_file: ['detail'],
  config_invalid: ['detail'],
} as const satisfies Record<ErrorCode, readonly ContextField[]>;

/** Fields a code carries when the site knows them; no template names them. */
export const OPTIONAL_CONTEXT = {
  rpc: ['method', 'failure'],
} as const satisfies Partial<Record<ErrorCode, readonly ContextField[]>>;

/** What a site may add to a sentence it wrote: the code's optional fields (never, for a code that has none). */
export type ExtraContext<C extends ErrorCode> = C extends keyof typeof OPTIONAL_CONTEXT
  ? { readonly [F in (typeof OPTIONAL_CONTEXT)[C][number]]?: string }
  : never;

/** The context of an error with code `C`: each of its fields, a string (for a union of codes, one of theirs). */
export type ErrorContext<C extends ErrorCode = ErrorCode> = C extends ErrorCode
  ? { readonly [F in (typeof ERROR_CONTEXT)[C][number]]: string } & (C extends keyof typeof OPTIONAL_CONTEXT
      ? ExtraContext<C>
      : unknown)
  : never;

/** The codes whose whole context is the sentence the site wrote (`new SignerError(code, message)`). */
export type DetailCode = {
  [C in ErrorCode]: (typeof ERROR_CONTEXT)[C] extends readonly ['detail'] ? C : never;
}[ErrorCode];
