/**
 * `serve.operator`: the operator console's own listener, where operators log in with a passkey and approve signs
 * (docs/operators.md). Off unless `listen` is set.
 */
import { parseListen } from '../formats';
import { fail } from '../fail';
import { section, type Infer } from '../setting';

/** Under `serve:`. */
export const operatorConsoleSchema = section({
  listen: {
    doc: 'The operator console (host:port), a listener of its own where operators log in with a passkey and approve signs (docs/operators.md); null turns it off. Keep it on loopback, or behind a TLS proxy and set public_url.',
    format: 'listen-address-or-off',
    default: null,
    nullable: true,
    env: 'SIGNER_OPERATOR_LISTEN',
  },
  public_url: {
    doc: "The console's address as operators' browsers open it (scheme://host[:port], no path): passkeys are bound to its host, enrollment links point at it, and https makes the session cookie Secure. null: http://localhost:PORT of the listener (browsers allow passkeys over plain http only on localhost).",
    format: 'string-or-null',
    default: null,
    nullable: true,
    env: 'SIGNER_OPERATOR_PUBLIC_URL',
  },
  session_secret_file: {
    doc: 'File holding the secret (32 characters or more) that seals console session cookies, the same for every replica (a mounted secret); null: one is generated once and kept in the ledger, which every replica shares.',
    format: 'string-or-null',
    default: null,
    nullable: true,
    env: 'SIGNER_OPERATOR_SESSION_SECRET_FILE',
  },
  session_ttl_ms: {
    doc: 'How long a console login lasts; then the operator logs in with the passkey again.',
    format: 'positive-int',
    default: 900_000,
    env: 'SIGNER_OPERATOR_SESSION_TTL_MS',
  },
  enrollment_ttl_ms: {
    doc: 'How long an enrollment link from `sa-forge-signer operator enroll` stays usable (once).',
    format: 'positive-int',
    default: 600_000,
    env: 'SIGNER_OPERATOR_ENROLLMENT_TTL_MS',
  },
});

type Raw = Infer<typeof operatorConsoleSchema>;

/** The console's listener resolved: its address parsed, its public origin checked, its secret file resolved. */
export type OperatorListenerConfig = Omit<Raw, 'listen'> & { listen: { host: string; port: number } };

/**
 * The console's public origin: https anywhere, plain http only on localhost, where browsers treat it as a secure
 * context (passkeys need one) and accept it as the passkeys' host; an IP address cannot be one.
 */
export function checkPublicUrl(text: string): string {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    fail(`serve.operator.public_url: ${JSON.stringify(text)} is not a URL (scheme://host[:port])`);
  }
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && u.hostname === 'localhost'))
    fail('serve.operator.public_url: use https://… (plain http works only for http://localhost:PORT)');
  if (/^[\d.]+$|^\[/.test(u.hostname))
    fail('serve.operator.public_url: name the host (passkeys are bound to a domain name, never an IP address)');
  if ((u.pathname !== '/' && u.pathname !== '') || u.search !== '' || u.hash !== '' || u.username !== '')
    fail('serve.operator.public_url: give only scheme://host[:port], without a path, query or credentials');
  return u.origin;
}

/** The console's listener, or null when it is off. */
export function buildOperatorListener(raw: Raw, resolve: (p: string) => string): OperatorListenerConfig | null {
  if (raw.listen === null) return null;
  const listen = parseListen(raw.listen) ?? fail('serve.operator.listen: not host:port');
  return {
    listen,
    public_url: raw.public_url === null ? null : checkPublicUrl(raw.public_url),
    session_secret_file: raw.session_secret_file === null ? null : resolve(raw.session_secret_file),
    session_ttl_ms: raw.session_ttl_ms,
    enrollment_ttl_ms: raw.enrollment_ttl_ms,
  };
}
