/**
 * How the loader refuses a config: one error, code `config_invalid`, whose message names the key. Also convict's
 * own messages rewritten to name the full key, and a collection entry validated strictly against its schema.
 */
import convict from 'convict';
import { SignerError } from '../util/errors';
import { isRecord } from '../util/is-record';
import type { Group, Infer } from './setting';

export function fail(message: string): never {
  throw new SignerError('config_invalid', message);
}

/** Rewrites convict's messages so each names the full key (`keys.alice.class: …`, `serve.foo: unknown key`). */
export function convictErrors(prefix: string, err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line) => {
      const undeclared = /^configuration param '(.+)' not declared in the schema$/.exec(line);
      if (undeclared) return `${prefix}${undeclared[1]}: unknown key (not in the schema)`;
      const missing = /^configuration param '(.+)' missing from config/.exec(line);
      if (missing) return `${prefix}${missing[1]}: must be a mapping`;
      return `${prefix}${line}`;
    })
    .join('; ');
}

/** A convict instance over one of our schemas (convict's own typing cannot read a derived type). */
export function convictFor<S extends Group>(schema: S, env: NodeJS.ProcessEnv): convict.Config<Infer<S>> {
  return convict<Infer<S>>(schema as unknown as convict.Schema<Infer<S>>, { env, args: [] });
}

/** Validates one collection entry strictly against its schema; returns the entry with defaults filled in. */
export function validateEntry<S extends Group>(schema: S, value: unknown, where: string): Infer<S> {
  if (!isRecord(value)) fail(`${where}: must be a mapping`);
  const c = convictFor(schema, {});
  try {
    c.load(value);
    c.validate({ allowed: 'strict' });
  } catch (e) {
    fail(convictErrors(`${where}.`, e));
  }
  return c.getProperties();
}
