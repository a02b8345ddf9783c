/**
 * The operator CLI as an operator runs it: the built binary against a real chain, key files and ledger.
 */
import fs from 'node:fs';
import path from 'node:path';
import { assertBuilt, BIN, run, writeYaml } from '../support/cli';
import { makeWorld, worldConfigDocument, type World } from '../support/world';
import type { SignProgress } from '../../src/signer/types';

describe('sa-forge-signer (operator CLI)', () => {
  let w: World;
  let config: string;
  const cli = (...args: string[]) => run(BIN.signer, ['--config', config, ...args]);

  beforeAll(async () => {
    assertBuilt(BIN.signer);
    w = await makeWorld({
      keys: { alpha: {}, wallet: { class: 'wallet', approval: 'confirm' } },
      timings: { approval_timeout_ms: 20_000 },
    });
    config = path.join(w.dir, 'config.yaml');
    writeYaml(config, worldConfigDocument(w));
  });
  afterAll(() => w.close());

  it('answers --help and --version', async () => {
    const help = await run(BIN.signer, ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/approvals approve ID \| reject ID/);
    const version = await run(BIN.signer, ['--version']);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('check prints the report on stdout only and exits by outcome', async () => {
    const ok = path.join(w.dir, 'ok.json');
    fs.writeFileSync(ok, JSON.stringify(w.transfer('alpha', 1_000_000)));
    const r = await cli('check', ok);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).outcome).toBe('ok');
    const refused = await run(BIN.signer, ['--config', config, 'check', '--key', 'wallet', '-'], {
      input: JSON.stringify(w.transfer('alpha', 1)),
    });
    expect(refused.code).toBe(10);
    expect(JSON.parse(refused.stdout).failed_check).toBe('fee_payer');
    const failing = await run(BIN.signer, ['--config', config, 'check', '-'], {
      input: JSON.stringify(w.transfer('alpha', 900_000_000_000)),
    });
    expect(failing.code).toBe(11);
  });

  it('reports a bad payload as an error with exit 1 and no report', async () => {
    const r = await run(BIN.signer, ['--config', config, 'check', '-'], { input: '{"version": 2}' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe('error: unsupported payload version 2');
    const dir = await cli('check', w.dir);
    expect(dir.stderr).toMatch(/is not a regular file/);
  });

  it('signs, shows progress on stderr, and the audit verifies in the store and in an export', async () => {
    const file = path.join(w.dir, 'sign.json');
    fs.writeFileSync(file, JSON.stringify(w.transfer('alpha', 2_000_000)));
    const r = await cli('sign', '--intent', 'pay', file);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).outcome).toBe('confirmed');
    expect(r.stderr).toMatch(/sent \S+/);
    expect((await cli('audit', 'verify')).stdout.trim()).toMatch(/^ok: \d+ entries$/);
    const tail = await cli('audit', 'tail', '-n', '2');
    expect(
      tail.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).command),
    ).toEqual(['sign-intent', 'sign']);
    const exported = path.join(w.dir, 'audit.jsonl');
    await cli('audit', 'export', '--out', exported);
    expect(fs.statSync(exported).mode & 0o777).toBe(0o600);
    expect((await cli('audit', 'verify', '--file', exported)).stdout.trim()).toMatch(/^ok: \d+ entries$/);
    fs.writeFileSync(
      exported,
      fs.readFileSync(exported, 'utf8').replace('"outcome":"confirmed"', '"outcome":"failed"'),
    );
    const broken = await cli('audit', 'verify', '--file', exported);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(/^broken: line \d+: hash does not match its content/);
  });

  it('approves a waiting sign of a confirm key from the command line', async () => {
    const events: SignProgress[] = [];
    const pending = w.engine.sign({
      payload: w.transfer('wallet', 1_000_000),
      principal: w.operator,
      onProgress: (e) => events.push(e),
    });
    await new Promise<void>((resolve) => {
      const t = setInterval(() => events.some((e) => e.stage === 'approval') && (clearInterval(t), resolve()), 10);
    });
    const list = await cli('approvals', 'list');
    const id = /^(\S+)\s+key wallet/m.exec(list.stdout)?.[1];
    expect(id).toBeDefined();
    expect(list.stdout).toMatch(/balance change -1005000 lamports\s+fee 5000/);
    const approved = await cli('approvals', 'approve', id!);
    expect(approved.code).toBe(0);
    expect((await pending).outcome).toBe('confirmed');
    const again = await cli('approvals', 'reject', id!);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/is approved; it can no longer be rejected/);
  });

  it('halts and resumes a key', async () => {
    const halted = await cli('halt', 'alpha', '--reason', 'operator test');
    expect(JSON.parse(halted.stdout).halted[0]).toMatchObject({
      key: 'alpha',
      by: 'operator',
      reason: 'operator test',
    });
    const refused = await run(BIN.signer, ['--config', config, 'sign', '-'], {
      input: JSON.stringify(w.transfer('alpha', 1_000_000)),
    });
    expect(refused.code).toBe(10);
    expect(JSON.parse(refused.stdout).failed_check).toBe('halted');
    expect((await cli('resume', 'alpha')).stderr).toMatch(/resumed alpha/);
    const after = await run(BIN.signer, ['--config', config, 'sign', '-'], {
      input: JSON.stringify(w.transfer('alpha', 1_000_000)),
    });
    expect(after.code).toBe(0);
  });

  it('creates keys and tokens without printing secrets, and builds a funding payload', async () => {
    const keyDir = path.join(w.dir, 'newkeys');
    const cfg2 = path.join(w.dir, 'c2.yaml');
    writeYaml(cfg2, { ...worldConfigDocument(w), key_dir: keyDir });
    const made = await run(BIN.signer, ['--config', cfg2, 'key', 'new', 'fresh', '--class', 'session']);
    expect(made.stdout.trim()).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    const secret = JSON.parse(fs.readFileSync(path.join(keyDir, 'fresh.json'), 'utf8')) as number[];
    expect(made.stdout + made.stderr).not.toContain(JSON.stringify(secret).slice(0, 20));
    const tokenFile = path.join(w.dir, 'agent.token');
    const token = await cli('token', 'new', 'agent', '--out', tokenFile);
    expect(token.stdout.trim()).toMatch(/^[0-9a-f]{64}$/);
    expect(fs.statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect(token.stdout + token.stderr).not.toContain(fs.readFileSync(tokenFile, 'utf8'));
    const fund = await cli('key', 'fund', 'alpha', '--zink', '0.5', '--from', 'wallet');
    expect(JSON.parse(fund.stdout)).toMatchObject({ version: 1, transaction: { fee_payer: w.keys.wallet!.pubkey } });
    const show = await cli('key', 'show', 'alpha');
    expect(show.stdout).toMatch(
      /^name: alpha\npubkey: \S+\nclass: session\napproval: auto\nprofile: -\nkey file: ok\nbalance: \d+ lamports/,
    );
  });
});
