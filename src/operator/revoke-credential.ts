/**
 * Revoking a credential block from the console: what the admin typed (a revocation id, or an issued root's name)
 * resolved against the issued roots in force, then recorded in the ledger through the process's revocation set, so
 * this process refuses it at once and every other replica at its next read (src/credentials/ledger-revoked.ts).
 */
import type { IssuedCredentialConfig } from '../config/types';
import type { CredentialRevocation } from '../ledger/types';
import type { Outcome } from './outcome';

/** What the console needs of the credentials: absent when the service has none. */
export interface ConsoleCredentials {
  /** The issued roots now (a reload may change them). */
  issued(): readonly IssuedCredentialConfig[];
  /** Records a revocation in the ledger and applies it in this process. */
  revoke(rec: CredentialRevocation): Promise<CredentialRevocation>;
  /** Every revocation in the ledger, oldest first. */
  list(): Promise<CredentialRevocation[]>;
}

/** A block's revocation id: the hex of its Ed25519 signature. */
const REVOCATION_ID = /^[0-9a-f]{128}$/;
/** An issued root's name (config/sections/credentials.ts). */
const ROOT_NAME = /^[a-z0-9_-]{1,64}$/;
/** A reason longer than this is refused rather than cut: an operator can shorten it, an agent's paste is bounded. */
export const MAX_REVOKE_REASON = 500;

export interface RevokeRequest {
  target: string;
  reason: string;
  operator: string;
  now: number;
}

export async function revokeCredential(
  credentials: ConsoleCredentials,
  req: RevokeRequest,
): Promise<Outcome<CredentialRevocation>> {
  const reason = req.reason.trim();
  if (reason === '') return { ok: false, status: 400, error: 'give a reason for the revocation' };
  if (Array.from(reason).length > MAX_REVOKE_REASON)
    return { ok: false, status: 400, error: `the reason is longer than ${MAX_REVOKE_REASON} characters` };
  const target = req.target.trim();
  const issued = credentials.issued();
  const id = target.toLowerCase();
  let block: { revocation_id: string; name: string | null };
  if (REVOCATION_ID.test(id)) {
    block = { revocation_id: id, name: issued.find((c) => c.revocation_id === id)?.name ?? null };
  } else {
    const root = ROOT_NAME.test(target) ? issued.find((c) => c.name === target) : undefined;
    if (root === undefined)
      return {
        ok: false,
        status: 404,
        // Only a well-formed name is repeated back; anything else typed or pasted is not.
        error: ROOT_NAME.test(target)
          ? `no issued root named ${target}, and not a revocation id (128 hex characters)`
          : 'give a revocation id (128 hex characters) or an issued root name',
      };
    block = { revocation_id: root.revocation_id, name: root.name };
  }
  const kept = await credentials.revoke({ ...block, reason, by: `operator:${req.operator}`, ts: req.now });
  return { ok: true, value: kept };
}
