/**
 * Where operators' browsers reach the console, from `serve.operator`: the origin WebAuthn binds passkeys to (its host
 * is the relying party id), whether cookies must be Secure (behind TLS), and the Host/Origin allow-list of the
 * listener. Without a public_url the console is http://localhost:PORT: browsers treat localhost as a secure context,
 * which passkeys need, and an IP address can never be a relying party id.
 */
import type { OperatorListenerConfig } from '../config/types';

export interface ConsoleOrigin {
  /** scheme://host[:port], as the browser sends it in Origin and in clientDataJSON. */
  origin: string;
  /** The relying party id: the origin's host name. */
  rpId: string;
  /** https: cookies are Secure (and take the __Host- prefix). */
  secure: boolean;
  /** What the Host/Origin guard accepts besides `serve.allowed_hosts`: the origin's host:port. */
  authority: string;
}

export function consoleOrigin(op: Pick<OperatorListenerConfig, 'public_url'>, boundPort: number): ConsoleOrigin {
  const url = new URL(op.public_url ?? `http://localhost:${String(boundPort)}`);
  const secure = url.protocol === 'https:';
  const port = url.port === '' ? (secure ? '443' : '80') : url.port;
  return { origin: url.origin, rpId: url.hostname, secure, authority: `${url.hostname}:${port}` };
}

/** The enrollment link of a token: the token rides in the fragment, which browsers never send to a server or a log. */
export function enrollmentUrl(origin: ConsoleOrigin, token: string): string {
  return `${origin.origin}/enroll#${token}`;
}
