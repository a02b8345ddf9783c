/**
 * The pkcs11 store through the built CLI, on a real SoftHSM2 token: `key new` generates the key in the token,
 * `key import` moves a keypair file into it, `key show` opens the key as the service does and reports the
 * store's health, and `key destroy` removes the key's objects from the token after the usual confirmation.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { generateKeypairBytes } from '../../src/keys/keypair';
import { encodeBase58 } from '../../src/util/base58';
import { assertBuilt, BIN, run } from '../support/cli';
import { makeWorld, worldConfigDocument, type World } from '../support/world';

describe('pkcs11 keys through the CLI', () => {
  let w: World;
  let config: string;
  let outside: string;
  const cli = (args: string[], input?: string) => run(BIN.signer, ['--config', config, ...args], { input });

  beforeAll(async () => {
    assertBuilt(BIN.signer);
    w = await makeWorld({ store: 'pkcs11' });
    await w.engine.close(); // the CLI is the only user of the token here
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'import-from-'));
    config = path.join(w.dir, 'config.yaml');
    fs.writeFileSync(config, YAML.stringify(worldConfigDocument(w)));
  });
  afterAll(async () => {
    await w.localnet.close();
    fs.rmSync(w.dir, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  it('key new generates in the token; key import moves a keypair in and suggests deleting the file', async () => {
    const made = await cli(['key', 'new', 'fresh', '--class', 'session', '--store', 'pkcs11']);
    expect(made.code).toBe(0);
    expect(made.stderr).toContain(`store: pkcs11\n    pubkey: ${made.stdout.trim()}`);

    const keypair = generateKeypairBytes();
    const from = path.join(outside, 'kp.json');
    fs.writeFileSync(from, JSON.stringify(Array.from(keypair)), { mode: 0o600 });
    const imported = await cli(['key', 'import', 'moved', '--from', from, '--class', 'wallet', '--store', 'pkcs11']);
    expect(imported.code).toBe(0);
    expect(imported.stdout.trim()).toBe(encodeBase58(keypair.subarray(32)));
    expect(imported.stderr).toMatch(/still holds the key in plaintext: .*delete it/);
    // The same name again is refused: a key in the token is never overwritten.
    const again = await cli(['key', 'new', 'fresh', '--class', 'session', '--store', 'pkcs11']);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/already holds objects labelled "fresh"/);
  });

  it('key show opens the key in the token and reports the store healthy', async () => {
    const show = await cli(['key', 'show', 'alpha']);
    expect(show.stdout).toMatch(/\nstore: pkcs11 \(ok\)\nkey: ok\n/);
    const list = await cli(['key', 'list']);
    expect(list.stdout).toMatch(/\nalpha\s+pkcs11\s+session/);
  });

  it('key destroy asks for the name of a funded key, then removes its objects from the token', async () => {
    const refused = await cli(['key', 'destroy', 'alpha'], 'not it\n');
    expect(refused.code).not.toBe(0);
    expect((await cli(['key', 'show', 'alpha'])).stdout).toMatch(/\nkey: ok\n/);

    const destroyed = await cli(['key', 'destroy', 'alpha'], 'alpha\n');
    expect(destroyed.code).toBe(0);
    expect(destroyed.stderr).toMatch(/destroyed alpha \(its objects in the PKCS#11 token\)/);
    expect((await cli(['key', 'show', 'alpha'])).stdout).toMatch(
      /\nkey: unavailable: .*0 private and 0 public key objects labelled "alpha"/,
    );
  });
});
