/**
 * The configs shipped with compose.yaml and deploy/ load with the real config loader, and the paths they name are
 * the paths compose.yaml and the kustomize Deployment mount. A config that fails to load, or a tokens_file that no
 * mount provides, would only show up as a crash-looping container.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { loadConfig } from '../../src/config/load';
import { tokenSha256 } from '../../src/http/bearer-tokens';

const repo = path.resolve(__dirname, '../..');
let tmp: string;
let tokensFile: string;
let ledgerUrlFile: string;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'shipped-configs-'));
  tokensFile = path.join(tmp, 'tokens.yaml');
  fs.writeFileSync(tokensFile, `- name: agent\n  sha256: ${tokenSha256('sfs_test')}\n  keys: [agent]\n`, {
    mode: 0o600,
  });
  ledgerUrlFile = path.join(tmp, 'ledger_url');
  fs.writeFileSync(ledgerUrlFile, 'postgres://signer:secret@postgres:5432/signer\n', { mode: 0o600 });
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Loads a shipped config as `serve` would, with the mounted secret files replaced by local ones. */
function loadShipped(rel: string) {
  const file = path.join(repo, rel);
  const doc = parse(fs.readFileSync(file, 'utf8')) as { serve: { tokens_file: string }; ledger: { url_file?: string } };
  const cfg = loadConfig({
    file,
    forServe: true,
    env: { SIGNER_TOKENS_FILE: tokensFile, ...(doc.ledger.url_file ? { SIGNER_LEDGER_URL_FILE: ledgerUrlFile } : {}) },
  });
  return { cfg, doc };
}

const SHIPPED = [
  { rel: 'deploy/compose/config.yaml', store: 'sqlite' },
  { rel: 'deploy/compose/config.replicas.yaml', store: 'postgres' },
  { rel: 'deploy/base/config.yaml', store: 'sqlite' },
  { rel: 'deploy/overlays/postgres/config.yaml', store: 'postgres' },
  { rel: 'deploy/overlays/postgres-ha/config.yaml', store: 'postgres' },
] as const;

describe.each(SHIPPED)('$rel', ({ rel, store }) => {
  it(`loads for serve: keys in /run/keys, state in /var/lib/sa-forge-signer, ${store} ledger, listening on all container interfaces`, () => {
    const { cfg } = loadShipped(rel);
    expect(cfg.key_dir).toBe('/run/keys');
    expect(cfg.state_dir).toBe('/var/lib/sa-forge-signer');
    expect(cfg.ledger.store).toBe(store);
    expect(cfg.serve.listen).toEqual({ host: '0.0.0.0', port: 8790 });
    expect(cfg.serve.metrics).toEqual({ host: '0.0.0.0', port: 9791 });
    expect(cfg.serve.allowed_hosts).toEqual(expect.arrayContaining(['127.0.0.1', 'localhost']));
    expect(cfg.serve.tokens.map((t) => t.name)).toEqual(['agent']);
    expect(cfg.keys.map((k) => k.name)).toEqual(['agent']);
    if (cfg.ledger.store === 'postgres') expect(cfg.ledger.url).toBe('postgres://signer:secret@postgres:5432/signer');
  });
});

describe('compose.yaml mounts what its configs name', () => {
  const compose = parse(fs.readFileSync(path.join(repo, 'compose.yaml'), 'utf8'), { merge: true }) as {
    services: Record<string, { volumes?: string[]; secrets?: { source: string; target: string }[] }>;
  };
  it.each([
    ['signer', 'deploy/compose/config.yaml'],
    ['signer-a', 'deploy/compose/config.replicas.yaml'],
    ['signer-b', 'deploy/compose/config.replicas.yaml'],
  ])('%s mounts %s and the secrets at the paths it names', (service, rel) => {
    const { doc } = loadShipped(rel);
    const svc = compose.services[service]!;
    expect(svc.volumes).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`${rel.replace(/\./g, '\\.')}}?:/etc/sa-forge-signer/config\\.yaml:ro$`)),
      ]),
    );
    const targets = (svc.secrets ?? []).map((s) => s.target);
    expect(targets).toContain('/run/keys');
    expect(targets).toContain(doc.serve.tokens_file);
    if (doc.ledger.url_file) expect(targets).toContain(doc.ledger.url_file);
  });
});

