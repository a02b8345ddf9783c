/**
 * The WebAuthn ceremonies of the console (@simplewebauthn/server), free of HTTP: registering a passkey with an
 * enrollment link, logging in, and signing a decision on an approval. Every challenge is a single-use nonce kept in
 * the ledger (so any replica can finish a ceremony another began, and none twice); user verification is required.
 */
import { randomBytes } from 'node:crypto';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { OperatorConfig } from '../config/types';
import type { EnrollmentRecord, PasskeyRecord } from '../ledger/operators';
import type { ApprovalRecord, Ledger } from '../ledger/types';
import { errorMessage, isSignerError } from '../util/errors';
import { challengeText, decisionChallenge, resumeChallenge, shownFigures, type Decision } from './challenge';
import { enrollmentTokenHash } from './enrollment';
import type { SignedInOperator } from './locals';
import type { ConsoleOrigin } from './origin';
import { done, refused, type Outcome, type Refusal } from './outcome';

/** How long a ceremony's challenge is good for: enough to find and touch the authenticator. */
export const CEREMONY_TTL_S = 120;
const RP_NAME = 'sa-forge-signer';

export interface CeremonyDeps {
  ledger: Ledger;
  origin: ConsoleOrigin;
  operators: () => readonly OperatorConfig[];
  /** Unix seconds. */
  now: () => number;
}

const LINK_CLOSED =
  'this enrollment link is unknown, used already or expired: ask for a new one (sa-forge-signer operator enroll NAME)';

function transports(p: PasskeyRecord): AuthenticatorTransport[] {
  return p.transports as AuthenticatorTransport[];
}

function credentialOf(p: PasskeyRecord) {
  return {
    id: p.credential_id,
    publicKey: new Uint8Array(Buffer.from(p.public_key, 'base64url')),
    counter: p.counter,
    transports: transports(p),
  };
}

// ------------------------------------------------------------------ enrollment

/** The refusal of an enrollment for an operator the config no longer names, or null when it names them. */
function notConfigured(deps: CeremonyDeps, operator: string): Refusal | null {
  if (deps.operators().some((o) => o.name === operator)) return null;
  return refused(
    403,
    `operator ${operator} is no longer in the config (operators): nothing was registered; add them back and ask for a new link (sa-forge-signer operator enroll NAME)`,
    'operator_not_configured',
  );
}

/** The enrollment a link opens: unused, unexpired, and for an operator the config still names. */
async function openEnrollment(
  deps: CeremonyDeps,
  token: string,
  now: number,
): Promise<Outcome<{ hash: string; link: EnrollmentRecord }>> {
  const hash = enrollmentTokenHash(token);
  const link = await deps.ledger.getEnrollment(hash);
  if (!link || link.used_at !== null || link.expires_at < now) return refused(410, LINK_CLOSED);
  return notConfigured(deps, link.operator) ?? done({ hash, link });
}

export async function registrationOptions(
  deps: CeremonyDeps,
  token: string,
): Promise<Outcome<PublicKeyCredentialCreationOptionsJSON>> {
  const now = deps.now();
  const open = await openEnrollment(deps, token, now);
  if (!open.ok) return open;
  const { hash, link } = open.value;
  const existing = await deps.ledger.listPasskeys(link.operator);
  const options = await generateRegistrationOptions({
    rpName: RP_NAME,
    rpID: deps.origin.rpId,
    userName: link.operator,
    userID: new Uint8Array(Buffer.from(`operator:${link.operator}`, 'utf8')),
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.credential_id, transports: transports(p) })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  });
  await deps.ledger.putNonce(
    {
      nonce: options.challenge,
      purpose: 'register',
      subject: hash,
      expires_at: Math.min(now + CEREMONY_TTL_S, link.expires_at),
    },
    now,
  );
  return done(options);
}

export async function registerPasskey(
  deps: CeremonyDeps,
  token: string,
  response: RegistrationResponseJSON,
): Promise<Outcome<{ operator: string; credentialId: string }>> {
  const now = deps.now();
  // Opened again here: a reload may have removed the operator since the options were fetched, and a passkey stored
  // under a name no longer configured would open the console again the day the name is reused.
  const open = await openEnrollment(deps, token, now);
  if (!open.ok) return open;
  const { hash, link } = open.value;
  let verified;
  try {
    verified = await verifyRegistrationResponse({
      response,
      expectedChallenge: async (c) => (await deps.ledger.takeNonce(c, 'register', now))?.subject === hash,
      expectedOrigin: deps.origin.origin,
      expectedRPID: deps.origin.rpId,
      requireUserVerification: true,
    });
  } catch (e) {
    return refused(403, `the passkey's registration does not verify: ${errorMessage(e)}`);
  }
  if (!verified.verified) return refused(403, "the passkey's registration does not verify");
  const { credential } = verified.registrationInfo;
  const passkey: PasskeyRecord = {
    credential_id: credential.id,
    operator: link.operator,
    public_key: Buffer.from(credential.publicKey).toString('base64url'),
    counter: credential.counter,
    transports: credential.transports ?? [],
    created_at: now,
    last_used_at: null,
  };
  if (!(await deps.ledger.completeEnrollment(hash, now, passkey))) return refused(410, LINK_CLOSED);
  return done({ operator: link.operator, credentialId: credential.id });
}

