/**
 * What the ledger keeps for the operator console, so every replica knows it: operators' passkeys, one-time
 * enrollment links (only their hash), single-use nonces of the WebAuthn ceremonies, the console's sessions (only the
 * hash of their id), revocations, and the console's settings (the session secret when no file gives one). Times are
 * unix seconds, like the rest of the ledger.
 */

/** A registered passkey (WebAuthn credential) of an operator. Nothing here is secret: the private key stays on the device. */
export interface PasskeyRecord {
  /** The credential id, base64url, as the authenticator reports it. */
  credential_id: string;
  operator: string;
  /** The COSE public key, base64url. */
  public_key: string;
  /** The signature counter last seen (0 for authenticators that keep none). */
  counter: number;
  /** How the browser may reach the authenticator (`internal`, `usb`, `hybrid`, …), for the next ceremony's hints. */
  transports: string[];
  created_at: number;
  last_used_at: number | null;
}

/** A one-time enrollment link: only the sha256 of its token is kept. */
export interface EnrollmentRecord {
  token_hash: string;
  operator: string;
  created_at: number;
  expires_at: number;
  /** When the link registered a passkey; a used link opens nothing. */
  used_at: number | null;
}

/**
 * What a ceremony's nonce stands for: `register` (an enrollment: subject is the link's token hash), `login` (subject
 * empty: any operator's passkey may answer) or `decide` (subject names the approval, the decision and the operator).
 */
export type NoncePurpose = 'register' | 'login' | 'decide' | 'resume';

/**
 * An operator's revocations (`operator revoke`): the last one, and the enrollment that reinstated the operator after
 * it. Revoked now while `revoked_at` is set and `reinstated_at` is not; a vote cast at or before `revoked_at` never
 * counts, reinstated or not (ledger/records.ts).
 */
export interface OperatorStanding {
  operator: string;
  revoked_at: number | null;
  reinstated_at: number | null;
}

/**
 * A console login, live while its row is here and until `expires_at`: logging out deletes it, revoking the operator
 * deletes all of theirs. The cookie carries the id; the ledger keeps only its sha256, so the ledger alone opens none.
 */
export interface SessionRecord {
  id_hash: string;
  operator: string;
  /** The passkey the login was made with. */
  credential: string;
  created_at: number;
  expires_at: number;
}

/** What a revocation removed. */
export interface Revocation {
  passkeys: number;
  sessions: number;
}

export interface NonceRecord {
  nonce: string;
  purpose: NoncePurpose;
  subject: string;
  expires_at: number;
}

export interface OperatorStore {
  /** Records a new enrollment link (its token hash). */
  createEnrollment(rec: Omit<EnrollmentRecord, 'used_at'>): Promise<void>;
  getEnrollment(tokenHash: string): Promise<EnrollmentRecord | null>;
  /**
   * Uses the link and stores the passkey it registered, in one transaction: false (and nothing stored) when the link
   * is unknown, used already, or expired at `now`. A revoked operator is reinstated at `now` (only a link made after
   * the revocation is left to complete: revoking deletes the open ones).
   */
  completeEnrollment(tokenHash: string, now: number, passkey: PasskeyRecord): Promise<boolean>;
  /** Passkeys by operator then creation; only one operator's when named. */
  listPasskeys(operator?: string): Promise<PasskeyRecord[]>;
  getPasskey(credentialId: string): Promise<PasskeyRecord | null>;
  /** After a verified assertion: the authenticator's new counter and when it was used. */
  touchPasskey(credentialId: string, counter: number, ts: number): Promise<void>;
  /**
   * Revokes the operator at `ts`, in one transaction: deletes their passkeys, unused enrollment links and console
   * sessions, and records the revocation, so their votes stop counting (until an enrollment reinstates them, and
   * then only votes cast after `ts`).
   */
  revokeOperator(operator: string, ts: number): Promise<Revocation>;
  /** Every operator ever revoked, by name. */
  operatorStandings(): Promise<OperatorStanding[]>;
  /** Records a console login (and drops sessions that expired before `now`). */
  openSession(rec: SessionRecord, now: number): Promise<void>;
  /** The login, or null when it was ended (logout, revocation) or expired at `now`. */
  getSession(idHash: string, now: number): Promise<SessionRecord | null>;
  /** Ends one login (logout); ending one that is gone already is not an error. */
  endSession(idHash: string): Promise<void>;
  /** Ends every login of the operator; resolves to how many there were. */
  endSessionsOf(operator: string): Promise<number>;
  /** Stores a ceremony's nonce (and drops nonces that expired before `now`). */
  putNonce(rec: NonceRecord, now: number): Promise<void>;
  /** Takes a nonce once: the record, deleted in the same statement, or null if unknown, taken already or expired. */
  takeNonce(nonce: string, purpose: NoncePurpose, now: number): Promise<NonceRecord | null>;
  /** The setting's value; when it has none yet, `proposed` is stored and returned (the first writer wins). */
  settingOrInit(name: string, proposed: string): Promise<string>;
}
