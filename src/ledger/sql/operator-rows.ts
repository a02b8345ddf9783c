/** Rows of the operator console's tables to records and back (numbers through Number(), as in rows.ts). */
import type {
  EnrollmentRecord,
  NoncePurpose,
  NonceRecord,
  OperatorStanding,
  PasskeyRecord,
  SessionRecord,
} from '../operators';
import type { Row } from './rows';

const text = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function transportsOf(v: unknown): string[] {
  try {
    const t: unknown = JSON.parse(text(v));
    return Array.isArray(t) ? t.map((x) => text(x)) : [];
  } catch {
    return [];
  }
}

export function rowToPasskey(r: Row): PasskeyRecord {
  return {
    credential_id: text(r.credential_id),
    operator: text(r.operator),
    public_key: text(r.public_key),
    counter: Number(r.counter),
    transports: transportsOf(r.transports),
    created_at: Number(r.created_at),
    last_used_at: numOrNull(r.last_used_at),
  };
}

export function passkeyRowValues(p: PasskeyRecord): unknown[] {
  return [
    p.credential_id,
    p.operator,
    p.public_key,
    p.counter,
    JSON.stringify(p.transports),
    p.created_at,
    p.last_used_at,
  ];
}

export function rowToEnrollment(r: Row): EnrollmentRecord {
  return {
    token_hash: text(r.token_hash),
    operator: text(r.operator),
    created_at: Number(r.created_at),
    expires_at: Number(r.expires_at),
    used_at: numOrNull(r.used_at),
  };
}

/** A setting's value as stored. */
export const settingValue = (r: Row | undefined): string | null => (r === undefined ? null : text(r.value));

export function rowToNonce(r: Row): NonceRecord {
  return {
    nonce: text(r.nonce),
    purpose: text(r.purpose) as NoncePurpose, // written only from NoncePurpose
    subject: text(r.subject),
    expires_at: Number(r.expires_at),
  };
}

export function nonceRowValues(n: NonceRecord): unknown[] {
  return [n.nonce, n.purpose, n.subject, n.expires_at];
}

export function rowToStanding(r: Row): OperatorStanding {
  return { operator: text(r.operator), revoked_at: numOrNull(r.revoked_at), reinstated_at: numOrNull(r.reinstated_at) };
}

export function rowToSession(r: Row): SessionRecord {
  return {
    id_hash: text(r.id_hash),
    operator: text(r.operator),
    credential: text(r.credential),
    created_at: Number(r.created_at),
    expires_at: Number(r.expires_at),
  };
}

export function sessionRowValues(s: SessionRecord): unknown[] {
  return [s.id_hash, s.operator, s.credential, s.created_at, s.expires_at];
}
