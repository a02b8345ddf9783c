/**
 * The secret that seals console session cookies, the same in every replica so a login holds whichever one answers:
 * read from `serve.operator.session_secret_file` (a mounted secret), or generated once and kept in the ledger, which
 * every replica shares. It never reaches a log or an error message.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type { Ledger } from '../ledger/types';
import { SignerError, errorMessage } from '../util/errors';

/** iron-session's own lower bound for its password. */
export const MIN_SECRET_LENGTH = 32;
const SETTING = 'console_session_secret';

export async function loadSessionSecret(file: string | null, ledger: () => Promise<Ledger>): Promise<string> {
  if (file !== null) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (e) {
      throw new SignerError(
        'config_invalid',
        `serve.operator.session_secret_file: cannot read ${file}: ${errorMessage(e)}`,
      );
    }
    if (text.length < MIN_SECRET_LENGTH)
      throw new SignerError(
        'config_invalid',
        `serve.operator.session_secret_file: ${file} must hold at least ${String(MIN_SECRET_LENGTH)} characters (e.g. \`openssl rand -base64 32\`)`,
      );
    return text;
  }
  return (await ledger()).settingOrInit(SETTING, randomBytes(32).toString('base64url'));
}
