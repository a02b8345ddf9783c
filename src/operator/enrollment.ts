/**
 * One-time enrollment links (`sa-forge-signer operator enroll NAME`): a random token the operator opens once, within
 * `enrollment_ttl_ms`, to register a passkey. Only the token's sha256 is kept in the ledger, so the ledger alone
 * opens nothing; the token itself is printed once and travels in the link's fragment.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Ledger } from '../ledger/types';

export function enrollmentTokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Records a new link for the operator and returns its token and expiry (unix seconds). */
export async function createEnrollment(
  ledger: Ledger,
  operator: string,
  ttlMs: number,
  nowS: number,
): Promise<{ token: string; expiresAt: number }> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = nowS + Math.ceil(ttlMs / 1000);
  await ledger.createEnrollment({
    token_hash: enrollmentTokenHash(token),
    operator,
    created_at: nowS,
    expires_at: expiresAt,
  });
  return { token, expiresAt };
}
