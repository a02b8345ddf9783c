/**
 * Passphrases and PINs come from a file (a mounted secret) or an environment variable that the config names,
 * never from the config itself. Errors name where the secret was looked for, never what it holds.
 */
import fs from 'node:fs';
import type { SecretRef } from '../config/types';
import { SignerError } from '../util/errors';

/** Where the secret is looked for, for messages: `file /run/secrets/pin` or `environment variable HSM_PIN`. */
export function describeSecret(ref: SecretRef): string {
  return 'file' in ref ? `file ${ref.file}` : `environment variable ${ref.env}`;
}

/** The secret, with one trailing newline removed (what `echo` and most secret mounts add). */
export function readSecret(ref: SecretRef, what: string, env: NodeJS.ProcessEnv = process.env): string {
  let value: string | undefined;
  if ('file' in ref) {
    try {
      value = fs.readFileSync(ref.file, 'utf8');
    } catch (e) {
      throw new SignerError(
        'key_store',
        `the ${what} cannot be read from ${describeSecret(ref)}: ${(e as NodeJS.ErrnoException).code ?? 'unreadable'}`,
      );
    }
  } else value = env[ref.env];
  value = value?.replace(/\r?\n$/, '');
  if (value === undefined || value.length === 0)
    throw new SignerError('key_store', `the ${what} is empty or not set (${describeSecret(ref)})`);
  return value;
}
