/**
 * A JSON-RPC request judged against a verified credential: the facts its body states (method, tool, key, mode) and
 * the keys the credential lets it use. A call that names its key is judged for that key; one that names none (a
 * sign whose fee payer picks the key, a `key_show` of every key) is judged for each key of the root, and uses those
 * its checks allow. The body is the agent's and unchecked yet: only strings are read from it, and what is not a
 * string is left out, so a check on it refuses.
 */
import type { PresentedCredential } from '../signer/types';
import { isRecord } from '../util/is-record';
import type { CredentialRefusal } from './refusal';
import type { VerifiedCredential } from './verifier';
import type { CredentialRequest } from './vocabulary';

export type RequestJudgement = { ok: true; keys: string[] } | { ok: false; refusal: CredentialRefusal };

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** What the body says about itself, the key left out (the caller tries each). */
export function requestOf(message: unknown): { request: CredentialRequest; key: string | undefined } {
  const body = isRecord(message) ? message : {};
  const method = text(body.method) ?? '';
  if (method !== 'tools/call') return { request: { method }, key: undefined };
  const params = isRecord(body.params) ? body.params : {};
  const args = isRecord(params.arguments) ? params.arguments : {};
  const tool = text(params.name);
  const request: CredentialRequest = { method, ...(tool === undefined ? {} : { tool }) };
  if (tool === 'sign') {
    // A sign without a mode sends (the tool's default); a mode that is not a string states none.
    const mode = args.mode === undefined || args.mode === null ? 'send' : text(args.mode);
    if (mode !== undefined) request.mode = mode;
  }
  return { request, key: text(args.key) };
}

/**
 * The credential as the engine sees it: which one (root name, blocks), and its checks again once the simulation has
 * said what the transaction moves: the same request, the key the engine chose, and the spend facts
 * (`lamports_out`, `destination`), at the moment of the judgement (after an approval's wait too).
 */
export function presentedCredential(
  credential: VerifiedCredential,
  message: unknown,
  now: () => Date,
): PresentedCredential {
  const { request } = requestOf(message);
  return {
    root: credential.root.name,
    blocks: credential.revocationIds.map((id, i) => ({
      block: i,
      revocation_id: id,
      checks: [...(credential.checks[i] ?? [])],
    })),
    budgets: credential.budgets.map((b) => ({ ...b })),
    usd_limited_by: credential.usdLimitedBy,
    spend: ({ key, lamports_out, destinations, usd_micros_out, tokens_out }) => {
      // A sign outlives its request only when the agent went away (an approval's wait): nothing to judge it by.
      if (credential.disposed)
        return { message: 'the request that presented the credential has ended, so its checks cannot be judged' };
      const spend = {
        lamports_out,
        destinations,
        ...(usd_micros_out === undefined ? {} : { usd_micros_out }),
        ...(tokens_out === undefined ? {} : { tokens_out }),
      };
      const refusal = credential.authorize({ ...request, key, spend }, now());
      return refusal === null ? null : { message: refusal.message };
    },
  };
}

export function judgeRequest(credential: VerifiedCredential, message: unknown, now: Date): RequestJudgement {
  const { request, key } = requestOf(message);
  if (request.method !== 'tools/call') {
    const refusal = credential.authorize(request, now);
    return refusal === null ? { ok: true, keys: [...credential.root.keys] } : { ok: false, refusal };
  }
  const candidates = key === undefined ? credential.root.keys : [key];
  const keys: string[] = [];
  let first: CredentialRefusal | null = null;
  for (const k of candidates) {
    const refusal = credential.authorize({ ...request, key: k }, now);
    if (refusal === null) keys.push(k);
    else first ??= refusal;
  }
  if (keys.length > 0) return { ok: true, keys };
  // A root with no keys refuses every tool call; its checks say why only when a key was tried.
  return {
    ok: false,
    refusal: first ?? {
      code: 'credential_refused',
      reason: 'check',
      message: 'the credential allows no key; ask for one that names a key',
    },
  };
}
