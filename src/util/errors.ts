/**
 * Errors are values with a stable code and a message a user can act on.
 * Messages never contain secrets (keys, tokens, partial signers): build them from names and public data only.
 */
export type ErrorCode =
  | 'payload_invalid' // the payload could not be parsed (docs/policy.md): a request problem, not a refusal
  | 'request_invalid' // arguments other than the payload are wrong (unknown key name, bad reason, ...)
  | 'key_not_authorized' // the token may not use this key
  | 'key_unknown' // no such key in the config
  | 'key_file' // the key file is missing, has loose permissions, or holds another pubkey
  | 'key_store' // the key's store cannot open or sign with it now (passphrase, HSM token, PIN): nothing was signed
  | 'config_invalid'
  | 'rpc' // the chain's JSON-RPC endpoint failed (transport, node error, unexpected shape)
  | 'ledger' // the ledger store could not be read or written
  | 'shutting_down'
  | 'cancelled'
  | 'internal';

export class SignerError extends Error {
  override readonly name = 'SignerError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function isSignerError(e: unknown): e is SignerError {
  return e instanceof SignerError;
}

/** A message chain for an unknown thrown value, safe to show a user (no stack traces). */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) {
    const cause = e.cause instanceof Error && !e.message.includes(e.cause.message) ? `: ${e.cause.message}` : '';
    return e.message + cause;
  }
  return String(e);
}
