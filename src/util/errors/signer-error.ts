/**
 * An error as a value: a code from the table (./codes.ts), its typed context (./context.ts) and the message its
 * template makes of that context (./messages.ts). A code whose sentence differs from site to site is built as
 * `new SignerError(code, message)`: the message is its `detail`. Messages and contexts never hold secrets (keys,
 * tokens, partial signers): build them from names and public data only.
 */
import type { ErrorCode } from './codes';
import type { DetailCode, ErrorContext, ExtraContext } from './context';
import { formatMessage } from './messages';

export class SignerError<C extends ErrorCode = ErrorCode> extends Error {
  override readonly name = 'SignerError';
  readonly code: C;
  readonly context: ErrorContext<C>;

  constructor(code: C & DetailCode, message: string, options?: { cause?: unknown; context?: ExtraContext<C> });
  constructor(code: C, context: ErrorContext<C>, options?: { cause?: unknown });
  constructor(
    code: C,
    messageOrContext: string | ErrorContext<C>,
    options?: { cause?: unknown; context?: ExtraContext<C> },
  ) {
    const context = (
      typeof messageOrContext === 'string' ? { ...options?.context, detail: messageOrContext } : messageOrContext
    ) as ErrorContext<C>;
    super(formatMessage(code, context), options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.context = context;
  }
}

/** Whether `e` is a SignerError, and with `code`, one with that code (its context then typed). */
export function isSignerError<C extends ErrorCode = ErrorCode>(e: unknown, code?: C): e is SignerError<C> {
  return e instanceof SignerError && (code === undefined || e.code === code);
}
