/**
 * Each error code's message template: `$field` stands for that field of the error's context (./context.ts). The
 * message is what the agent reads after `error: ` and the operator on the command line, so a code that keeps its
 * template keeps its text.
 */
import type { ErrorCode } from './codes';
import { CONTEXT_FIELDS, type ContextField, type ErrorContext } from './context';

export const ERROR_MESSAGES = {
  arguments_invalid: 'invalid arguments for $tool: $detail',
  payload_invalid: '$detail',
  request_invalid: '$detail',
  key_not_authorized: 'this token may not use key $key',
  key_unknown: '$detail',
  key_store: '$detail',
  rpc: '$detail',
  ledger: '$detail',
  ledger_unavailable: '$detail',
  cancelled: '$detail',
  internal: '$detail',
  key_file: '$detail',
  config_invalid: '$detail',
} as const satisfies Record<ErrorCode, string>;

const PLACEHOLDER = /\$([a-z_]+)/g;

/** The fields a template names, in order. */
export function templateFields(code: ErrorCode): string[] {
  return [...ERROR_MESSAGES[code].matchAll(PLACEHOLDER)].map((m) => m[1] ?? '');
}

/** The message of `code` with `context`: each placeholder replaced once, untrusted fields JSON-quoted. */
export function formatMessage<C extends ErrorCode>(code: C, context: ErrorContext<C>): string {
  const fields = context as Readonly<Record<string, string>>;
  return ERROR_MESSAGES[code].replace(PLACEHOLDER, (whole, name: string) => {
    const value = fields[name];
    if (value === undefined) return whole;
    return CONTEXT_FIELDS[name as ContextField].quoted ? JSON.stringify(value) : value;
  });
}
