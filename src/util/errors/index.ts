/**
 * Errors are values with a stable code, a typed context and a message a user can act on, in the pattern of
 * @solana/errors: the codes (./codes.ts), each code's context (./context.ts), its message template (./messages.ts)
 * and the error that carries them (./signer-error.ts). Messages never contain secrets (keys, tokens, partial
 * signers): build them from names and public data only.
 */
export type { ErrorCode } from './codes';
export { SignerError, isSignerError } from './signer-error';

/** A message chain for an unknown thrown value, safe to show a user (no stack traces). */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) {
    const cause = e.cause instanceof Error && !e.message.includes(e.cause.message) ? `: ${e.cause.message}` : '';
    return e.message + cause;
  }
  return String(e);
}
