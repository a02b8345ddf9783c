/**
 * The WebAuthn challenge of a decision: a hash over what the operator is shown and decides on (the approval's id,
 * key, payload hash and every figure the signer computed), the decision itself and a single-use server nonce. The
 * passkey signs this challenge, so its assertion is good for that approval, that decision and that moment only: for
 * another approval, changed figures, the opposite decision or a second use, the challenge differs and the server's
 * check fails.
 */
import { createHash } from 'node:crypto';
import type { ApprovalRecord } from '../ledger/types';
import { canonicalJson } from '../signer/canonical-json';

export type Decision = 'approved' | 'rejected';

/** The figures an operator sees of an approval, exactly the ones the challenge commits to. */
export function shownFigures(a: ApprovalRecord): Record<string, unknown> {
  return {
    id: a.id,
    key: a.key,
    payload_hash: a.payload_hash,
    balance_change: a.balance_change,
    fee: a.fee,
    fee_payer: a.fee_payer ?? null,
    tokens: a.tokens ?? [],
    destinations: a.destinations ?? [],
    programs: a.programs ?? [],
    message: a.message ?? null,
    usd_value: a.usd_value ?? null,
    expires_at: a.expires_at,
  };
}

/** 32 bytes: sha256 of the canonical JSON of the figures, the decision and the nonce. */
export function decisionChallenge(a: ApprovalRecord, decision: Decision, nonce: string): Uint8Array<ArrayBuffer> {
  const text = canonicalJson({
    v: 1,
    purpose: 'sa-forge-signer approval decision',
    decision,
    nonce,
    approval: shownFigures(a),
  });
  return digestOf(text);
}

/**
 * The challenge of lifting a key's halt: the key, who lifts it and a single-use nonce. A resume lets a key spend
 * again, so it takes the operator's passkey like an approval does, and a session cookie alone cannot do it.
 */
export function resumeChallenge(key: string, operator: string, nonce: string): Uint8Array<ArrayBuffer> {
  return digestOf(canonicalJson({ v: 1, purpose: 'sa-forge-signer resume', key, operator, nonce }));
}

function digestOf(text: string): Uint8Array<ArrayBuffer> {
  const digest = createHash('sha256').update(text, 'utf8').digest();
  const out = new Uint8Array(new ArrayBuffer(digest.length));
  out.set(digest);
  return out;
}

/** The challenge as clientDataJSON carries it (base64url), for the verification. */
export function challengeText(challenge: Uint8Array): string {
  return Buffer.from(challenge).toString('base64url');
}
