/**
 * The encrypted store through the built CLI and service: `key new` and `key import` leave no trace of a seed under
 * the key or state directories (the test decrypts each key and searches every file for its seed and keypair in
 * hex, base58, base64 and as a JSON byte array), the age tool opens the files with the passphrase, and a wrong
 * passphrase makes `key show` say the store cannot open the key and stops the service's start with a message naming
 * the key.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { generateKeypairBytes } from '../../src/keys/keypair';
import { encodeBase58 } from '../../src/util/base58';
import { assertBuilt, BIN, run } from '../support/cli';
import { makeWorld, worldConfigDocument, type World } from '../support/world';

const PASSPHRASE = 'correct horse battery staple'; // what makeWorld writes for an encrypted world

/** `age -d` as an operator runs it: it reads the passphrase from a terminal, so it runs under `script`'s pty. */
function ageDecrypt(file: string, passphrase: string): Promise<Uint8Array> {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'age-out-'));
  const out = path.join(outDir, 'keypair.json');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', `age -d -o ${out} ${file}`, '/dev/null'], { stdio: 'pipe' });
    let seen = '';
    child.stdout.on('data', (d: Buffer) => {
      seen += d.toString();
      if (/Enter passphrase/.test(seen) && !child.stdin.writableEnded) child.stdin.end(`${passphrase}\n`);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        if (code !== 0) {
          reject(new Error(`age -d exited ${code}: ${seen}`));
          return;
        }
        resolve(Uint8Array.from(JSON.parse(fs.readFileSync(out, 'utf8')) as number[]));
      } finally {
        fs.rmSync(outDir, { recursive: true, force: true });
      }
    });
  });
}

/** The seed and the whole keypair in every encoding a careless write could use. */
function encodings(keypair: Uint8Array): string[] {
  return [keypair.subarray(0, 32), keypair].flatMap((b) => [
    Buffer.from(b).toString('hex'),
    encodeBase58(b),
    Buffer.from(b).toString('base64'),
    Buffer.from(b).toString('base64url'),
    JSON.stringify(Array.from(b)),
    Array.from(b).join(', '),
  ]);
}

function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => path.join(dir, f))
    .filter((f) => fs.statSync(f).isFile());
}

describe('encrypted keys through the CLI and the service', () => {
  let w: World;
  let config: string;
  let outside: string;
  let doc: Record<string, unknown>;
  const cli = (...args: string[]) => run(BIN.signer, ['--config', config, ...args]);

  beforeAll(async () => {
    assertBuilt(BIN.signer, BIN.serve);
    w = await makeWorld({ store: 'encrypted' });
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'import-from-'));
    config = path.join(w.dir, 'config.yaml');
    doc = worldConfigDocument(w, {
      serve: {
        listen: '127.0.0.1:0',
        metrics: null,
        tokens: [{ name: 'agent', sha256: 'a'.repeat(64), keys: ['alpha'] }],
      },
    });
    fs.writeFileSync(config, YAML.stringify(doc));
  });
  afterAll(async () => {
    await w.close();
    fs.rmSync(outside, { recursive: true, force: true });
  });

  it('key new and key import write only age files that the age tool opens; no seed is left anywhere', async () => {
    const made = await cli('key', 'new', 'hot', '--class', 'session', '--store', 'encrypted');
    expect(made.code).toBe(0);
    const hot = made.stdout.trim();
    expect(made.stderr).toContain(`store: encrypted\n    pubkey: ${hot}`);

    const keypair = generateKeypairBytes();
    const from = path.join(outside, 'cold.json');
    fs.writeFileSync(from, JSON.stringify(Array.from(keypair)), { mode: 0o600 });
    const imported = await cli('key', 'import', 'cold', '--from', from, '--class', 'session', '--store', 'encrypted');
    expect(imported.code).toBe(0);
    expect(imported.stdout.trim()).toBe(encodeBase58(keypair.subarray(32)));
    expect(imported.stderr).toContain(`${from} still holds the key in plaintext`);

    const ageFiles = ['alpha', 'hot', 'cold'].map((n) => path.join(w.config.key_dir, `${n}.age`));
    const keypairs = await Promise.all(ageFiles.map((f) => ageDecrypt(f, PASSPHRASE)));
    expect(encodeBase58(keypairs[1]!.subarray(32))).toBe(hot);
    expect(Buffer.from(keypairs[2]!).equals(Buffer.from(keypair))).toBe(true);

    // Every file the signer wrote: the key directory and the state directory (the ledger and its journal).
    const files = [...filesUnder(w.config.key_dir), ...filesUnder(w.config.state_dir)];
    expect(files.map((f) => path.basename(f))).toEqual(expect.arrayContaining(['hot.age', 'cold.age', 'alpha.age']));
    for (const file of files) {
      const text = fs.readFileSync(file).toString('latin1');
      for (const kp of keypairs)
        for (const enc of encodings(kp)) expect({ file, found: text.includes(enc) }).toEqual({ file, found: false });
    }
  });

  it('key list and key show name the store, and show says the key opens', async () => {
    const list = JSON.parse((await cli('key', 'list', '--json')).stdout) as { name: string; store: string }[];
    expect(list).toEqual([expect.objectContaining({ name: 'alpha', store: 'encrypted' })]);
    const show = await cli('key', 'show', 'alpha');
    expect(show.stdout).toMatch(/\nstore: encrypted \(ok\)\nkey: ok\n/);
    expect(JSON.parse((await cli('key', 'show', 'alpha', '--json')).stdout)).toMatchObject({ store_status: 'ok' });
  });

  it('key show with a wrong passphrase says the store cannot open the key, not that it is ok', async () => {
    const wrong = path.join(outside, 'wrong-passphrase-show');
    fs.writeFileSync(wrong, 'not the passphrase\n', { mode: 0o600 });
    const env = { SIGNER_KEY_PASSPHRASE_FILE: wrong };
    const show = await run(BIN.signer, ['--config', config, 'key', 'show', 'alpha'], { env });
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(
      /\nstore: encrypted \(cannot open this key\)\nkey: unavailable: the passphrase does not open the encrypted key file of "alpha" /,
    );
    const json = await run(BIN.signer, ['--config', config, 'key', 'show', 'alpha', '--json'], { env });
    expect(JSON.parse(json.stdout)).toMatchObject({
      store: 'encrypted',
      store_status: 'key_unavailable',
      store_health: 'cannot open this key',
      key_file: expect.stringMatching(/^unavailable: the passphrase does not open/) as unknown,
    });
    expect(show.stdout + json.stdout).not.toContain('not the passphrase');
  });

  it('a wrong passphrase stops the start, naming the key and why', async () => {
    const wrong = path.join(outside, 'wrong-passphrase');
    fs.writeFileSync(wrong, 'not the passphrase\n', { mode: 0o600 });
    const r = await run(BIN.serve, ['--config', config], { env: { SIGNER_KEY_PASSPHRASE_FILE: wrong } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /key "alpha" \(encrypted store\): the passphrase does not open the encrypted key file of "alpha"/,
    );
    expect(r.stderr).not.toContain('not the passphrase');
  });
});
