/**
 * What the ledger keeps for the operator console, so every replica knows it: operators' passkeys, one-time
 * enrollment links (only their hash), single-use nonces of the WebAuthn ceremonies, and the console's settings (the
 * session secret when no file gives one). Times are unix seconds, like the rest of the ledger.
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
   * is unknown, used already, or expired at `now`.
   */
  completeEnrollment(tokenHash: string, now: number, passkey: PasskeyRecord): Promise<boolean>;
  /** Passkeys by operator then creation; only one operator's when named. */
  listPasskeys(operator?: string): Promise<PasskeyRecord[]>;
  getPasskey(credentialId: string): Promise<PasskeyRecord | null>;
  /** After a verified assertion: the authenticator's new counter and when it was used. */
  touchPasskey(credentialId: string, counter: number, ts: number): Promise<void>;
  /** Deletes the operator's passkeys and unused enrollment links; resolves to the number of passkeys removed. */
  revokeOperator(operator: string): Promise<number>;
  /** Stores a ceremony's nonce (and drops nonces that expired before `now`). */
  putNonce(rec: NonceRecord, now: number): Promise<void>;
  /** Takes a nonce once: the record, deleted in the same statement, or null if unknown, taken already or expired. */
  takeNonce(nonce: string, purpose: NoncePurpose, now: number): Promise<NonceRecord | null>;
  /** The setting's value; when it has none yet, `proposed` is stored and returned (the first writer wins). */
  settingOrInit(name: string, proposed: string): Promise<string>;
}
