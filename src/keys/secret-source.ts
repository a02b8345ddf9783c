/**
 * Passphrases and PINs come from a file (a mounted secret) or an environment variable that the config names,
 * never from the config itself. Errors name where the secret was looked for, never what it holds.
 *
 * A variable is read once: its value is kept here and the variable is removed from the environment, so neither a
 * process the signer starts nor a look at /proc/PID/environ finds it, and a later open (a key a reload adds, a
 * token reconnecting) still has the secret. A file is read each time: a mounted secret may be replaced.
 */
import fs from 'node:fs';
import type { SecretRef } from '../config/types';
import { SignerError } from '../util/errors';
import { forgetEnvVariable } from '../util/forget-env';

/** One trailing newline removed (what `echo` and most secret mounts add). */
const withoutNewline = (v: string): string => v.replace(/\r?\n$/, '');

/** Secrets taken from an environment (by variable name): kept per environment object, for the process's life. */
const taken = new WeakMap<NodeJS.ProcessEnv, Map<string, string>>();

/**
 * The variable's value, kept and removed from `env` on the first read; undefined when it is not set (or empty),
 * which leaves nothing to remove.
 */
function takeFromEnv(env: NodeJS.ProcessEnv, name: string): string | undefined {
  let kept = taken.get(env);
  const known = kept?.get(name);
  if (known !== undefined) return known;
  const raw = env[name];
  const value = raw === undefined ? undefined : withoutNewline(raw);
  if (value === undefined || value.length === 0) return undefined;
  if (!kept) taken.set(env, (kept = new Map<string, string>()));
  kept.set(name, value);
  forgetEnvVariable(env, name);
  return value;
}

/**
 * Takes the secret out of the environment now when it comes from a variable that is set: the service calls it at
 * start for every configured one, so a variable is gone even before (or without) a key that needs it.
 */
export function takeSecretFromEnv(ref: SecretRef | null, env: NodeJS.ProcessEnv = process.env): void {
  if (ref !== null && 'env' in ref) takeFromEnv(env, ref.env);
}

/** Where the secret is looked for, for messages: `file /run/secrets/pin` or `environment variable HSM_PIN`. */
export function describeSecret(ref: SecretRef): string {
  return 'file' in ref ? `file ${ref.file}` : `environment variable ${ref.env}`;
}

/** The secret, with one trailing newline removed. */
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
    value = withoutNewline(value);
  } else value = takeFromEnv(env, ref.env);
  if (value === undefined || value.length === 0)
    throw new SignerError('key_store', `the ${what} is empty or not set (${describeSecret(ref)})`);
  return value;
}