describe('deploy/compose/config.hsm.yaml (profile hsm)', () => {
  it('loads for serve: a pkcs11 key and an encrypted key whose PIN and passphrase are secrets signer-hsm mounts', () => {
    const { cfg, doc } = loadShipped('deploy/compose/config.hsm.yaml');
    expect(cfg.keys.map((k) => [k.name, k.store])).toEqual([
      ['agent', 'pkcs11'],
      ['treasury', 'encrypted'],
    ]);
    const stores = cfg.key_stores!;
    expect(stores.encrypted).toMatchObject({ dir: '/run/keys', passphrase: { file: '/run/secrets/key_passphrase' } });
    expect(stores.pkcs11).toMatchObject({
      module: '/usr/lib/softhsm/libsofthsm2.so',
      token_label: 'signer',
      pin: { file: '/run/secrets/hsm_pin' },
    });
    const compose = parse(fs.readFileSync(path.join(repo, 'compose.yaml'), 'utf8'), { merge: true }) as {
      services: Record<string, { volumes?: string[]; secrets?: { source: string; target: string }[] }>;
    };
    const svc = compose.services['signer-hsm']!;
    expect(svc.volumes).toEqual(
      expect.arrayContaining([expect.stringMatching(/config\.hsm\.yaml}?:\/etc\/sa-forge-signer\/config\.yaml:ro$/)]),
    );
    expect((svc.secrets ?? []).map((s) => s.target)).toEqual(
      expect.arrayContaining([
        '/run/keys',
        doc.serve.tokens_file,
        '/run/secrets/key_passphrase',
        '/run/secrets/hsm_pin',
      ]),
    );
  });
});

/** The part of a rendered Kubernetes object these checks read. */
interface RenderedObject {
  kind?: string;
  data?: Record<string, string>;
  spec?: { template?: { spec?: { containers?: { name: string; volumeMounts?: { mountPath: string }[] }[] } } };
}

describe('deploy/ mounts what its configs name', () => {
  const render = (dir: string): RenderedObject[] =>
    parseAllDocuments(execFileSync('kubectl', ['kustomize', path.join(repo, dir)], { encoding: 'utf8' })).map(
      (d) => d.toJS() as RenderedObject,
    );
  const kubectl = (() => {
    try {
      execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();
  (kubectl ? it.each : it.skip.each)([
    ['deploy/base', 'deploy/base/config.yaml'],
    ['deploy/overlays/postgres', 'deploy/overlays/postgres/config.yaml'],
    ['deploy/overlays/postgres-ha', 'deploy/overlays/postgres-ha/config.yaml'],
  ])('%s: the ConfigMap holds %s, and the signer mounts its tokens_file, url_file and /run/keys', (dir, rel) => {
    const { doc } = loadShipped(rel);
    const objs = render(dir);
    const cm = objs.find((o) => o.kind === 'ConfigMap');
    expect(cm?.data?.['config.yaml']).toBe(fs.readFileSync(path.join(repo, rel), 'utf8'));
    const signer = objs
      .find((o) => o.kind === 'Deployment')
      ?.spec?.template?.spec?.containers?.find((c) => c.name === 'signer');
    expect(signer).toBeDefined();
    const mounts = (signer?.volumeMounts ?? []).map((m) => m.mountPath);
    expect(mounts).toContain('/run/keys');
    expect(mounts).toContain(path.dirname(doc.serve.tokens_file));
    if (doc.ledger.url_file) expect(mounts).toContain(path.dirname(doc.ledger.url_file));
    const { cfg } = loadShipped(rel);
    const secrets = [cfg.key_stores?.encrypted.passphrase, cfg.key_stores?.pkcs11.pin];
    for (const ref of secrets) if (ref && 'file' in ref) expect(mounts).toContain(path.dirname(ref.file));
  });
});
