/**
 * The credentials' root key kept in the age keystore (a `biscuit_root` key), end to end with the built CLI and
 * service: `key new --class biscuit_root --store encrypted` seals it in a real age file, `token new --biscuit` opens
 * it with the store's passphrase to issue a root the service accepts (the service itself never opening the root),
 * narrowing needs no passphrase (the config states the public key), a wrong passphrase stops issuing without
 * showing the key, and no agent can sign with the root key: it is not among the signer's keys.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { openSealedKeypair } from '../../src/keys/age-file';
import { decodeAddress } from '../../src/util/base58';
import { stopChild, killOnExit } from '../support/children';
import { assertBuilt, BIN, listeningAddress, run, spawnBin, writeYaml } from '../support/cli';
import { payload, transferInstruction } from '../support/payloads';
import { makeWorld, worldConfigDocument, type World } from '../support/world';
import { callWithBearer } from '../support/bearer-calls';

const PASSPHRASE = 'correct horse battery staple'; // what makeWorld writes for an encrypted world

let w: World;
let configFile: string;
let service: ChildProcess | null = null;
let address: string;
let rootPubkey: string;
let ageFile: string;
let credential: string;
const issued: { name: string; revocation_id: string; keys: string[] }[] = [];

function document(withRoot: boolean): Record<string, unknown> {
  const doc = worldConfigDocument(w, {
    serve: {
      listen: '127.0.0.1:0',
      metrics: null,
      ...(withRoot ? { credentials: { root_key: 'credroot', issued } } : {}),
    },
  });
  if (withRoot)
    (doc.keys as Record<string, unknown>).credroot = { class: 'biscuit_root', store: 'encrypted', pubkey: rootPubkey };
  return doc;
}

async function cli(args: string[], file = configFile) {
  return run(BIN.signer, ['--config', file, ...args]);
}

const call = (bearer: string, name: string, args: Record<string, unknown>) =>
  callWithBearer(address, bearer, name, args);

const structured = (r: { json: Record<string, unknown> }) =>
  (r.json.result as { structuredContent: Record<string, unknown> }).structuredContent;

beforeAll(async () => {
  assertBuilt(BIN.serve, BIN.signer);
  w = await makeWorld({ store: 'encrypted', keys: { alpha: {} } });
  configFile = path.join(w.dir, 'root-store.yaml');
  writeYaml(configFile, document(false));

  const made = await cli(['key', 'new', 'credroot', '--class', 'biscuit_root', '--store', 'encrypted']);
  expect(made.code).toBe(0);
  rootPubkey = made.stdout.trim();
  expect(made.stderr).toContain('class: biscuit_root');
  expect(made.stderr).toContain('root_key: credroot');
  ageFile = path.join(w.config.key_stores!.encrypted.dir, 'credroot.age');
  writeYaml(configFile, document(true));

  const issuing = await cli([
    'token',
    'new',
    'planner',
    '--biscuit',
    '--keys',
    'alpha',
    '--out',
    path.join(w.dir, 'planner.cred'),
  ]);
  expect(issuing.code).toBe(0);
  const id = issuing.stdout.trim();
  expect(id).toMatch(/^[0-9a-f]{128}$/);
  // The root public key it prints is the key store key's own public key.
  const hex = Buffer.from(decodeAddress(rootPubkey)!).toString('hex');
  expect(issuing.stderr).toContain(`Root public key (agents narrowing this credential need it): ed25519/${hex}`);
  // Issuing with a key from the store creates no plaintext root key file.
  expect(issuing.stderr).not.toContain('created the credentials root key');
  credential = fs.readFileSync(path.join(w.dir, 'planner.cred'), 'utf8').trim();
  issued.push({ name: 'planner', revocation_id: id, keys: ['alpha'] });
  writeYaml(configFile, document(true));

  service = spawnBin(BIN.serve, ['--config', configFile]);
  killOnExit(service);
  address = await listeningAddress(service, 60_000);
}, 120_000);

afterAll(async () => {
  if (service) await stopChild(service, 'SIGTERM');
  await w.close();
});

test('the root key is sealed in a real age file that opens with the passphrase, and its seed is written nowhere else', async () => {
  const data = fs.readFileSync(ageFile);
  expect(data.subarray(0, 22).toString('latin1')).toBe('age-encryption.org/v1\n');
  expect(fs.statSync(ageFile).mode & 0o777).toBe(0o600);
  const keypair = await openSealedKeypair(data, PASSPHRASE, ageFile);
  const seedHex = Buffer.from(keypair.subarray(0, 32)).toString('hex');
  for (const f of fs.readdirSync(w.dir, { recursive: true, encoding: 'utf8' })) {
    const file = path.join(w.dir, f);
    if (fs.statSync(file).isFile()) expect(fs.readFileSync(file).toString('latin1')).not.toContain(seedHex);
  }
});

test('a root issued with the age-stored key is accepted by the service, and narrows without the passphrase', async () => {
  const checked = await call(credential, 'check', { payload: w.transfer('alpha', 1_000_000), key: 'alpha' });
  expect(checked.status).toBe(200);
  expect(structured(checked)).toMatchObject({ outcome: 'ok' });
  // Narrowing reads only the public key the config states: it works with the passphrase file gone.
  const noPass = path.join(w.dir, 'no-pass.yaml');
  const doc = document(true);
  (doc.key_stores as { encrypted: Record<string, unknown> }).encrypted.passphrase_file = path.join(w.dir, 'absent');
  writeYaml(noPass, doc);
  const child = path.join(w.dir, 'child.cred');
  const narrowed = await cli(
    ['token', 'narrow', '--from', path.join(w.dir, 'planner.cred'), '--tools', 'check', '--out', child],
    noPass,
  );
  expect(narrowed.code).toBe(0);
  const childChecked = await call(fs.readFileSync(child, 'utf8').trim(), 'check', {
    payload: w.transfer('alpha', 1_000_000),
    key: 'alpha',
  });
  expect(structured(childChecked)).toMatchObject({ outcome: 'ok' });
});

test('no agent can sign with the root key: it is not among the keys, by name or as fee payer', async () => {
  const shown = await call(credential, 'key_show', {});
  expect((structured(shown).keys as { name: string }[]).map((k) => k.name)).toEqual(['alpha']);
  expect(shown.text).not.toContain(rootPubkey);
  // A transaction the root key would pay for, named by no key: the signer has no key for its fee payer.
  const asRoot = payload(rootPubkey, [transferInstruction(rootPubkey, w.keys.alpha!.pubkey, 1_000)], {
    summary: 'pay from the root key',
  });
  const signed = await call(credential, 'sign', { payload: asRoot, mode: 'sign_only' });
  expect(structured(signed)).toMatchObject({
    outcome: 'refused',
    reason: 'no_key_for_fee_payer',
    signed_transaction: null,
  });
  // Naming it (as an x402 payment's signing key would be named) is refused before the engine: no credential has it.
  const named = await call(credential, 'sign', { payload: asRoot, key: 'credroot', mode: 'sign_only' });
  expect(named.status).toBe(401);
  expect(named.json).toMatchObject({ code: 'credential_refused', reason: 'check', block: 0 });
  // The operator's CLI does not know it as a key either.
  const show = await cli(['key', 'show', 'credroot']);
  expect(show.code).not.toBe(0);
  expect(show.stderr).toMatch(/no key "credroot"/);
});

test("a wrong passphrase stops issuing with the store's message, and the key never shows", async () => {
  const wrong = path.join(w.dir, 'wrong-pass');
  fs.writeFileSync(wrong, 'not the passphrase\n', { mode: 0o600 });
  const file = path.join(w.dir, 'wrong.yaml');
  const doc = document(true);
  (doc.key_stores as { encrypted: Record<string, unknown> }).encrypted.passphrase_file = wrong;
  writeYaml(file, doc);
  const r = await cli(
    ['token', 'new', 'other', '--biscuit', '--keys', 'alpha', '--out', path.join(w.dir, 'other.cred')],
    file,
  );
  expect(r.code).not.toBe(0);
  expect(r.stderr).toMatch(/the passphrase does not open the encrypted key file of "credroot"/);
  expect(r.stderr).not.toContain('ed25519-private/');
  expect(fs.existsSync(path.join(w.dir, 'other.cred'))).toBe(false);
});

test('the CLI will not make a root key in the HSM, saying why', async () => {
  const r = await cli(['key', 'new', 'hsmroot', '--class', 'biscuit_root', '--store', 'pkcs11']);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toMatch(
    /a biscuit_root key cannot live in the HSM: the Biscuit library signs in this process with the private key itself; use --store encrypted/,
  );
});
