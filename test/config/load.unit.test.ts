/**
 * loadConfig: the resolved shape, and every refusal naming the key at fault (the rules in config/example.yaml).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, redactUrl } from '../../src/config';
import { isSignerError } from '../../src/util/errors';

const A = '4Nd1mYwJ3d8q4t1nUQ8e3YqKkX2n1Fbq9xHk2wz3h5Qv';
const B = 'GjJyeC1r2RgkuoCWMyPYkCWSGSGLcz266EaAkLA27AhL';
const SHA = 'a'.repeat(64);

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cfg-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const f = path.join(dir, name);
  fs.writeFileSync(f, text);
  return f;
}

const BASE = `
keys:
  play:
    class: session
    pubkey: ${A}
  vault:
    class: wallet
    pubkey: ${B}
serve:
  tokens:
    - name: agent
      sha256: ${SHA}
      keys: [play]
`;

function refuses(yaml: string, pattern: RegExp, opts: { forServe?: boolean; env?: NodeJS.ProcessEnv } = {}): void {
  const file = write('c.yaml', yaml);
  let err: unknown;
  try {
    loadConfig({ file, env: opts.env ?? {}, forServe: opts.forServe ?? true });
  } catch (e) {
    err = e;
  }
  expect(isSignerError(err) && err.code).toBe('config_invalid');
  expect((err as Error).message).toMatch(pattern);
}

describe('loadConfig resolves', () => {
  test('defaults, per-class approvals, sorted keys and paths relative to the config folder', () => {
    const cfg = loadConfig({ file: write('c.yaml', BASE), env: {} });
    expect(cfg.keys.map((k) => [k.name, k.approval])).toEqual([
      ['play', 'auto'],
      ['vault', 'confirm'],
    ]);
    expect(cfg.key_dir).toBe(path.join(dir, 'keys'));
    expect(cfg.ledger).toEqual({ store: 'sqlite', path: path.join(dir, 'state', 'ledger.sqlite') });
    expect(cfg.cluster.name).toBe('zink-testnet');
    expect(cfg.cluster.genesis_hash).toBe('6qaAozzun2WV83PRDgqf79WXtbqfnezKB3demjxXV5EY');
    expect(cfg.cluster.rpc_url).toBe('https://rpc1.z.ink');
    expect(cfg.cluster.game_programs).toHaveLength(3);
    expect(cfg.serve.listen).toEqual({ host: '127.0.0.1', port: 8790 });
    expect(cfg.serve.metrics).toEqual({ host: '127.0.0.1', port: 9791 });
    expect(cfg.serve.drain_ms).toBe(220000);
    expect(cfg.serve.body_limit_bytes).toBe(65536);
    expect(cfg.serve.param_headers).toBe(true);
    expect(cfg.localnet).toBeNull();
    expect(cfg.source).toBe(path.join(dir, 'c.yaml'));
  });

  test('SIGNER_* env vars beat the file, with strict coercion', () => {
    const cfg = loadConfig({
      file: write('c.yaml', BASE),
      env: {
        SIGNER_LISTEN: '0.0.0.0:9000',
        SIGNER_METRICS_LISTEN: 'off',
        SIGNER_PARAM_HEADERS: 'false',
        SIGNER_ALLOWED_HOSTS: 'a.example, B.example',
        SIGNER_DRAIN_MS: '1000',
      },
    });
    expect(cfg.serve.listen).toEqual({ host: '0.0.0.0', port: 9000 });
    expect(cfg.serve.metrics).toBeNull();
    expect(cfg.serve.param_headers).toBe(false);
    expect(cfg.serve.allowed_hosts).toEqual(['a.example', 'b.example']);
    expect(cfg.serve.drain_ms).toBe(1000);
  });

  test('a JSON file and overrides work the same way', () => {
    const file = write('c.json', JSON.stringify({ keys: { play: { class: 'session', pubkey: A } } }));
    const cfg = loadConfig({ file, env: {}, overrides: { serve: { listen: '127.0.0.1:1234' } } });
    expect(cfg.serve.listen.port).toBe(1234);
    expect(cfg.keys[0]!.name).toBe('play');
  });

  test('a custom cluster is config, not code', () => {
    const cfg = loadConfig({
      file: write(
        'c.yaml',
        `cluster: devnet\nclusters:\n  devnet:\n    genesis_hash: ${A}\n    rpc_url: http://127.0.0.1:8899\n    programs: [{label: system, address: "11111111111111111111111111111111"}]\n`,
      ),
      env: {},
    });
    expect(cfg.cluster).toMatchObject({
      name: 'devnet',
      genesis_hash: A,
      rpc_url: 'http://127.0.0.1:8899',
      explorer: null,
    });
    expect(cfg.cluster.programs).toEqual([{ label: 'system', address: '11111111111111111111111111111111' }]);
  });

  test('cluster local: System, ComputeBudget, Associated Token plus configured game programs', () => {
    const cfg = loadConfig({
      file: write(
        'c.yaml',
        `cluster: local\nrpc_url: http://127.0.0.1:18899\nlocalnet:\n  game_programs: [{label: game, address: ${B}}]\n  fund: [{address: ${A}, lamports: 5}]\n`,
      ),
      env: {},
    });
    expect(cfg.cluster.genesis_hash).toBeNull();
    expect(cfg.cluster.programs.map((p) => p.label)).toEqual(['game', 'compute-budget', 'associated-token', 'system']);
    expect(cfg.cluster.game_programs).toEqual([B]);
    expect(cfg.localnet).toEqual({
      enabled: true,
      fund: [{ address: A, lamports: 5 }],
      block_ms: 400,
      confirm_after_blocks: 1,
    });
  });

  test("cluster local: the embedded chain at a real cluster's pace, from the file or the environment", () => {
    const file = write(
      'pace.yaml',
      `cluster: local\nrpc_url: http://127.0.0.1:18899\nlocalnet:\n  block_ms: 400\n  confirm_after_blocks: 2\n`,
    );
    expect(loadConfig({ file, env: {} }).localnet).toMatchObject({ block_ms: 400, confirm_after_blocks: 2 });
    const env = { SIGNER_LOCALNET_BLOCK_MS: '20', SIGNER_LOCALNET_CONFIRM_BLOCKS: '3' };
    expect(loadConfig({ file, env }).localnet).toMatchObject({ block_ms: 20, confirm_after_blocks: 3 });
  });

  test('serve.tokens_file merges tokens from a mounted secret', () => {
    write('tokens.yaml', `- name: ci\n  sha256: ${'b'.repeat(64)}\n  keys: [play]\n`);
    const cfg = loadConfig({ file: write('c.yaml', `${BASE}  tokens_file: tokens.yaml\n`), env: {} });
    expect(cfg.serve.tokens.map((t) => t.name)).toEqual(['agent', 'ci']);
  });

  test('a postgres URL comes from ledger.url_file or ledger.url_env', () => {
    write('pg-url', 'postgres://u:secret@127.0.0.1/db\n');
    const a = loadConfig({ file: write('c.yaml', `ledger: {store: postgres, url_file: pg-url}\n`), env: {} });
    expect(a.ledger).toEqual({
      store: 'postgres',
      url: 'postgres://u:secret@127.0.0.1/db',
      pool_size: 10,
      failover_ms: 15_000,
    });
    const b = loadConfig({
      file: write('c.yaml', `ledger: {store: postgres, url_env: PGURL}\n`),
      env: { PGURL: 'postgresql://x@h/d' },
    });
    expect(b.ledger).toMatchObject({ url: 'postgresql://x@h/d' });
    expect(redactUrl('postgres://u:secret@127.0.0.1/db')).not.toContain('secret');
  });

  test('the spend caps per key: null unless set, whole lamports when set', () => {
    const yaml = BASE.replace(
      `    pubkey: ${A}\n`,
      `    pubkey: ${A}\n    per_tx_lamports: 1000000\n    max_fee_lamports: 20000\n    approve_above_lamports: 0\n`,
    );
    const cfg = loadConfig({ file: write('c.yaml', yaml), env: {} });
    const pick = (name: string) => {
      const k = cfg.keys.find((key) => key.name === name)!;
      return [k.per_tx_lamports, k.max_fee_lamports, k.approve_above_lamports];
    };
    expect(pick('play')).toEqual([1_000_000, 20_000, 0]);
    expect(pick('vault')).toEqual([null, null, null]);
  });

  test('token policies: amounts as numbers or strings become base units, destinations and ops as listed', () => {
    const yaml = BASE.replace(
      `    pubkey: ${A}\n`,
      [
        `    pubkey: ${A}`,
        '    allow_token_ops: [approve]',
        '    tokens:',
        `      - mint: ${A}`,
        '        per_tx: 5000000',
        "        per_day: '18446744073709551615'",
        `        destinations: [${A}]`,
        '        approve_above: 1000000',
        '',
      ].join('\n'),
    );
    const play = loadConfig({ file: write('c.yaml', yaml), env: {} }).keys.find((k) => k.name === 'play')!;
    expect(play.allow_token_ops).toEqual(['approve']);
    expect(play.tokens).toEqual([
      {
        mint: A,
        program: 'spl-token',
        per_tx: 5_000_000n,
        per_day: 18_446_744_073_709_551_615n,
        destinations: [A],
        per_destination_per_day: null,
        approve_above: 1_000_000n,
      },
    ]);
  });

  test('config/example.yaml and config/local.yaml load', () => {
    expect(() =>
      loadConfig({ file: path.join(__dirname, '../../config/example.yaml'), env: {}, forServe: true }),
    ).not.toThrow();
    const local = loadConfig({ file: path.join(__dirname, '../../config/local.yaml'), env: {} });
    expect(local.cluster.name).toBe('local');
  });
});

describe('RPC endpoints, commitment and retry settings', () => {
  const devnet = (entry: string, top = BASE) =>
    `${top}cluster: devnet\nclusters:\n  devnet:\n    genesis_hash: ${A}\n${entry}`;

  test('the built-in cluster: one endpoint, confirmed, and the retry defaults', () => {
    const cfg = loadConfig({ file: write('c.yaml', BASE), env: {} });
    expect(cfg.cluster).toMatchObject({
      rpc_url: 'https://rpc1.z.ink',
      rpc_urls: ['https://rpc1.z.ink'],
      commitment: 'confirmed',
    });
    expect(cfg.timings).toMatchObject({
      rpc_retries: 3,
      rpc_backoff_base_ms: 200,
      rpc_backoff_max_ms: 5000,
      rpc_retry_after_max_ms: 10000,
      rpc_retry_budget_ms: 20000,
      rpc_endpoint_cooldown_ms: 30000,
    });
  });

  test('top-level rpc_urls and commitment override the built-in cluster; rpc_url is the first', () => {
    const cfg = loadConfig({
      file: write('c.yaml', `${BASE}rpc_urls: [https://a.example/k1, https://b.example]\ncommitment: finalized\n`),
      env: {},
    });
    expect(cfg.cluster).toMatchObject({
      name: 'zink-testnet',
      rpc_url: 'https://a.example/k1',
      rpc_urls: ['https://a.example/k1', 'https://b.example'],
      commitment: 'finalized',
    });
  });

  test('the single rpc_url keeps working, from the file or SIGNER_RPC_URL', () => {
    const cfg = loadConfig({ file: write('c.yaml', `${BASE}rpc_url: https://one.example\n`), env: {} });
    expect(cfg.cluster).toMatchObject({ rpc_url: 'https://one.example', rpc_urls: ['https://one.example'] });
    const env = loadConfig({ file: write('c.yaml', BASE), env: { SIGNER_RPC_URL: 'https://env.example' } });
    expect(env.cluster.rpc_urls).toEqual(['https://env.example']);
  });

  test('SIGNER_RPC_URLS is comma-separated; SIGNER_COMMITMENT and the retry timings come from env too', () => {
    const cfg = loadConfig({
      file: write('c.yaml', BASE),
      env: {
        SIGNER_RPC_URLS: 'https://a.example, https://b.example',
        SIGNER_COMMITMENT: 'finalized',
        SIGNER_RPC_RETRIES: '0',
        SIGNER_RPC_ENDPOINT_COOLDOWN_MS: '5000',
      },
    });
    expect(cfg.cluster.rpc_urls).toEqual(['https://a.example', 'https://b.example']);
    expect(cfg.cluster.commitment).toBe('finalized');
    expect(cfg.timings.rpc_retries).toBe(0);
    expect(cfg.timings.rpc_endpoint_cooldown_ms).toBe(5000);
  });

  test('a custom cluster declares its endpoints and commitment', () => {
    const cfg = loadConfig({
      file: write(
        'c.yaml',
        devnet('    rpc_urls: [http://127.0.0.1:1, http://127.0.0.1:2]\n    commitment: finalized\n'),
      ),
      env: {},
    });
    expect(cfg.cluster).toMatchObject({
      rpc_url: 'http://127.0.0.1:1',
      rpc_urls: ['http://127.0.0.1:1', 'http://127.0.0.1:2'],
      commitment: 'finalized',
    });
    const plain = loadConfig({ file: write('c.yaml', devnet('    rpc_url: http://127.0.0.1:3\n')), env: {} });
    expect(plain.cluster).toMatchObject({ rpc_urls: ['http://127.0.0.1:3'], commitment: 'confirmed' });
  });

  test('cluster local takes rpc_urls; the embedded chain starts at the first', () => {
    const cfg = loadConfig({
      file: write('c.yaml', 'cluster: local\nrpc_urls: [http://127.0.0.1:18899, http://127.0.0.1:18900]\n'),
      env: {},
    });
    expect(cfg.cluster).toMatchObject({ rpc_url: 'http://127.0.0.1:18899', commitment: 'confirmed' });
    expect(cfg.cluster.rpc_urls).toHaveLength(2);
  });

  test('refusals name the keys and never echo a URL (they carry API keys)', () => {
    refuses(
      `${BASE}rpc_url: https://x.example/SECRET1\nrpc_urls: [https://y.example/SECRET2]\n`,
      /^rpc_url and rpc_urls: set one of them(?!.*SECRET)/,
    );
    refuses(
      devnet('    rpc_url: https://x.example/SECRET1\n    rpc_urls: [https://y.example/SECRET2]\n'),
      /^clusters\.devnet\.rpc_url and clusters\.devnet\.rpc_urls: set one of them(?!.*SECRET)/,
    );
    refuses(
      `${BASE}rpc_urls: [https://a.example/SECRET, https://b.example, https://a.example/SECRET]\n`,
      /^rpc_urls\[2\] repeats rpc_urls\[0\](?!.*SECRET)/,
    );
    refuses(
      `${BASE}rpc_urls: [https://ok.example, ftp://SECRET]\n`,
      /rpc_urls: entry 1 is not an http\(s\) URL(?!.*SECRET)/,
    );
    refuses(`${BASE}rpc_url: ftp://SECRET\n`, /rpc_url: must be an http\(s\) URL or null(?!.*SECRET)/);
    refuses(`${BASE}commitment: processed\n`, /commitment/);
    refuses(devnet('    rpc_url: http://127.0.0.1:1\n    commitment: processed\n'), /clusters\.devnet\.commitment/);
    refuses(devnet('    rpc_url: ftp://SECRET\n'), /clusters\.devnet\.rpc_url: must be an http\(s\) URL(?!.*SECRET)/);
    refuses(devnet(''), /clusters\.devnet\.rpc_url: required \(or set rpc_url or rpc_urls\)/);
  });
});

describe('loadConfig refuses to start, naming the key', () => {
  test('an unknown top-level key', () => refuses(`${BASE}rpc: x\n`, /rpc: unknown key/));
  test('an unknown nested key', () => refuses(`${BASE}  listne: 1.2.3.4:1\n`, /serve\.listne: unknown key/));
  test('an unknown key inside a key entry', () =>
    refuses(BASE.replace('class: session', 'class: session\n    colour: red'), /keys\.play\.colour: unknown key/));
  test('a bad key name', () =>
    refuses(BASE.replace('  play:', '  Play:').replace('[play]', '[]'), /keys\.Play: key name/));
  test('a per-transaction cap that is not a whole number of lamports', () =>
    refuses(
      BASE.replace(`    pubkey: ${A}\n`, `    pubkey: ${A}\n    per_tx_lamports: -1\n`),
      /keys\.play\.per_tx_lamports/,
    ));
  test('a token policy without per_day, with an amount past u64, or a mint listed twice', () => {
    const withTokens = (entries: string) =>
      BASE.replace(`    pubkey: ${A}\n`, `    pubkey: ${A}\n    tokens:\n${entries}`);
    refuses(withTokens(`      - mint: ${A}\n`), /keys\.play\.tokens\[0\]\.per_day/);
    refuses(
      withTokens(`      - mint: ${A}\n        per_day: '18446744073709551616'\n`),
      /keys\.play\.tokens\[0\]\.per_day: must be a whole number of base units/,
    );
    refuses(
      withTokens(`      - mint: ${A}\n        per_day: 1\n      - mint: ${A}\n        per_day: 2\n`),
      /keys\.play\.tokens\[1\]\.mint: .* is listed twice/,
    );
    refuses(
      BASE.replace(`    pubkey: ${A}\n`, `    pubkey: ${A}\n    allow_token_ops: [drain]\n`),
      /keys\.play\.allow_token_ops: "drain" is not one of/,
    );
  });
  test('a missing class', () => refuses(`keys:\n  k:\n    pubkey: ${A}\n`, /keys\.k\.class/));
  test('two key names for one pubkey (each would get its own halt, cap and rate)', () =>
    refuses(
      `keys:\n  one:\n    class: session\n    pubkey: ${A}\n  two:\n    class: session\n    pubkey: ${A}\n`,
      new RegExp(`^keys\\.two\\.pubkey: ${A} is already keys\\.one; configure each pubkey once$`),
      { forServe: false },
    ));
  test('a pubkey that is not base58', () =>
    refuses(`keys:\n  k:\n    class: session\n    pubkey: nope0OIl\n`, /keys\.k\.pubkey/));
  test('a token naming an unknown key', () =>
    refuses(BASE.replace('[play]', '[ghost]'), /serve\.tokens\[0\] \("agent"\)\.keys: no key "ghost"/));
  test('a wallet key on a token without allow_unattended', () =>
    refuses(BASE.replace('[play]', '[vault]'), /wallet key "vault" may not be used by a token/));
  test('wallet + auto without allow_unattended', () =>
    refuses(
      BASE.replace('class: wallet', 'class: wallet\n    approval: auto'),
      /keys\.vault\.approval: a wallet key cannot be auto/,
    ));
  test('no tokens, for serve', () => refuses(`keys: {}\n`, /serve\.tokens: no tokens configured/));
  test('sha256 that is not 64 lowercase hex', () =>
    refuses(BASE.replace(SHA, 'A'.repeat(64)), /sha256: must be exactly 64 lowercase hex/));
  test('duplicate token names', () =>
    refuses(
      `${BASE}    - name: agent\n      sha256: ${'c'.repeat(64)}\n      keys: []\n`,
      /two tokens are named "agent"/,
    ));
  test('an unknown cluster', () => refuses(`${BASE}cluster: mainnet\n`, /cluster: unknown cluster "mainnet"/));
  test('a SIGNER_* variable no setting reads, with the nearest real one', () =>
    refuses(
      BASE,
      /environment: SIGNER_ALLOWED_HOST: no setting reads this variable; did you mean SIGNER_ALLOWED_HOSTS\?/,
      {
        env: { SIGNER_ALLOWED_HOST: 'signer.example' },
      },
    ));
  test('but not the variables the CLIs and the relay read, nor the one ledger.url_env names', () => {
    const file = write('c.yaml', `${BASE}ledger:\n  store: postgres\n  url_env: SIGNER_PG\n`);
    const env = {
      SIGNER_PG: 'postgres://u@h/db',
      SIGNER_URL: 'x',
      SIGNER_TOKEN_FILE: 'x',
      SIGNER_CONFIG: file,
      SIGNER_LOG_PRETTY: '0',
    };
    expect(loadConfig({ file, env }).ledger).toEqual({
      store: 'postgres',
      url: 'postgres://u@h/db',
      pool_size: 10,
      failover_ms: 15_000,
    });
  });
  test('a non-numeric env value', () =>
    refuses(BASE, /serve\.max_in_flight/, { env: { SIGNER_MAX_IN_FLIGHT: '12abc' } }));
  test('a bad listen address', () => refuses(BASE, /serve\.listen/, { env: { SIGNER_LISTEN: 'localhost' } }));
  test('a postgres ledger without a URL', () =>
    refuses(`${BASE}ledger: {store: postgres}\n`, /ledger: a postgres ledger needs exactly one/));
  test('a file that does not parse', () => refuses('keys: [unclosed\n', /does not parse/));
  test('the password of a postgres URL is never in an error', () =>
    refuses(`${BASE}ledger: {store: postgres, url: "mysql://u:hunter2@h/d"}\n`, /^(?!.*hunter2)/));
});

describe('key stores', () => {
  const keyIn = (store: string) => `keys:\n  play:\n    class: session\n    pubkey: ${A}\n    store: ${store}\n`;

  test('a key is a file key unless it names its store; an encrypted key reads its passphrase from a file', () => {
    expect(loadConfig({ file: write('c.yaml', BASE), env: {} }).keys.map((k) => k.store)).toEqual(['file', 'file']);
    const cfg = loadConfig({
      file: write('e.yaml', `${keyIn('encrypted')}key_stores:\n  encrypted:\n    passphrase_file: secret/pass\n`),
      env: {},
    });
    expect(cfg.keys[0]!.store).toBe('encrypted');
    expect(cfg.key_stores!.encrypted).toEqual({
      dir: path.join(dir, 'keys'),
      passphrase: { file: path.join(dir, 'secret/pass') },
      scrypt_log_n: 18,
    });
  });

  test('refuses an encrypted key without a passphrase source, and both sources at once', () => {
    expect(() => loadConfig({ file: write('c.yaml', keyIn('encrypted')), env: {} })).toThrow(
      /keys\.play\.store: an encrypted key needs key_stores\.encrypted\.passphrase_file or passphrase_env/,
    );
    expect(() =>
      loadConfig({
        file: write(
          'd.yaml',
          `${keyIn('encrypted')}key_stores:\n  encrypted:\n    passphrase_file: p\n    passphrase_env: KEY_PASSPHRASE\n`,
        ),
        env: {},
      }),
    ).toThrow(/key_stores\.encrypted\.passphrase: set key_stores\.encrypted\.passphrase_file or .*_env, not both/);
  });

  test('a pkcs11 key needs the module, the token label and a PIN source; a PIN variable named SIGNER_… is known', () => {
    expect(() => loadConfig({ file: write('c.yaml', keyIn('pkcs11')), env: {} })).toThrow(
      /keys\.play\.store: a pkcs11 key needs key_stores\.pkcs11\.module, key_stores\.pkcs11\.token_label, key_stores\.pkcs11\.pin_file or pin_env/,
    );
    const cfg = loadConfig({
      file: write(
        'p.yaml',
        `${keyIn('pkcs11')}key_stores:\n  pkcs11:\n    module: /usr/lib/softhsm/libsofthsm2.so\n    token_label: signer\n    pin_env: SIGNER_HSM_PIN\n`,
      ),
      env: { SIGNER_HSM_PIN: '1234' },
    });
    expect(cfg.key_stores!.pkcs11).toEqual({
      module: '/usr/lib/softhsm/libsofthsm2.so',
      token_label: 'signer',
      pin: { env: 'SIGNER_HSM_PIN' },
      sessions: 4,
      reconnect_ms: 1000,
    });
  });
});

describe('the operator console and its operators', () => {
  const load = (text: string, env: NodeJS.ProcessEnv = {}) =>
    loadConfig({ file: write('c.yaml', text), env, forServe: true });

  test('off by default; on with its address, the console origin checked, the secret file relative to the config', () => {
    expect(load(BASE).serve.operator).toBeNull();
    expect(load(BASE).operators).toEqual([]);
    const cfg = load(
      `${BASE}  operator:\n    listen: 127.0.0.1:8788\n    public_url: https://console.example.com\n    session_secret_file: secret\noperators:\n  - {name: alice, role: admin}\n  - {name: bob, role: approver}\n`,
    );
    expect(cfg.serve.operator).toEqual({
      listen: { host: '127.0.0.1', port: 8788 },
      public_url: 'https://console.example.com',
      session_secret_file: path.join(dir, 'secret'),
      session_ttl_ms: 900_000,
      enrollment_ttl_ms: 600_000,
    });
    expect(cfg.operators).toEqual([
      { name: 'alice', role: 'admin' },
      { name: 'bob', role: 'approver' },
    ]);
    expect(load(BASE, { SIGNER_OPERATOR_LISTEN: '127.0.0.1:0' }).serve.operator?.listen).toEqual({
      host: '127.0.0.1',
      port: 0,
    });
  });

  test.each([
    ['http://console.example.com', /use https/],
    ['https://10.0.0.1', /never an IP address/],
    ['https://console.example.com/app', /without a path/],
    ['not a url', /is not a URL/],
  ])('refuses public_url %s', (url, why) => {
    expect(() => load(`${BASE}  operator:\n    listen: 127.0.0.1:8788\n    public_url: ${url}\n`)).toThrow(why);
  });
});

describe('operators and approvals by quorum', () => {
  const OPERATORS = `
operators:
  - name: alice
  - name: bob
    role: admin
  - name: carol
`;
  const vault = (approvals: string) => `
keys:
  vault:
    class: wallet
    pubkey: ${B}
    approvals: ${approvals}
`;

  test('named operators, and a key whose quorum names some of them', () => {
    const cfg = loadConfig({
      file: write('c.yaml', `${OPERATORS}${vault('{ required: 2, approvers: [alice, bob, carol] }')}`),
      env: {},
    });
    expect(cfg.operators).toEqual([
      { name: 'alice', role: 'approver' },
      { name: 'bob', role: 'admin' },
      { name: 'carol', role: 'approver' },
    ]);
    expect(cfg.keys[0]?.approvals).toEqual({ required: 2, approvers: ['alice', 'bob', 'carol'] });
  });

  test('by default any one configured operator approves; without operators a key has no quorum at all', () => {
    const named = loadConfig({ file: write('c.yaml', `${OPERATORS}${BASE}`), env: {} });
    expect(named.keys.map((k) => k.approvals)).toEqual([
      { required: 1, approvers: ['alice', 'bob', 'carol'] },
      { required: 1, approvers: ['alice', 'bob', 'carol'] },
    ]);
    const none = loadConfig({ file: write('c.yaml', BASE), env: {} });
    expect(none.operators).toEqual([]);
    expect(none.keys.map((k) => k.approvals)).toEqual([undefined, undefined]);
  });

  test('refuses an operator name outside [a-z0-9_-]{1,32}, a name twice, and an unknown role', () => {
    refuses('operators:\n  - name: Alice\n', /operators\[0\]\.name: "Alice": use 1 to 32 lowercase letters/);
    refuses(`operators:\n  - name: ${'a'.repeat(33)}\n`, /operators\[0\]\.name: "a{33}": use 1 to 32/);
    refuses('operators:\n  - name: alice\n  - name: alice\n', /operators\[1\]\.name: "alice" is listed twice/);
    refuses('operators:\n  - name: alice\n    role: root\n', /operators\[0\]\.role/);
    refuses('operators:\n  - name: alice\n    hats: 2\n', /operators\[0\]\.hats: unknown key/);
  });

  test('refuses approvers who are not configured operators, or listed twice', () => {
    refuses(
      `${OPERATORS}${vault('{ approvers: [alice, mallory] }')}`,
      /keys\.vault\.approvals\.approvers: "mallory" is not under operators \(configured: alice, bob, carol\)/,
    );
    refuses(
      `${OPERATORS}${vault('{ approvers: [alice, alice] }')}`,
      /keys\.vault\.approvals\.approvers: "alice" is listed twice/,
    );
    refuses(
      vault('{ approvers: [alice] }'),
      /keys\.vault\.approvals\.approvers: no operators are configured; list alice under operators/,
    );
  });

  test('refuses a quorum that can never be reached, or none at all', () => {
    refuses(
      `${OPERATORS}${vault('{ required: 3, approvers: [alice, bob] }')}`,
      /keys\.vault\.approvals\.required: 3 approvals from 2 approvers \(alice, bob\) can never be reached; use 1 to 2/,
    );
    refuses(
      `${OPERATORS}${vault('{ required: 4 }')}`,
      /keys\.vault\.approvals\.required: 4 approvals from 3 approvers/,
    );
    refuses(`${OPERATORS}${vault('{ required: 0 }')}`, /keys\.vault\.approvals\.required/);
    refuses(vault('{ required: 2 }'), /keys\.vault\.approvals\.required: 2 approvals need named operators/);
  });
});
