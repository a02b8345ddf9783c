/**
 * The operator CLI as an operator runs it: the built binary against a real chain, key files and ledger.
 */
import fs from 'node:fs';
import path from 'node:path';
import { approvalId, until } from '../support/async';
import { assertBuilt, BIN, run, writeYaml } from '../support/cli';
import { makeWorld, worldConfigDocument, type World } from '../support/world';
import { FORMS, usageOf } from '../../src/cli/commands';
import type { SignProgress } from '../../src/signer/types';

/** Characters that could drive a terminal or reorder a line: never printed raw. */
// eslint-disable-next-line no-control-regex -- the tests look for raw control characters
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/;

type Json = Record<string, unknown>;
const parsed = (text: string): Json => JSON.parse(text) as Json;

describe('sa-forge-signer (operator CLI)', () => {
  let w: World;
  let config: string;
  const cli = (...args: string[]) => run(BIN.signer, ['--config', config, ...args]);

  beforeAll(async () => {
    assertBuilt(BIN.signer);
    w = await makeWorld({
      keys: { alpha: {}, wallet: { class: 'wallet', approval: 'confirm', sign_messages: true } },
      // The CLI runs as its own processes while a sign waits for them (an approval, a stalled confirmation):
      // the sign's own deadlines must outlast a process start on a loaded machine.
      timings: { approval_timeout_ms: 20_000, confirm_deadline_ms: 120_000 },
    });
    config = path.join(w.dir, 'config.yaml');
    writeYaml(config, worldConfigDocument(w));
  });
  afterAll(() => w.close());

  it('answers --help and --version', async () => {
    const help = await run(BIN.signer, ['--help']);
    expect(help.code).toBe(0);
    // The list of commands is the command table's: each form's usage, then what it does.
    const flat = help.stdout.replace(/\s+/g, ' ');
    const missing = FORMS.filter((f) => !flat.includes(` ${f.usage} ${f.does}`)).map((f) => f.name);
    expect(missing).toEqual([]);
    expect(help.stdout).toMatch(/^ {2}approvals reject ID \[--as NAME\] +vote against one/m);
    expect(help.stdout).toMatch(/\[--account ADDRESS\] \[--feed-id HEX\]\n {40}on the running embedded chain/);
    const version = await run(BIN.signer, ['--version']);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('check prints the report on stdout only and exits by outcome', async () => {
    const ok = path.join(w.dir, 'ok.json');
    fs.writeFileSync(ok, JSON.stringify(w.transfer('alpha', 1_000_000)));
    const r = await cli('check', ok);
    expect(r.code).toBe(0);
    expect(parsed(r.stdout).outcome).toBe('ok');
    const refused = await run(BIN.signer, ['--config', config, 'check', '--key', 'wallet', '-'], {
      input: JSON.stringify(w.transfer('alpha', 1)),
    });
    expect(refused.code).toBe(10);
    expect(parsed(refused.stdout).failed_check).toBe('fee_payer');
    const failing = await run(BIN.signer, ['--config', config, 'check', '-'], {
      input: JSON.stringify(w.transfer('alpha', 900_000_000_000)),
    });
    expect(failing.code).toBe(11);
  });

  it('reports a bad payload as an error with exit 1 and no report', async () => {
    const r = await run(BIN.signer, ['--config', config, 'check', '-'], { input: '{"version": 3}' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe(
      'error: unsupported payload version 3 (versions 1 and 2, and "message", are accepted)',
    );
    const dir = await cli('check', w.dir);
    expect(dir.stderr).toMatch(/is not a regular file/);
  });

  it('signs, shows progress on stderr, and the audit verifies in the store and in an export', async () => {
    const file = path.join(w.dir, 'sign.json');
    fs.writeFileSync(file, JSON.stringify(w.transfer('alpha', 2_000_000)));
    const r = await cli('sign', '--intent', 'pay', file);
    expect(r.code).toBe(0);
    expect(parsed(r.stdout).outcome).toBe('confirmed');
    expect(r.stderr).toMatch(/sent \S+/);
    expect((await cli('audit', 'verify')).stdout.trim()).toMatch(/^ok: \d+ entries$/);
    const tail = await cli('audit', 'tail', '-n', '2', '--json');
    expect(
      tail.stdout
        .trim()
        .split('\n')
        .map((l) => parsed(l).command),
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
    await approvalId(events);
    const list = await cli('approvals', 'list');
    const id = /^(\S+)\s+key wallet/m.exec(list.stdout)?.[1];
    expect(id).toBeDefined();
    expect(list.stdout).toContain('balance change: -1005000 lamports (-0.001005 SOL)');
    expect(list.stdout).toContain(`fee: 5000 lamports (0.000005 SOL), paid by ${w.keys.wallet!.pubkey}`);
    expect(list.stdout).toContain(`SOL to ${w.keys.wallet!.destination}: +1000000 lamports (0.001 SOL)`);
    expect(list.stdout).toContain('programs: 11111111111111111111111111111111');
    const listed = JSON.parse((await cli('approvals', 'list', '--json')).stdout) as { id: string; fee: number }[];
    expect(listed).toEqual([expect.objectContaining({ id, fee: 5000, balance_change: -1005000 })]);
    const approved = await cli('approvals', 'approve', id!);
    expect(approved.code).toBe(0);
    expect((await pending).outcome).toBe('confirmed');
    const again = await cli('approvals', 'reject', id!);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/is approved; it can no longer be rejected/);
  });

  it('halts a key while one of its transactions is still being confirmed, and exits', async () => {
    // The world's engine has a sent transaction with no final entry yet: the command must record the halt and
    // end, leaving that transaction to the engine that sent it.
    w.localnet.faults.stallConfirmations(true);
    const events: SignProgress[] = [];
    const inFlight = w.engine.sign({
      payload: w.transfer('alpha', 1_000_000),
      principal: w.operator,
      onProgress: (p) => events.push(p),
    });
    try {
      await until(() => events.some((e) => e.stage === 'sent'), 'the transaction to be sent');
      const halted = await cli('halt', 'alpha', '--reason', 'stop while one is in flight');
      expect(halted.code).toBe(0);
      expect(parsed(halted.stdout)).toMatchObject({ halted: [{ key: 'alpha', by: 'operator' }], not_recorded: [] });
    } finally {
      w.localnet.faults.stallConfirmations(false);
    }
    expect((await inFlight).outcome).toBe('confirmed');
    expect((await cli('resume', 'alpha')).stderr).toMatch(/resumed alpha/);
  });

  it('halts and resumes a key', async () => {
    const halted = await cli('halt', 'alpha', '--reason', 'operator test');
    expect((JSON.parse(halted.stdout) as { halted: Json[] }).halted[0]).toMatchObject({
      key: 'alpha',
      by: 'operator',
      reason: 'operator test',
    });
    const refused = await run(BIN.signer, ['--config', config, 'sign', '-'], {
      input: JSON.stringify(w.transfer('alpha', 1_000_000)),
    });
    expect(refused.code).toBe(10);
    expect(parsed(refused.stdout).failed_check).toBe('halted');
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
    const show = await cli('key', 'show', 'alpha');
    expect(show.stdout).toMatch(
      /^name: alpha\npubkey: \S+\nclass: session\napproval: auto\nprofile: -\nstore: file \(ok\)\nkey: ok\nbalance: \d+ lamports/,
    );
  });

  it('refuses unknown commands, subcommands and options, naming the nearest one', async () => {
    const cmd = await cli('aprovals', 'list');
    expect(cmd.code).toBe(1);
    expect(cmd.stderr).toMatch(/unknown command "aprovals"; did you mean "approvals"\?/);
    const sub = await cli('key', 'shwo', 'alpha');
    expect(sub.stderr).toMatch(/unknown key command "shwo"; did you mean "key show"\?/);
    const opt = await cli('audit', 'tail', '--jsno');
    expect(opt.stderr).toMatch(/unknown option --jsno; did you mean --json\?/);
    const misplaced = await cli('key', 'show', 'alpha', '--zink', '1');
    expect(misplaced.stderr).toMatch(/key show does not take --zink \(it takes --json\)/);
    const key = await cli('key', 'show', 'alpah');
    expect(key.stderr).toMatch(/no key "alpah" in the config; did you mean "alpha"\?/);
    const token = await cli('token', 'new', 'Agent One', '--out', path.join(w.dir, 'never.token'));
    expect(token.stderr).toMatch(/token name "Agent One": use 1 to 64 lowercase letters/);
    expect(fs.existsSync(path.join(w.dir, 'never.token'))).toBe(false);
    // A sub-command's usage error prints the table's usage line, with every option its parser takes.
    const price = await cli('localnet', 'price', 'set', 'SOL');
    expect(price.stderr).toBe(`error: ${usageOf('localnet price set')}\n`);
  });

  it('refuses a SIGNER_* variable that sets nothing instead of falling back to the default', async () => {
    const r = await run(BIN.signer, ['--config', config, 'key', 'list'], {
      env: { SIGNER_ALLOWED_HOST: 'signer.example' },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /SIGNER_ALLOWED_HOST: no setting reads this variable; did you mean SIGNER_ALLOWED_HOSTS\?/,
    );
    const fine = await run(BIN.signer, ['--config', config, 'key', 'list'], {
      env: { SIGNER_ALLOWED_HOSTS: 'signer.example', SIGNER_URL: 'http://127.0.0.1:1/mcp' },
    });
    expect(fine.code).toBe(0);
  });

  it('lists keys, and every read command has a --json form', async () => {
    const list = await cli('key', 'list');
    expect(list.stdout).toMatch(
      /^NAME\s+STORE\s+CLASS\s+APPROVAL\s+PUBKEY\s+HALTED\nalpha\s+file\s+session\s+auto\s+\S+\s+-\nwallet\s+file\s+wallet\s+confirm/,
    );
    const json = JSON.parse((await cli('key', 'list', '--json')).stdout) as { name: string; halted: unknown }[];
    expect(json.map((k) => [k.name, k.halted])).toEqual([
      ['alpha', null],
      ['wallet', null],
    ]);
    const show = JSON.parse((await cli('key', 'show', 'alpha', '--json')).stdout) as Record<string, unknown>;
    expect(show).toMatchObject({ name: 'alpha', key_file: 'ok', halted: null, sign_messages: false });
    expect(typeof show.balance_lamports).toBe('number');
    const verify = JSON.parse((await cli('audit', 'verify', '--json')).stdout) as { ok: boolean; entries: number };
    expect(verify.ok).toBe(true);
    expect(verify.entries).toBeGreaterThan(0);
    expect(JSON.parse((await cli('approvals', 'list', '--json')).stdout)).toEqual([]);
  });

  it('funds a key on the embedded chain directly, and builds a payload on any other cluster', async () => {
    const before = JSON.parse((await cli('key', 'show', 'alpha', '--json')).stdout) as { balance_lamports: number };
    const funded = await cli('key', 'fund', 'alpha', '--zink', '0.5');
    expect(funded.code).toBe(0);
    expect(funded.stderr).toMatch(/funded alpha \(\S+\) with 500000000 lamports \(0.5 SOL\) on the embedded chain/);
    const after = JSON.parse((await cli('key', 'show', 'alpha', '--json')).stdout) as { balance_lamports: number };
    expect(after.balance_lamports - before.balance_lamports).toBe(500_000_000);
    const remote = path.join(w.dir, 'remote.yaml');
    writeYaml(remote, {
      ...worldConfigDocument(w),
      cluster: 'elsewhere',
      clusters: { elsewhere: { genesis_hash: w.keys.alpha!.pubkey, rpc_url: w.config.cluster.rpc_url } },
    });
    const payload = await run(BIN.signer, [
      '--config',
      remote,
      'key',
      'fund',
      'alpha',
      '--zink',
      '0.5',
      '--from',
      'wallet',
    ]);
    expect(JSON.parse(payload.stdout)).toMatchObject({ version: 1, transaction: { fee_payer: w.keys.wallet!.pubkey } });
  });

  it('says the embedded chain runs inside the service when check cannot reach it', async () => {
    const down = path.join(w.dir, 'down.yaml');
    writeYaml(down, { ...worldConfigDocument(w), rpc_url: 'http://127.0.0.1:1' });
    const r = await run(BIN.signer, ['--config', down, 'check', '-'], {
      input: JSON.stringify(w.transfer('alpha', 1)),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/runs inside the service: start it in another terminal with `npm start`/);
  });

  it('destroys a key that may hold lamports only with --force or its name typed', async () => {
    const keyDir = path.join(w.dir, 'doomed-keys');
    const made = await run(BIN.signer, ['--config', config, 'key', 'new', 'doomed', '--class', 'session']);
    expect(made.code).toBe(0);
    const doomedPub = made.stdout.trim();
    const emptyPub = (
      await run(BIN.signer, ['--config', config, 'key', 'new', 'empty', '--class', 'session'])
    ).stdout.trim();
    // `key new` put both files in the world's key_dir; they move to a folder of their own.
    fs.mkdirSync(keyDir, { mode: 0o700 });
    for (const n of ['doomed', 'empty'])
      fs.renameSync(path.join(w.config.key_dir, `${n}.json`), path.join(keyDir, `${n}.json`));
    const doc = (rpc: string) => ({
      ...worldConfigDocument(w),
      rpc_url: rpc,
      key_dir: keyDir,
      keys: {
        doomed: { class: 'session', pubkey: doomedPub },
        empty: { class: 'session', pubkey: emptyPub },
        gone: { class: 'session', pubkey: w.keys.alpha!.pubkey },
      },
    });
    const cfg = path.join(w.dir, 'doomed.yaml');
    writeYaml(cfg, doc(w.config.cluster.rpc_url));
    const keyFile = path.join(keyDir, 'doomed.json');
    expect((await run(BIN.signer, ['--config', cfg, 'key', 'fund', 'doomed', '--zink', '0.001'])).code).toBe(0);

    const noAnswer = await run(BIN.signer, ['--config', cfg, 'key', 'destroy', 'doomed']);
    expect(noAnswer.code).toBe(1);
    expect(noAnswer.stderr).toMatch(/still holds 1000000 lamports \(0.001 SOL\)/);
    expect(noAnswer.stderr).toMatch(/not destroyed/);
    const wrong = await run(BIN.signer, ['--config', cfg, 'key', 'destroy', 'doomed'], { input: 'empty\n' });
    expect(wrong.code).toBe(1);
    expect(fs.existsSync(keyFile)).toBe(true);
    const typed = await run(BIN.signer, ['--config', cfg, 'key', 'destroy', 'doomed'], { input: 'doomed\n' });
    expect(typed.code).toBe(0);
    expect(fs.existsSync(keyFile)).toBe(false);

    // A balance known to be zero needs no confirmation.
    const empty = await run(BIN.signer, ['--config', cfg, 'key', 'destroy', 'empty']);
    expect(empty.code).toBe(0);
    expect(fs.existsSync(path.join(keyDir, 'empty.json'))).toBe(false);

    // A balance that cannot be read is treated as possibly non-zero.
    fs.copyFileSync(path.join(w.config.key_dir, 'alpha.json'), path.join(keyDir, 'gone.json'));
    fs.chmodSync(path.join(keyDir, 'gone.json'), 0o600);
    const downCfg = path.join(w.dir, 'doomed-down.yaml');
    writeYaml(downCfg, doc('http://127.0.0.1:1'));
    const unknown = await run(BIN.signer, ['--config', downCfg, 'key', 'destroy', 'gone']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/has a balance that cannot be read/);
    expect(fs.existsSync(path.join(keyDir, 'gone.json'))).toBe(true);
    const forced = await run(BIN.signer, ['--config', downCfg, 'key', 'destroy', 'gone', '--force']);
    expect(forced.code).toBe(0);
    expect(fs.existsSync(path.join(keyDir, 'gone.json'))).toBe(false);
  });

  it("never lets an agent's text drive the operator's terminal: approvals, halts and the audit tail", async () => {
    // An agent-built summary that tries to clear the line, retitle the window, recolour with an 8-bit CSI,
    // reverse the text and forge a line of `approvals list` claiming a tiny amount.
    const forged = 'zz9forged  key wallet  balance change: -1 lamports (-0.000000001 SOL)';
    const hostile = `pay 1 lamport\x1b[2K\r\x1b]0;owned\x07\u009b31m\n${forged}\u202e\u200b`;
    const events: SignProgress[] = [];
    const pending = w.engine.sign({
      payload: w.transfer('wallet', 40_000_000, hostile),
      principal: w.operator,
      onProgress: (e) => events.push(e),
    });
    await approvalId(events);
    const list = await cli('approvals', 'list');
    expect(list.stdout).not.toMatch(RAW);
    expect(list.stdout.split('\n').some((line) => line.startsWith('zz9forged'))).toBe(false);
    expect(list.stdout).toContain('pay 1 lamport\\x1b[2K\\r\\x1b]0;owned\\x07\\x9b31m\\nzz9forged');
    expect(list.stdout).toContain('balance change: -40005000 lamports (-0.040005 SOL)');
    const asJson = await cli('approvals', 'list', '--json');
    expect(asJson.stdout).not.toMatch(RAW);
    expect((JSON.parse(asJson.stdout) as { summary: string }[])[0]?.summary).toBe(hostile);
    const id = /^(\S+)\s+key wallet/m.exec(list.stdout)?.[1];
    expect((await cli('approvals', 'reject', id!)).code).toBe(0);
    expect((await pending).outcome).toBe('refused');

    await w.engine.halt({
      key: 'alpha',
      reason: hostile,
      principal: { kind: 'token', name: 'agent', keys: ['alpha'] },
    });
    const show = await cli('key', 'show', 'alpha');
    expect(show.stdout).not.toMatch(RAW);
    expect(show.stdout).toMatch(/^halted: yes, by token:agent at \S+: pay 1 lamport\\x1b/m);
    expect(show.stdout.split('\n').some((line) => line.startsWith('zz9forged'))).toBe(false);
    const tail = await cli('audit', 'tail', '-n', '3');
    expect(tail.stdout).not.toMatch(RAW);
    expect(tail.stdout.split('\n').some((line) => line.startsWith('zz9forged'))).toBe(false);
    expect(tail.stdout).toMatch(/ halt {2}key alpha {2}halted/);
    expect((await cli('resume', 'alpha')).code).toBe(0);
  });

  it("shows a message's text escaped in approvals list and the audit tail, and audit verify accepts its entry", async () => {
    // A sign-in text that tries to clear the screen, retitle the window and forge an approval line of its own.
    const forged = 'zz9forged  key wallet  balance change: -1 lamports (-0.000000001 SOL)';
    const text = `example.com wants you to sign in\x1b[2J\x1b]0;owned\x07\u009b31m\n${forged}\u202e`;
    const events: SignProgress[] = [];
    const pending = w.engine.sign({
      payload: { version: 'message', format: 'text', message: text, summary: 'log in' },
      key: 'wallet',
      principal: w.operator,
      onProgress: (e) => events.push(e),
    });
    await approvalId(events);
    const list = await cli('approvals', 'list');
    expect(list.stdout).not.toMatch(RAW);
    expect(list.stdout.split('\n').some((line) => line.startsWith('zz9forged'))).toBe(false);
    expect(list.stdout).toContain(
      'message (exactly the text signed, escaped): example.com wants you to sign in\\x1b[2J\\x1b]0;owned\\x07\\x9b31m\\nzz9forged',
    );
    expect(list.stdout).toContain('\\u202e');
    expect(list.stdout).toContain('signs a message, not a transaction');
    expect(list.stdout).toContain('    what it is: sign-in text (UTF-8)\n');
    const id = /^(\S+)\s+key wallet/m.exec(list.stdout)?.[1];
    expect((await cli('approvals', 'approve', id!)).code).toBe(0);
    const report = await pending;
    expect(report.outcome).toBe('signed');

    const tail = await cli('audit', 'tail', '-n', '1');
    expect(tail.stdout).not.toMatch(RAW);
    expect(tail.stdout).toMatch(/ sign-message {2}key wallet {2}signed /);
    expect(tail.stdout).toContain(report.signature!);
    expect(tail.stdout).toContain('text: example.com wants you to sign in\\x1b[2J');
    const verify = await cli('audit', 'verify');
    expect(verify.code).toBe(0);
  });
});
