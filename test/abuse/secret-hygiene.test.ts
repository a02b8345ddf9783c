/**
 * Secret hygiene, run after every other abuse suite: every log line, report, error, response, metric
 * scrape and ledger row the suites captured is scanned for every secret they handed the signer — key files and
 * partial signers (base58, base64, base64url, hex, JSON byte arrays, seed or whole keypair), bearer tokens and RPC
 * credentials (as is, base64, hex, URL-encoded). A leak cut short still convicts: each form is its first 24
 * characters.
 */
import fs from 'node:fs';
import path from 'node:path';
import { artefactFiles, readSecrets, recordFigures, type SecretEntry } from './support/record';

const SUITE = 'secret-hygiene';
const KINDS = ['log', 'report', 'error', 'response', 'metrics', 'ledger'];

/** Every form of every secret, looked up by its length (all forms of one length in one Set). */
class SecretIndex {
  private readonly byLength = new Map<number, Map<string, string>>();
  readonly forms: number;

  constructor(secrets: SecretEntry[]) {
    let n = 0;
    for (const s of secrets) {
      for (const f of s.forms) {
        if (f.length < 8) continue; // too short to mean anything (and none of ours are)
        let m = this.byLength.get(f.length);
        if (!m) this.byLength.set(f.length, (m = new Map<string, string>()));
        if (!m.has(f)) n++;
        m.set(f, s.label);
      }
    }
    this.forms = n;
  }

  /** Each secret found in `text`, with where. A window slides over the text once per distinct form length. */
  scan(text: string, where: string): string[] {
    const found: string[] = [];
    for (const [len, forms] of this.byLength) {
      for (let i = 0; i + len <= text.length; i++) {
        const label = forms.get(text.slice(i, i + len));
        if (label !== undefined) {
          found.push(`${label} in ${where} at ${i}: …${text.slice(Math.max(0, i - 40), i)}[SECRET]…`);
          i += len - 1;
        }
      }
    }
    return found;
  }
}

describe('secret hygiene across everything the abuse suites produced', () => {
  const files = artefactFiles();
  const secrets = readSecrets();

  it('the scan has material: artefacts of every kind and secrets of every kind were recorded', () => {
    if (files.length === 0)
      throw new Error(
        'no artefacts: run the whole abuse suite (npm run test:abuse), this suite scans what the others leave',
      );
    const kinds = new Set(files.map((f) => path.basename(f).split('.').slice(-2)[0]));
    expect([...kinds].sort()).toEqual(expect.arrayContaining(KINDS));
    const labels = secrets.map((s) => s.label).join('\n');
    for (const kind of ['key file', 'token', 'partial signer', 'RPC API key', 'RPC password'])
      expect(labels).toContain(kind);
  });

  it('the scanner finds a planted secret in every encoding it knows', () => {
    const index = new SecretIndex(secrets);
    for (const s of secrets.slice(0, 50)) {
      for (const f of s.forms)
        if (f.length >= 8) expect(index.scan(`prefix ${f} suffix`, 'planted').length).toBeGreaterThan(0);
    }
  });

  it('no key, token, partial signer or RPC credential appears in any log, report, error, response, metric or ledger row', () => {
    const index = new SecretIndex(secrets);
    const leaks: string[] = [];
    let bytes = 0;
    for (const f of files) {
      const text = fs.readFileSync(f, 'utf8');
      bytes += text.length;
      leaks.push(...index.scan(text, path.basename(f)));
    }
    recordFigures(SUITE, {
      leaks: leaks.length,
      files: files.length,
      scanned_mb: Math.round(bytes / 1e5) / 10,
      secrets: secrets.length,
      forms: index.forms,
    });
    console.log(
      `secret hygiene: ${files.length} files, ${(bytes / 1e6).toFixed(1)} MB, ${secrets.length} secrets in ${index.forms} forms, ${leaks.length} leaks`,
    );
    expect(leaks.slice(0, 20)).toEqual([]);
  });
});
