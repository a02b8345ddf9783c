/**
 * README.md's "Caps in dollars", run exactly as it is written, with real processes from a fresh folder (what a
 * clone's `npm start` sees): the embedded default starts, the README's YAML line goes under keys.demo in
 * var/local/config.yaml, and every command of its shell block runs in order, as written (`npx sa-forge-signer`
 * is the built CLI). Each command's comment in the README says what it prints; the test checks that the output says
 * it too, and the figures behind it: two $4.00 signs under $5.00 a day, the second refused with nothing sent. The
 * only departures are the ports (SIGNER_LISTEN, SIGNER_METRICS_LISTEN, SIGNER_OPERATOR_LISTEN, SIGNER_RPC_URL).
 *
 * Before the README's commands it also checks what the README says of `npm start`: SOL is priced at $150.00 from
 * the start, and the price stays fresh while it runs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSolanaRpc } from '@solana/kit';
import YAML from 'yaml';
import { killOnExit, stopChild } from '../support/children';
import { BIN, ROOT, assertBuilt, run, waitForOutput, type RunResult } from '../support/cli';
import { freePort } from '../support/ports';
import { waitFor } from '../relay/live-service';
import { balanceOf } from './kit-balance';

/** The README's section: its YAML block and its shell commands with their comments. */
function readmeSection(): { yaml: string; commands: { args: string[]; says: string }[] } {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const at = readme.indexOf('### Caps in dollars');
  if (at < 0) throw new Error('README.md has no "### Caps in dollars" section');
  const section = readme.slice(at, readme.indexOf('\n## ', at));
  const yaml = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
  const sh = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (yaml === undefined || sh === undefined) throw new Error('the section needs a yaml and a sh block');
  const commands = sh
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line) => {
      const [command = '', says = ''] = line.split(/\s+#\s+/, 2);
      const words = command.trim().split(/\s+/);
      if (words[0] !== 'npx' || words[1] !== 'sa-forge-signer') throw new Error(`not a CLI command: ${line}`);
      return { args: words.slice(2), says };
    });
  return { yaml, commands };
}

let work: string;
let env: NodeJS.ProcessEnv;
let service: ChildProcess;
let demoPubkey: string;

const configFile = (): string => path.join(work, 'var/local/config.yaml');
const cli = (args: string[]): Promise<RunResult> => run(BIN.signer, args, { cwd: work, env });

beforeAll(async () => {
  assertBuilt(BIN.serve, BIN.signer);
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'usd-readme-'));
  env = {
    SIGNER_LISTEN: '127.0.0.1:0',
    SIGNER_METRICS_LISTEN: '127.0.0.1:0',
    SIGNER_OPERATOR_LISTEN: '127.0.0.1:0',
    SIGNER_RPC_URL: `http://127.0.0.1:${String(await freePort())}`,
    SIGNER_LOG_PRETTY: '0',
  };
  // `npm start`: the build is done; what it runs is the service with --local, in this folder.
  service = spawn(process.execPath, [BIN.serve, '--local'], { cwd: work, env: { ...process.env, ...env } });
  killOnExit(service);
  const demoDone = waitForOutput(service, /demo: sign → \w+/, 'stdout', 60_000);
  const banner = await waitForOutput(service, /it may send to \S+/, 'stderr', 60_000);
  demoPubkey = /demo key "demo": (\S+);/.exec(banner)![1]!;
  await demoDone;
}, 90_000);

afterAll(async () => {
  await stopChild(service, 'SIGTERM');
  fs.rmSync(work, { recursive: true, force: true });
});

