/**
 * A real SoftHSM2 token for a test, in the run's temporary token directory (softhsm-global.ts). `remove` takes the
 * token away while the signer runs by moving its directory out of the token directory (what a module sees when a
 * device is unplugged: its objects and slot are gone); `restore` moves it back.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Pkcs11StoreConfig, SecretRef } from '../../src/config/types';

export const SOFTHSM_MODULE = '/usr/lib/softhsm/libsofthsm2.so';

export interface SoftHsmToken {
  label: string;
  pin: string;
  /** The token's own directory inside the token directory. */
  dir: string;
  settings(pin: SecretRef): Pkcs11StoreConfig;
  /** "Token removed": its directory moved out of the token directory. */
  remove(): void;
  restore(): void;
}

function tokenDir(): string {
  const conf = process.env.SOFTHSM2_CONF;
  if (!conf) throw new Error('SOFTHSM2_CONF is not set: jest.config.js sets it in test/support/softhsm-setup.ts');
  const line = fs
    .readFileSync(conf, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('directories.tokendir'));
  return (line ?? '').split('=')[1]?.trim() ?? '';
}

export function makeSoftHsmToken(): SoftHsmToken {
  const root = tokenDir();
  const label = `t-${crypto.randomBytes(6).toString('hex')}`;
  const pin = crypto.randomBytes(8).toString('hex');
  const before = new Set(fs.readdirSync(root));
  execFileSync(
    'softhsm2-util',
    ['--init-token', '--free', '--label', label, '--pin', pin, '--so-pin', crypto.randomBytes(8).toString('hex')],
    { env: process.env, stdio: 'pipe' },
  );
  // Other test files may make tokens at the same moment: ours is the new directory whose token object has our label.
  const made = fs
    .readdirSync(root)
    .filter((d) => !before.has(d))
    .find((d) => fs.readFileSync(path.join(root, d, 'token.object')).includes(Buffer.from(label)));
  if (made === undefined) throw new Error(`softhsm2-util made no token directory labelled ${label}`);
  const dir = path.join(root, made);
  // Outside the token directory: SoftHSM2 takes every directory in it for a token.
  const away = path.join(root, '..', `${made}.removed`);
  return {
    label,
    pin,
    dir,
    settings: (pinRef) => ({ module: SOFTHSM_MODULE, token_label: label, pin: pinRef, sessions: 4, reconnect_ms: 50 }),
    remove: () => fs.renameSync(dir, away),
    restore: () => fs.renameSync(away, dir),
  };
}
