/**
 * Every key file is checked when the engine opens, not at its first sign: a missing file, a file other users can
 * read, or one holding another pubkey is logged naming the key, makes /ready's readiness false, and with
 * `strictKeys` (the serve `--strict` flag) the engine refuses to open.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createKeyFile } from '../../src/keys/keyfile';
import { openLedger } from '../../src/ledger/open';
import { JsonRpcClient } from '../../src/rpc/rpc-client';
import { createEngine, openEngine } from '../../src/signer';
import { makeWorld, type World } from '../support/world';

describe('key files at start', () => {
  let w: World;
  beforeEach(async () => {
    w = await makeWorld({ keys: { good: {}, gone: {}, loose: {}, other: {} } });
    fs.rmSync(path.join(w.config.key_dir, 'gone.json'));
    fs.chmodSync(path.join(w.config.key_dir, 'loose.json'), 0o644);
    fs.rmSync(path.join(w.config.key_dir, 'other.json'));
    createKeyFile(w.config.key_dir, 'other'); // a fresh keypair: not the configured pubkey
  });
  afterEach(() => w.close());

  it('names each key that cannot sign, and readiness stays false until it is fixed', async () => {
    // An engine opened on the broken files (the world's own loaded every key before they were broken).
    const engine = createEngine({
      config: w.config,
      chain: new JsonRpcClient(w.localnet.url, { timeoutMs: 2000 }),
      ledger: w.ledger,
    });
    const problems = await engine.verifyKeys();
    expect(problems.map((p) => p.key)).toEqual(['gone', 'loose', 'other']);
    expect(problems[0]!.message).toMatch(/no key file for "gone"/);
    expect(problems[1]!.message).toMatch(/has mode 644.*chmod 600/);
    expect(problems[2]!.message).toMatch(/key file for "other" has pubkey \S+, but the config says \S+/);

    const ready = await engine.ready();
    expect(ready.ok).toBe(false);
    expect(ready.detail.ledger).toBe('ok');
    expect(ready.detail.chain).toBe('ok');
    expect(ready.detail.keys).toMatch(/^gone: .*; loose: .*; other: .*/);

    fs.chmodSync(path.join(w.config.key_dir, 'loose.json'), 0o600);
    expect((await engine.verifyKeys()).map((p) => p.key)).toEqual(['gone', 'other']);
    expect((await engine.ready()).detail.keys).toMatch(/^gone: .*; other: /);
  });

  it('logs one line per key at open, and with strictKeys refuses to open', async () => {
    const lines: { obj: object; msg?: string }[] = [];
    const logger = { info() {}, warn() {}, error: (obj: object, msg?: string) => lines.push({ obj, msg }) };
    const engine = await openEngine(w.config, { logger, ledger: w.ledger, strictKeys: false });
    expect(lines.map((l) => l.msg)).toEqual([
      'key "gone" cannot sign',
      'key "loose" cannot sign',
      'key "other" cannot sign',
    ]);
    expect(lines[0]!.obj).toMatchObject({ key: 'gone' });
    expect(await engine.verifyKeys()).toHaveLength(3);

    const ledger = await openLedger(w.config.ledger); // closed by the refused open
    await expect(openEngine(w.config, { ledger, strictKeys: true })).rejects.toMatchObject({
      code: 'key_file',
      message: expect.stringMatching(/^--strict: key "gone": .*; key "loose": .*; key "other": /) as unknown,
    });
  });
});
