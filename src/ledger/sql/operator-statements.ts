/**
 * The statements of the operator console's records (../operators.ts), written once for both stores like
 * statements.ts. Parameters are listed in each comment in order.
 */
const PASSKEY_COLUMNS = 'credential_id, operator, public_key, counter, transports, created_at, last_used_at';
const ENROLLMENT_COLUMNS = 'token_hash, operator, created_at, expires_at, used_at';
const NONCE_COLUMNS = 'nonce, purpose, subject, expires_at';
const SESSION_COLUMNS = 'id_hash, operator, credential, created_at, expires_at';
const STANDING_COLUMNS = 'operator, revoked_at, reinstated_at';

export const OPERATOR_SQL = {
  /** $1 token_hash, $2 operator, $3 created_at, $4 expires_at. */
  insertEnrollment: `INSERT INTO operator_enrollments (${ENROLLMENT_COLUMNS}) VALUES ($1, $2, $3, $4, NULL)`,
  /** $1 token_hash. */
  getEnrollment: `SELECT ${ENROLLMENT_COLUMNS} FROM operator_enrollments WHERE token_hash = $1`,
  /** $1 token_hash, $2 now: marks an unused, unexpired link used; returns it, or nothing. */
  useEnrollment: `UPDATE operator_enrollments SET used_at = $2
    WHERE token_hash = $1 AND used_at IS NULL AND expires_at >= $2 RETURNING ${ENROLLMENT_COLUMNS}`,
  /** PASSKEY_COLUMNS order. */
  insertPasskey: `INSERT INTO operator_passkeys (${PASSKEY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
  listPasskeys: `SELECT ${PASSKEY_COLUMNS} FROM operator_passkeys ORDER BY operator, created_at, credential_id`,
  /** $1 operator. */
  listPasskeysOf: `SELECT ${PASSKEY_COLUMNS} FROM operator_passkeys WHERE operator = $1 ORDER BY created_at, credential_id`,
  /** $1 credential_id. */
  getPasskey: `SELECT ${PASSKEY_COLUMNS} FROM operator_passkeys WHERE credential_id = $1`,
  /** $1 credential_id, $2 counter, $3 ts. */
  touchPasskey: 'UPDATE operator_passkeys SET counter = $2, last_used_at = $3 WHERE credential_id = $1',
  /** $1 operator; returns the removed credential ids. */
  deletePasskeysOf: 'DELETE FROM operator_passkeys WHERE operator = $1 RETURNING credential_id',
  /** $1 operator. */
  deleteOpenEnrollmentsOf: 'DELETE FROM operator_enrollments WHERE operator = $1 AND used_at IS NULL',
  /** $1 operator, $2 ts: revoked now, from ts on (a later revocation moves ts). */
  revoke: `INSERT INTO operator_standing (${STANDING_COLUMNS}) VALUES ($1, $2, NULL)
    ON CONFLICT (operator) DO UPDATE SET revoked_at = excluded.revoked_at, reinstated_at = NULL`,
  /** $1 operator, $2 ts: a revoked operator enrolled again. */
  reinstate: 'UPDATE operator_standing SET reinstated_at = $2 WHERE operator = $1 AND reinstated_at IS NULL',
  listStandings: `SELECT ${STANDING_COLUMNS} FROM operator_standing ORDER BY operator`,
  /** SESSION_COLUMNS order. */
  insertSession: `INSERT INTO operator_sessions (${SESSION_COLUMNS}) VALUES ($1, $2, $3, $4, $5)`,
  /** $1 now. */
  purgeSessions: 'DELETE FROM operator_sessions WHERE expires_at < $1',
  /** $1 id_hash, $2 now. */
  getSession: `SELECT ${SESSION_COLUMNS} FROM operator_sessions WHERE id_hash = $1 AND expires_at >= $2`,
  /** $1 id_hash. */
  endSession: 'DELETE FROM operator_sessions WHERE id_hash = $1',
  /** $1 operator; returns the ended sessions' hashes. */
  endSessionsOf: 'DELETE FROM operator_sessions WHERE operator = $1 RETURNING id_hash',
  /** NONCE_COLUMNS order. */
  insertNonce: `INSERT INTO operator_nonces (${NONCE_COLUMNS}) VALUES ($1, $2, $3, $4)`,
  /** $1 now. */
  purgeNonces: 'DELETE FROM operator_nonces WHERE expires_at < $1',
  /** $1 nonce, $2 purpose, $3 now: deletes it and returns it only while it is valid. */
  takeNonce: `DELETE FROM operator_nonces WHERE nonce = $1 AND purpose = $2 AND expires_at >= $3 RETURNING ${NONCE_COLUMNS}`,
  /** $1 name, $2 value: the first value stays. */
  initSetting: 'INSERT INTO operator_settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING',
  /** $1 name. */
  getSetting: 'SELECT value FROM operator_settings WHERE name = $1',
} as const;
