/**
 * Each hook's signing secret, read by the service at start from its file (a mounted secret) in the Standard Webhooks
 * form `whsec_<base64>`. A file that is missing, unreadable or malformed refuses the start with a message naming the
 * hook (its id, never its URL), the file and why; the secret itself appears in no message. The Standard Webhooks
 * library is loaded only for a hook that has a secret: a service without hooks never loads it.
 */
import fs from 'node:fs';
import type { Webhook } from 'standardwebhooks';
import type { NotifyHook } from '../config/types';
import { SignerError } from '../util/errors';

const PREFIX = 'whsec_';
/** The Standard Webhooks specification asks for secrets of 24 to 64 random bytes. */
const MIN_BYTES = 24;
const MAX_BYTES = 64;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The signer of each hook by id; null for a hook without a secret (a `slack` hook may have none). */
export type HookSigners = ReadonlyMap<string, Webhook | null>;

export function readHookSecrets(hooks: readonly NotifyHook[]): HookSigners {
  const out = new Map<string, Webhook | null>();
  hooks.forEach((hook, i) => {
    if (hook.secret_file === null) {
      out.set(hook.id, null);
      return;
    }
    const where = `notify[${i}] (${hook.id}): secret_file ${hook.secret_file}`;
    let text: string;
    try {
      text = fs.readFileSync(hook.secret_file, 'utf8').trim();
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const why =
        code === 'ENOENT'
          ? 'does not exist'
          : code === 'EACCES'
            ? 'cannot be read (permission denied)'
            : `cannot be read (${code ?? 'error'})`;
      throw new SignerError('config_invalid', `${where} ${why}; mount the hook's whsec_… secret there`);
    }
    const body = text.startsWith(PREFIX) ? text.slice(PREFIX.length) : null;
    if (body === null || !BASE64.test(body) || body.length % 4 !== 0)
      throw new SignerError(
        'config_invalid',
        `${where} is not a Standard Webhooks secret: it must be whsec_ followed by base64 (e.g. whsec_$(openssl rand -base64 32))`,
      );
    const bytes = Buffer.from(body, 'base64').length;
    if (bytes < MIN_BYTES || bytes > MAX_BYTES)
      throw new SignerError(
        'config_invalid',
        `${where}: the secret decodes to ${bytes} bytes; use ${MIN_BYTES} to ${MAX_BYTES} random bytes (whsec_$(openssl rand -base64 32))`,
      );
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when a hook has a secret (see above)
    const { Webhook: Signer } = require('standardwebhooks') as typeof import('standardwebhooks');
    out.set(hook.id, new Signer(text));
  });
  return out;
}