// ------------------------------------------------------------------ assertions

/** Verifies an assertion by a known passkey of a configured operator; `expected` is the challenge check. */
async function verifyAssertion(
  deps: CeremonyDeps,
  response: AuthenticationResponseJSON,
  expected: string | ((challenge: string) => Promise<boolean>),
): Promise<Outcome<{ passkey: PasskeyRecord; operator: OperatorConfig }>> {
  const passkey = await deps.ledger.getPasskey(response.id);
  if (!passkey) return refused(403, 'this passkey is not enrolled (or was revoked)');
  const operator = deps.operators().find((o) => o.name === passkey.operator);
  if (!operator) return refused(403, `operator ${passkey.operator} is no longer in the config (operators)`);
  let verified;
  try {
    verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: expected,
      expectedOrigin: deps.origin.origin,
      expectedRPID: deps.origin.rpId,
      credential: credentialOf(passkey),
      requireUserVerification: true,
    });
  } catch (e) {
    return refused(403, `the passkey's answer does not verify: ${errorMessage(e)}`);
  }
  if (!verified.verified) return refused(403, "the passkey's answer does not verify");
  await deps.ledger.touchPasskey(passkey.credential_id, verified.authenticationInfo.newCounter, deps.now());
  return done({ passkey, operator });
}

export async function loginOptions(deps: CeremonyDeps): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const now = deps.now();
  const options = await generateAuthenticationOptions({ rpID: deps.origin.rpId, userVerification: 'required' });
  await deps.ledger.putNonce(
    { nonce: options.challenge, purpose: 'login', subject: '', expires_at: now + CEREMONY_TTL_S },
    now,
  );
  return options;
}

export async function login(
  deps: CeremonyDeps,
  response: AuthenticationResponseJSON,
): Promise<Outcome<SignedInOperator>> {
  const now = deps.now();
  const result = await verifyAssertion(
    deps,
    response,
    async (c) => (await deps.ledger.takeNonce(c, 'login', now)) !== null,
  );
  if (!result.ok) return result;
  return done({
    name: result.value.operator.name,
    role: result.value.operator.role,
    credential: result.value.passkey.credential_id,
  });
}

// ------------------------------------------------------------------ a signed-in operator's own assertions

/** Assertion options over `challenge` for the signed-in operator's own passkeys. */
async function ownAssertionOptions(
  deps: CeremonyDeps,
  who: SignedInOperator,
  challenge: Uint8Array<ArrayBuffer>,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const passkeys = await deps.ledger.listPasskeys(who.name);
  return generateAuthenticationOptions({
    rpID: deps.origin.rpId,
    // A Uint8Array: a string would be UTF-8 encoded again and no longer be the value bound here.
    challenge,
    allowCredentials: passkeys.map((p) => ({ id: p.credential_id, transports: transports(p) })),
    userVerification: 'required',
  });
}

/** An assertion over `expected` (base64url) made with one of the signed-in operator's own passkeys. */
async function verifyOwnAssertion(
  deps: CeremonyDeps,
  who: SignedInOperator,
  response: AuthenticationResponseJSON,
  expected: string,
): Promise<Outcome<{ passkey: PasskeyRecord; operator: OperatorConfig }>> {
  const result = await verifyAssertion(deps, response, (c) => Promise.resolve(c === expected));
  if (result.ok && result.value.operator.name !== who.name)
    return refused(403, 'the passkey that answered belongs to another operator than the one logged in');
  return result;
}

// ------------------------------------------------------------------ decisions

const decideSubject = (approvalId: string, decision: Decision, operator: string) =>
  `${approvalId}:${decision}:${operator}`;

function openApproval(a: ApprovalRecord | null, id: string, now: number): Outcome<ApprovalRecord> {
  if (!a) return refused(404, `no approval request with id ${id}`);
  if (a.status !== 'pending') return refused(409, `approval ${a.id} is ${a.status}; it can no longer be decided`);
  if (a.expires_at < now) return refused(409, `approval ${a.id} has expired`);
  return done(a);
}

/**
 * The options of a decision's assertion: a fresh nonce, and a challenge derived from it, the decision and the
 * approval's figures as they stand now (which the page shows back).
 */
export async function decisionOptions(
  deps: CeremonyDeps,
  who: SignedInOperator,
  approvalId: string,
  decision: Decision,
): Promise<
  Outcome<{ nonce: string; options: PublicKeyCredentialRequestOptionsJSON; figures: Record<string, unknown> }>
