/**
 * Why a credential was refused, as a value: the code agents see (`credential_refused`), a reason from a short list,
 * a message that says what to do, and, when one block's check refused, that block's index (0 is the root) and the
 * check's Datalog text (the credential's own words, which its holder may read). Never the credential itself.
 */
import { isRecord } from '../util/is-record';

export const CREDENTIAL_REFUSAL_REASONS = {
  malformed: 'the bearer value is neither a configured token nor a credential the signer can read',
  signature: "the credential's signature chain does not verify against the signer's root key",
  not_issued: "the credential's root is not listed under serve.credentials.issued",
  revoked: 'a block of the credential (or the root it derives from) is revoked',
  block: 'a block states something other than checks, or names a predicate the signer does not state',
  check: "a block's check refused this request",
  limits: 'the checks took longer than the signer allows',
} as const;

export type CredentialRefusalReason = keyof typeof CREDENTIAL_REFUSAL_REASONS;

export interface CredentialRefusal {
  code: 'credential_refused';
  reason: CredentialRefusalReason;
  message: string;
  /** The block that refused (0: the root), when one did. */
  block?: number;
  /** The check that refused, as the block states it. */
  check?: string;
}

export function credentialRefusal(
  reason: CredentialRefusalReason,
  message: string,
  at?: { block: number; check?: string },
): CredentialRefusal {
  return { code: 'credential_refused', reason, message, ...at };
}

/** The length a check's text is cut to in a refusal: enough to recognise it, bounded whatever a block holds. */
const CHECK_TEXT_MAX = 300;

/**
 * The refusal for what the library threw while authorizing: its first failed check, by block (0: the root), or a
 * run limit. The library throws plain objects (`{FailedLogic: {Unauthorized: {checks: [{Block: {block_id, rule}}]}}}`).
 */
export function refusalFromAuthorizer(thrown: unknown): CredentialRefusal {
  if (isRecord(thrown) && 'RunLimit' in thrown)
    return credentialRefusal('limits', 'the credential is refused: its checks took too long to evaluate; use fewer');
  const logic = isRecord(thrown) && isRecord(thrown.FailedLogic) ? thrown.FailedLogic : null;
  const unauthorized = logic && isRecord(logic.Unauthorized) ? logic.Unauthorized : null;
  const checks = unauthorized && Array.isArray(unauthorized.checks) ? (unauthorized.checks as unknown[]) : [];
  for (const c of checks) {
    const inBlock = isRecord(c) && isRecord(c.Block) ? c.Block : null;
    if (inBlock && typeof inBlock.block_id === 'number' && typeof inBlock.rule === 'string') {
      const block = inBlock.block_id;
      const check = inBlock.rule.length > CHECK_TEXT_MAX ? `${inBlock.rule.slice(0, CHECK_TEXT_MAX)}…` : inBlock.rule;
      const which = block === 0 ? 'its root block' : `its block ${block}`;
      return credentialRefusal(
        'check',
        `the credential does not allow this request: ${which} refused it (${check}); use a credential that allows it`,
        { block, check },
      );
    }
  }
  return credentialRefusal('check', 'the credential does not allow this request');
}

/** The kind of a parse or signature failure (`Format`, `Base64`, …), never its detail, which may quote the bytes. */
export function failureKind(thrown: unknown): string {
  if (isRecord(thrown)) {
    const [first] = Object.keys(thrown);
    const inner = first === undefined ? undefined : thrown[first];
    const sub = isRecord(inner) ? Object.keys(inner)[0] : undefined;
    const word = /^[A-Za-z0-9_]{1,40}$/;
    if (first !== undefined && word.test(first)) return sub !== undefined && word.test(sub) ? `${first}.${sub}` : first;
  }
  return 'unreadable';
}
