import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createKeyFile, destroyKeyFile, loadKeyFile } from '../../src/keys/keyfile';
import { TokenVerifier, newToken, tokenSha256 } from '../../src/http/bearer-tokens';
import { SignerError } from '../../src/util/errors';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keys-'));
  fs.chmodSync(dir, 0o700);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const codeOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    return (e as SignerError).code;
  }
  return 'none';
};

describe('key files', () => {
  it('creates a 0600 Solana keypair file and loads the same pubkey', () => {
    const pubkey = createKeyFile(dir, 'alpha');
    const file = path.join(dir, 'alpha.json');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toHaveLength(64);
    expect(loadKeyFile(dir, 'alpha', pubkey).pubkey).toBe(pubkey);
  });

  it('never overwrites an existing key', () => {
    createKeyFile(dir, 'alpha');
    expect(() => createKeyFile(dir, 'alpha')).toThrow(/already exists/);
  });

  it('refuses names that could escape the key directory', () => {
    expect(codeOf(() => loadKeyFile(dir, '../etc'))).toBe('request_invalid');
    expect(codeOf(() => createKeyFile(dir, 'Upper'))).toBe('request_invalid');
  });

  it('refuses a 0644 key file and a 0755 key directory', () => {
    createKeyFile(dir, 'alpha');
    fs.chmodSync(path.join(dir, 'alpha.json'), 0o644);
    expect(() => loadKeyFile(dir, 'alpha')).toThrow(/has mode 644; it must not be accessible to group or others/);
    fs.chmodSync(path.join(dir, 'alpha.json'), 0o600);
    fs.chmodSync(dir, 0o755);
    expect(() => loadKeyFile(dir, 'alpha')).toThrow(/has mode 755/);
  });

  it('refuses a file whose pubkey is not the configured one, naming both', () => {
    const pubkey = createKeyFile(dir, 'alpha');
    const other = createKeyFile(dir, 'beta');
    expect(() => loadKeyFile(dir, 'alpha', other)).toThrow(
      `key file for "alpha" has pubkey ${pubkey}, but the config says ${other}`,
    );
  });

  it('destroys a key file, and a second destroy fails', () => {
    createKeyFile(dir, 'alpha');
    destroyKeyFile(dir, 'alpha');
    expect(fs.existsSync(path.join(dir, 'alpha.json'))).toBe(false);
    expect(() => destroyKeyFile(dir, 'alpha')).toThrow(/no key file/);
  });
});

describe('tokens', () => {
  it('matches by sha256 only: case-sensitive, empty never matches', () => {
    const token = newToken();
    expect(token).toMatch(/^sfs_[1-9A-HJ-NP-Za-km-z]+$/);
    const verifier = new TokenVerifier([
      { name: 't', sha256: tokenSha256(token), keys: [] },
      { name: 's', sha256: tokenSha256('secret'), keys: [] },
    ]);
    expect(verifier.verifyAuthorization(`Bearer ${token}`)?.name).toBe('t');
    expect(verifier.verifyAuthorization('Bearer secret')?.name).toBe('s');
    expect(verifier.verifyAuthorization('Bearer Secret')).toBeNull();
    expect(verifier.verifyAuthorization('Bearer ')).toBeNull();
    expect(verifier.verifyAuthorization(token)).toBeNull();
    expect(verifier.verifyAuthorization(undefined)).toBeNull();
  });
});