> {
  const now = deps.now();
  const open = openApproval(await deps.ledger.getApproval(approvalId), approvalId, now);
  if (!open.ok) return open;
  const approval = open.value;
  const nonce = randomBytes(24).toString('base64url');
  await deps.ledger.putNonce(
    {
      nonce,
      purpose: 'decide',
      subject: decideSubject(approval.id, decision, who.name),
      expires_at: Math.min(now + CEREMONY_TTL_S, approval.expires_at),
    },
    now,
  );
  const options = await ownAssertionOptions(deps, who, decisionChallenge(approval, decision, nonce));
  return done({ nonce, options, figures: shownFigures(approval) });
}

/**
 * Decides with an assertion: the nonce must be the one handed out for this approval, decision and operator, unused;
 * the assertion must come from one of the operator's own passkeys and sign the challenge derived from that nonce and
 * the approval as it stands now. Then the decision is recorded with the operator and the credential.
 */
export async function decideWithPasskey(
  deps: CeremonyDeps,
  who: SignedInOperator,
  input: { approvalId: string; decision: Decision; nonce: string; response: AuthenticationResponseJSON },
  record: (d: {
    approvalId: string;
    decision: Decision;
    operator: string;
    ts: number;
    credentialId: string;
  }) => Promise<ApprovalRecord>,
): Promise<Outcome<ApprovalRecord>> {
  const now = deps.now();
  const taken = await deps.ledger.takeNonce(input.nonce, 'decide', now);
  const approval = await deps.ledger.getApproval(input.approvalId);
  if (!taken || !approval || taken.subject !== decideSubject(approval.id, input.decision, who.name))
    return refused(
      403,
      'this decision is not the one asked for: its nonce is used already, expired, or was given for another approval, decision or operator; ask again',
    );
  const open = openApproval(approval, input.approvalId, now);
  if (!open.ok) return open;
  const expected = challengeText(decisionChallenge(open.value, input.decision, input.nonce));
  const result = await verifyOwnAssertion(deps, who, input.response, expected);
  if (!result.ok) return result;
  let decided: ApprovalRecord;
  try {
    decided = await record({
      approvalId: open.value.id,
      decision: input.decision,
      operator: who.name,
      ts: now,
      credentialId: result.value.passkey.credential_id,
    });
  } catch (e) {
    // Not one of the key's approvers: the ledger refuses the vote and names who may cast one.
    if (isSignerError(e) && e.code === 'request_invalid') return refused(403, e.message);
    throw e;
  }
  // Counted: the request is decided, or still pending with this vote among those its quorum waits for.
  const counted = decided.votes.some(
    (v) => v.operator === who.name && v.decision === input.decision && v.not_counted === undefined,
  );
  if (decided.status !== input.decision && !(decided.status === 'pending' && counted))
    return refused(409, `approval ${decided.id} is ${decided.status}; it can no longer be ${input.decision}`);
  return done(decided);
}

// ------------------------------------------------------------------ resumes

const resumeSubject = (key: string, operator: string) => `${key}:${operator}`;

/** The options of a resume's assertion: a fresh nonce and the challenge over the key, the operator and the nonce. */
export async function resumeOptions(
  deps: CeremonyDeps,
  who: SignedInOperator,
  key: string,
): Promise<Outcome<{ nonce: string; options: PublicKeyCredentialRequestOptionsJSON }>> {
  const now = deps.now();
  const nonce = randomBytes(24).toString('base64url');
  await deps.ledger.putNonce(
    { nonce, purpose: 'resume', subject: resumeSubject(key, who.name), expires_at: now + CEREMONY_TTL_S },
    now,
  );
  return done({ nonce, options: await ownAssertionOptions(deps, who, resumeChallenge(key, who.name, nonce)) });
}

/**
 * Lifts a key's halt with an assertion: the nonce must be the one handed out for this key and operator, unused, and
 * the assertion must come from one of the operator's own passkeys and sign the challenge derived from it.
 */
export async function resumeWithPasskey(
  deps: CeremonyDeps,
  who: SignedInOperator,
  input: { key: string; nonce: string; response: AuthenticationResponseJSON },
  lift: (credentialId: string) => Promise<boolean>,
): Promise<Outcome<{ key: string; resumed: boolean }>> {
  const now = deps.now();
  const taken = await deps.ledger.takeNonce(input.nonce, 'resume', now);
  if (!taken || taken.subject !== resumeSubject(input.key, who.name))
    return refused(
      403,
      'this resume is not the one asked for: its nonce is used already, expired, or was given for another key or operator; ask again',
    );
  const expected = challengeText(resumeChallenge(input.key, who.name, input.nonce));
  const result = await verifyOwnAssertion(deps, who, input.response, expected);
  if (!result.ok) return result;
  return done({ key: input.key, resumed: await lift(result.value.passkey.credential_id) });
}