test('npm start prices SOL at $150.00 in the account its config names, and keeps it fresh', async () => {
  const config = YAML.parse(fs.readFileSync(configFile(), 'utf8')) as { prices: { feeds: { account: string }[] } };
  const [feed] = config.prices.feeds;
  const rpc = createSolanaRpc(env.SIGNER_RPC_URL!);
  const publishTime = async (): Promise<bigint> => {
    const { value } = await rpc.getAccountInfo(feed!.account as never, { encoding: 'base64' }).send();
    if (value === null) throw new Error('no SOL price account on the embedded chain');
    const data = Buffer.from(value.data[0], 'base64');
    // PriceUpdateV2 (src/pricing/price-update.ts): 8 discriminator, 32 write authority, 1 Full, 32 feed id, then
    // price i64, conf u64, exponent i32, publish_time i64.
    const at = 8 + 32 + 1 + 32;
    expect(data.readBigInt64LE(at)).toBe(15_000_000_000n); // $150.00 at exponent -8
    expect(data.readInt32LE(at + 16)).toBe(-8);
    return data.readBigInt64LE(at + 20);
  };
  const first = await publishTime();
  // Published again as the chain's clock moves, as Pyth's sponsored feeds are pushed: never stale while it runs.
  await waitFor(async () => (await publishTime()) > first, 10_000, 'the SOL price published again');
});

test("the README's dollar cap: two $4.00 signs under $5.00 a day, the second refused and nothing sent", async () => {
  const { yaml, commands } = readmeSection();
  const doc = YAML.parse(fs.readFileSync(configFile(), 'utf8')) as { keys: { demo: Record<string, unknown> } };
  Object.assign(doc.keys.demo, YAML.parse(yaml) as Record<string, unknown>);
  fs.writeFileSync(configFile(), YAML.stringify(doc), { mode: 0o600 });

  const results: RunResult[] = [];
  let beforeSecond = 0;
  for (const [i, c] of commands.entries()) {
    if (i === 4) beforeSecond = await balanceOf(createSolanaRpc(env.SIGNER_RPC_URL!), demoPubkey);
    results.push(await cli(c.args));
  }
  const [reload, price, transfer, first, second, shown] = results;
  expect(commands.map((c) => c.args.slice(0, 2).join(' '))).toEqual([
    'reload',
    'localnet price',
    'localnet transfer',
    'sign four.json',
    'sign four.json',
    'key show',
  ]);

  expect(reload!.code).toBe(0);
  expect(reload!.stdout).toContain(commands[0]!.says);
  expect(price!.code).toBe(0);
  expect(price!.stderr).toMatch(/^SOL priced at 100 ± 0 dollars/m);
  expect(transfer!.code).toBe(0);
  expect(fs.existsSync(path.join(work, 'four.json'))).toBe(true);

  expect(first!.code).toBe(0);
  expect(JSON.parse(first!.stdout)).toMatchObject({
    outcome: 'confirmed',
    usd_value: '4.00',
    remaining_daily_usd: '1.00',
    balance_change: -40_000_000,
  });
  for (const said of commands[3]!.says.split(', ').slice(1)) expect(first!.stdout).toContain(said);

  expect(second!.code).toBe(10);
  const refused = JSON.parse(second!.stdout) as Record<string, unknown>;
  expect(refused).toMatchObject({
    outcome: 'refused',
    failed_check: 'limits',
    reason: 'usd_per_day_cap',
    signature: null,
    figures: { usd_spent: '4.00', usd_requested: '4.00', usd_cap: '5.00' },
  });
  expect(second!.stdout).toContain('"reason": "usd_per_day_cap"');
  expect(refused.detail).toContain(commands[4]!.says.split('"usd_per_day_cap": ')[1]);
  // Nothing sent: the key's balance is what the first sign left.
  expect(await balanceOf(createSolanaRpc(env.SIGNER_RPC_URL!), demoPubkey)).toBe(beforeSecond);

  expect(shown!.code).toBe(0);
  const [head, tail] = commands[5]!.says.split(', ...; ');
  expect(shown!.stdout).toContain(head);
  expect(shown!.stdout).toMatch(new RegExp(`^usd caps: .*; ${tail!.replace(/[$.]/g, '\\$&')}$`, 'm'));
}, 120_000);
