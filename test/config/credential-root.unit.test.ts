/**
 * The credentials' root key as a `biscuit_root` key (docs/credentials.md, "The root key"): the loader takes it out
 * of the signing keys and hands it to serve.credentials, and refuses, with a `config_invalid` naming the setting,
 * every way of giving it transaction powers (a signing setting, a token's or a credential's keys, a signing key's
 * pubkey), an HSM store (the library signs in process), and a root_key that names no such key.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { generateKeypairBytes } from '../../src/keys/keypair';
import { encodeBase58 } from '../../src/util/base58';
import { isSignerError } from '../../src/util/errors';

const pubkey = (): string => encodeBase58(generateKeypairBytes().subarray(32));
const PLAY = pubkey();
const ROOT = pubkey();
const SHA = 'a'.repeat(64);
const RID = 'b'.repeat(128);

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cfg-root-'));
  fs.writeFileSync(path.join(dir, 'pass'), 'x\n', { mode: 0o600 });
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A config with a session key `play`, a root key `credroot` (its entry `root`) and the serve section given. */
function config(root: string, serve: string): string {
  return `
key_stores:
  encrypted:
    passphrase_file: pass
keys:
  play:
    class: session
    pubkey: ${PLAY}
  credroot:
${root}
serve:
${serve}
`;
}

const ROOT_ENTRY = `    class: biscuit_root
    store: encrypted
    pubkey: ${ROOT}`;
const SERVE = `  credentials:
    root_key: credroot
    issued:
      - { name: planner, revocation_id: ${RID}, keys: [play] }`;

function load(yaml: string) {
  const file = path.join(dir, 'c.yaml');
  fs.writeFileSync(file, yaml);
  return loadConfig({ file, env: {}, forServe: true });
}

function refusal(yaml: string): string {
  try {
    load(yaml);
  } catch (e) {
    if (isSignerError(e) && e.code === 'config_invalid') return e.message;
    throw e;
  }
  throw new Error('the config loaded');
}

test('a biscuit_root key is the credentials root and is not among the signing keys', () => {
  const cfg = load(config(ROOT_ENTRY, SERVE));
  expect(cfg.keys.map((k) => k.name)).toEqual(['play']);
  expect(cfg.serve.credentials?.root_key).toEqual({ key: { name: 'credroot', store: 'encrypted', pubkey: ROOT } });
});

test('root_key_file keeps working beside the new setting', () => {
  const cfg = load(config(ROOT_ENTRY, SERVE.replace('root_key: credroot', 'root_key_file: root.key')));
  expect(cfg.serve.credentials?.root_key).toEqual({ file: path.join(dir, 'root.key') });
});

test.each([
  [
    'approval',
    `${ROOT_ENTRY}\n    approval: auto`,
    SERVE,
    /keys\.credroot\.approval: a biscuit_root key signs credentials only/,
  ],
  [
    'transfer_to',
    `${ROOT_ENTRY}\n    transfer_to: [${PLAY}]`,
    SERVE,
    /keys\.credroot\.transfer_to: .*never usable to sign/,
  ],
  ['sign_messages', `${ROOT_ENTRY}\n    sign_messages: true`, SERVE, /keys\.credroot\.sign_messages: /],
  ['daily cap', `${ROOT_ENTRY}\n    daily_lamport_cap: 5`, SERVE, /keys\.credroot\.daily_lamport_cap: /],
  [
    'a token listing it',
    ROOT_ENTRY,
    `  tokens:\n    - { name: agent, sha256: ${SHA}, keys: [play, credroot] }\n${SERVE}`,
    /serve\.tokens\[0\] \("agent"\)\.keys: "credroot" is a biscuit_root key, which signs credentials only/,
  ],
  [
    'an issued credential listing it',
    ROOT_ENTRY,
    SERVE.replace('keys: [play]', 'keys: [credroot]'),
    /serve\.credentials\.issued\[0\] \("planner"\)\.keys: "credroot" is a biscuit_root key/,
  ],
  [
    'the pubkey of a signing key',
    ROOT_ENTRY.replace(ROOT, PLAY),
    SERVE,
    /keys\.credroot\.pubkey: .* is also keys\.play, a signing key/,
  ],
  [
    'an HSM store',
    ROOT_ENTRY.replace('store: encrypted', 'store: pkcs11'),
    SERVE,
    /keys\.credroot\.store: a biscuit_root key cannot live in the HSM: the Biscuit library signs .* in this process .*use store: encrypted/,
  ],
  [
    'a root_key naming a session key',
    ROOT_ENTRY,
    SERVE.replace('root_key: credroot', 'root_key: play'),
    /keys\.play is a session key; the root must be a key of its own with class biscuit_root/,
  ],
  [
    'a root_key naming no key',
    ROOT_ENTRY,
    SERVE.replace('root_key: credroot', 'root_key: nokey'),
    /no biscuit_root key "nokey" under keys/,
  ],
  [
    'a root_key and a root_key_file',
    ROOT_ENTRY,
    SERVE.replace('root_key: credroot', 'root_key: credroot\n    root_key_file: root.key'),
    /serve\.credentials\.root_key: name a key store key or set root_key_file\/root_key_env, not both/,
  ],
])('refused: %s', (_what, root, serve, message) => {
  expect(refusal(config(root, serve))).toMatch(message);
});

test('an encrypted root key needs the passphrase settings, as an encrypted signing key does', () => {
  const yaml = config(ROOT_ENTRY, SERVE).replace('key_stores:\n  encrypted:\n    passphrase_file: pass\n', '');
  expect(refusal(yaml)).toMatch(/keys\.credroot\.store: an encrypted key needs key_stores\.encrypted\.passphrase_file/);
});
