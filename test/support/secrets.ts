/**
 * Every encoding in which a secret could leak: a key file's 64 bytes or its 32-byte seed as base58,
 * base64 (standard and url-safe), hex, and the JSON byte-array form of a Solana keypair file; a token as is.
 */
import fs from 'node:fs';
import path from 'node:path';
import { encodeBase58 } from '../../src/util/base58';

export function secretForms(secret: Uint8Array): string[] {
  const forms = new Set<string>();
  for (const bytes of [secret, secret.subarray(0, 32)]) {
    const buf = Buffer.from(bytes);
    forms.add(encodeBase58(bytes));
    forms.add(buf.toString('base64'));
    forms.add(buf.toString('base64url'));
    forms.add(buf.toString('hex'));
    forms.add(buf.toString('hex').toUpperCase());
    forms.add(JSON.stringify(Array.from(bytes)));
    forms.add(Array.from(bytes).join(', '));
  }
  // A leak may be cut short: the first 24 characters of each long form are enough to convict.
  return [...forms].map((f) => (f.length > 24 ? f.slice(0, 24) : f));
}

/** The secrets of every key file under a key directory. */
export function keyDirSecrets(keyDir: string): Uint8Array[] {
  return fs
    .readdirSync(keyDir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => Uint8Array.from(JSON.parse(fs.readFileSync(path.join(keyDir, f), 'utf8')) as number[]));
}

/** The leaks found in `haystack`: a description of each secret form present. */
export function findLeaks(haystack: string, secrets: { label: string; forms: string[] }[]): string[] {
  const leaks: string[] = [];
  for (const s of secrets)
    for (const form of s.forms) if (haystack.includes(form)) leaks.push(`${s.label} as ${JSON.stringify(form)}`);
  return leaks;
}
