/**
 * Identifiers the ledger hands out: approval ids an operator types on a terminal, and lock owner ids.
 */
import { randomBytes } from 'node:crypto';

/** Crockford's base32 alphabet, lowercase: no i, l, o, u, so an id read aloud or off a screen is unambiguous. */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
export const APPROVAL_ID_LENGTH = 8;

/** 8 characters, 40 random bits. */
export function newApprovalId(): string {
  const bytes = randomBytes(APPROVAL_ID_LENGTH);
  let id = '';
  for (const b of bytes) id += ALPHABET.charAt(b & 31);
  return id;
}

/** What an operator typed, normalised: case-insensitive, and the look-alikes i/l → 1, o → 0. */
export function normaliseApprovalId(typed: string): string {
  return typed.trim().toLowerCase().replace(/[il]/g, '1').replace(/o/g, '0');
}

export function newOwnerId(): string {
  return randomBytes(16).toString('hex');
}
