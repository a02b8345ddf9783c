/**
 * examples/x402-pay/README.md, followed literally with real processes from a fresh folder (what a clone's
 * `npm start` sees: no var/local yet): start the embedded default, `sa-forge-signer localnet mint --key demo`,
 * paste the policy it prints under keys.demo in var/local/config.yaml, `sa-forge-signer reload`, then pay.mjs
 * with MINT and MERCHANT. The only departures are the ports: the test sets SIGNER_LISTEN, SIGNER_METRICS_LISTEN,
 * SIGNER_OPERATOR_LISTEN, SIGNER_RPC_URL (service and CLI) and SIGNER_URL, RPC_URL (pay.mjs) to free ones instead of
 * the defaults.
 *
 * The official x402 packages run unchanged; the embedded chain is labelled with devnet's network id inside the
 * example (@x402/svm refuses any other), and every RPC URL points at the embedded chain.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { address, createSolanaRpc, getAddressEncoder, getProgramDerivedAddress } from '@solana/kit';
import YAML from 'yaml';
import { openLedger } from '../../src/ledger/open';
import { killOnExit, stopChild } from '../support/children';
import { BIN, ROOT, assertBuilt, run, waitForOutput, type RunResult } from '../support/cli';
import { waitFor } from '../relay/live-service';
import { balanceOf } from './kit-balance';
import { freePort } from '../support/ports';

const PAY = path.join(ROOT, 'examples/x402-pay/pay.mjs');
/** pay.mjs's prices and the caps `localnet mint` proposes, in base units of the 6-decimals token. */
const CHEAP = 30_000;

interface Step {
  step: string;
  status?: number | null;
  transaction?: string | null;
  error?: string | null;
  key_signature?: string | null;
}
interface AuditRow {
  command: string;
  outcome: string;
  signature: string | null;
  detail: string | null;
}

/** The folder `npm start` runs in (a fresh clone's): var/local/ is made here. */
let work: string;
let env: NodeJS.ProcessEnv;
let service: ChildProcess;
let mcpUrl: string;
let demoPubkey: string;
let destination: string;
let mint: string;
let rpc: ReturnType<typeof createSolanaRpc>;

const configFile = (): string => path.join(work, 'var/local/config.yaml');
/** `npx sa-forge-signer ARGS` in the same folder. */
const cli = (args: string[]): Promise<RunResult> => run(BIN.signer, args, { cwd: work, env });

async function pay(
  steps: string[],
): Promise<{ code: number | null; stderr: string; facilitator: string; steps: Step[] }> {
  const r = await run(PAY, [], {
    cwd: work,
    env: {
      ...env,
      SIGNER_URL: mcpUrl,
      RPC_URL: env.SIGNER_RPC_URL,
      MINT: mint,
      MERCHANT: destination,
      STEPS: steps.join(','),
    },
  });
  const [head, ...rest] = r.stdout.trim().split('\n');
  if (head === undefined || head === '') throw new Error(`pay.mjs printed nothing (${String(r.code)}): ${r.stderr}`);
  return {
    code: r.code,
    stderr: r.stderr,
    facilitator: (JSON.parse(head) as { facilitator: string }).facilitator,
    steps: rest.map((l) => JSON.parse(l) as Step),
  };
}

async function tokens(owner: string): Promise<bigint> {
  const [ata] = await getProgramDerivedAddress({
    programAddress: address('ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL'),
    seeds: [
      getAddressEncoder().encode(address(owner)),
      getAddressEncoder().encode(address('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA')),
      getAddressEncoder().encode(address(mint)),
    ],
  });
  const { value } = await rpc.getTokenAccountBalance(ata, { commitment: 'confirmed' }).send();
  return BigInt(value.amount);
}

/** The final `sign` entries of the audit log, through the operator's CLI. */
async function finals(): Promise<AuditRow[]> {
  const r = await cli(['audit', 'tail', '-n', '200', '--json']);
  if (r.code !== 0) throw new Error(`audit tail failed (${String(r.code)}): ${r.stderr}`);
  return r.stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as AuditRow)
    .filter((e) => e.command === 'sign');
}

/** The config as the operator edits it: the demo key's entry changed by `edit`. */
function editDemo(edit: (demo: Record<string, unknown>) => void): void {
  const doc = YAML.parse(fs.readFileSync(configFile(), 'utf8')) as { keys: { demo: Record<string, unknown> } };
  edit(doc.keys.demo);
  fs.writeFileSync(configFile(), YAML.stringify(doc), { mode: 0o600 });
}

beforeAll(async () => {
  assertBuilt(BIN.serve, BIN.signer);
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'x402-readme-'));
  env = {
    SIGNER_LISTEN: '127.0.0.1:0',
    SIGNER_METRICS_LISTEN: '127.0.0.1:0',
    SIGNER_OPERATOR_LISTEN: '127.0.0.1:0',
    SIGNER_RPC_URL: `http://127.0.0.1:${String(await freePort())}`,
    SIGNER_LOG_PRETTY: '0',
  };
  rpc = createSolanaRpc(env.SIGNER_RPC_URL!);
  // 1. `npm start`: the build is done; what it runs is the service with --local, in this folder.
  service = spawn(process.execPath, [BIN.serve, '--local'], { cwd: work, env: { ...process.env, ...env } });
  killOnExit(service);
  const demoDone = waitForOutput(service, /demo: sign → \w+/, 'stdout', 60_000);
  const banner = await waitForOutput(service, /it may send to \S+/, 'stderr', 60_000);
  mcpUrl = `http://${/serving on (\S+)/.exec(banner)![1]!}/mcp`;
  [, demoPubkey, destination] = /demo key "demo": (\S+); it may send to (\S+)/.exec(banner)! as unknown as [
    string,
    string,
    string,
  ];
  expect(banner).toContain(
    `embedded chain (Solana JSON-RPC, starts from genesis on every start): ${env.SIGNER_RPC_URL!}`,
  );
  await demoDone;
}, 90_000);

afterAll(async () => {
  await stopChild(service, 'SIGTERM');
  fs.rmSync(work, { recursive: true, force: true });
});

test('the README: mint, add the policy, reload, pay three times (200 each), the dear call refused over per_tx', async () => {
  // 2. localnet mint: the policy on stdout, the mint named on stderr.
  const minted = await cli(['localnet', 'mint', '--key', 'demo']);
  expect(minted.code).toBe(0);
  const snippet = YAML.parse(minted.stdout) as { tokens: { mint: string; destinations: string[] }[] };
  mint = snippet.tokens[0]!.mint;
  expect(minted.stderr).toContain(`mint ${mint} (6 decimals)`);
  expect(snippet.tokens[0]!.destinations).toEqual([destination]);
  expect(await tokens(demoPubkey)).toBe(1_000_000n);

  // 3. Paste it under keys.demo, then reload: no restart, the chain keeps the mint.
  editDemo((demo) => Object.assign(demo, snippet));
  const reloaded = await cli(['reload']);
  expect(reloaded.stdout).toContain(`applied: keys.demo.tokens +${mint}`);
  expect(reloaded.code).toBe(0);
  // key show says which policy the running service runs: this config's, now.
  const hash = /^policy (\w{64}) applied/.exec(reloaded.stdout)![1]!;
  const shown = await cli(['key', 'show', 'demo']);
  expect(shown.stdout).toContain(
    `policy hash: ${hash} (this config); the service (pid ${String(service.pid)}) runs it`,
  );

  // 4. Pay with the defaults.
  const keySol = await balanceOf(rpc, demoPubkey);
  const { code, stderr, facilitator, steps } = await pay(['cheap', 'cheap', 'cheap', 'dear']);
  const [a, b, c, dear] = steps;
  for (const paid of [a, b, c]) {
    expect(paid).toMatchObject({ step: 'cheap', status: 200 });
    expect(paid!.transaction).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
  }
  expect(dear!.status).toBeNull();
  expect(dear!.error).toMatch(/per[_ -]?tx|per-transaction/i);
  // Not every step was paid: pay.mjs says which on stderr and exits 3.
  expect(stderr).toMatch(/step dear was not paid: .*per-transaction cap/);
  expect(code).toBe(3);
  expect(await tokens(destination)).toBe(BigInt(3 * CHEAP));
  // The facilitator paid every fee.
  expect(await balanceOf(rpc, demoPubkey)).toBe(keySol);

  await waitFor(
    async () => {
      const rows = await finals();
      return [a, b, c].every((p) => rows.some((e) => e.detail?.includes(`landed as ${p!.transaction!}`)));
    },
    30_000,
    'the three payments’ final entries',
  );
  const rows = await finals();
  for (const p of [a, b, c]) {
    const row = rows.find((e) => e.detail?.includes(`landed as ${p!.transaction!}`));
    expect(row).toMatchObject({ outcome: 'confirmed' });
    expect(row!.detail).toContain(`fee paid by ${facilitator}`);
  }
}, 120_000);

test('past per_day the signer refuses the fourth cheap payment; nothing more moves', async () => {
  const { code, steps } = await pay(['cheap']);
  expect(steps[0]!.status).toBeNull();
  expect(steps[0]!.error).toMatch(/per[_ -]?day|daily/i);
  expect(code).toBe(3);
  expect(await tokens(destination)).toBe(BigInt(3 * CHEAP));
}, 60_000);

test('a reload with a typo changes nothing and says why; a raised per_day lets a dropped payment be signed, and it expires', async () => {
  editDemo((demo) => {
    const [t] = demo.tokens as Record<string, unknown>[];
    t!.per_dayy = 1_000_000;
  });
  const typo = await cli(['reload']);
  expect(typo.code).toBe(1);
  expect(typo.stdout).toMatch(/^reload refused, nothing changed: .*keys\.demo\.tokens\[0\]\.per_dayy: unknown key/);
  // Still the old per_day: the day is spent.
  expect((await pay(['cheap'])).steps[0]!.error).toMatch(/per[_ -]?day|daily/i);

  editDemo((demo) => {
    const [t] = demo.tokens as Record<string, unknown>[];
    delete t!.per_dayy;
    t!.per_day = 1_000_000;
  });
  const raised = await cli(['reload']);
  expect(raised.code).toBe(0);
  expect(raised.stdout).toContain(`keys.demo.tokens[${mint}].per_day 100000 → 1000000`);

  const { code, steps } = await pay(['drop']);
  expect(code).toBe(0);
  const dropped = steps[0]!;
  expect(dropped.error).toBeNull();
  // Recorded at once as an intent under the key's signature; the embedded chain makes a block every 400 ms, so
  // its blockhash expires about 60 s later (150 blocks) and the watcher writes the final entry.
  const intents = (await cli(['audit', 'tail', '-n', '20', '--json'])).stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as AuditRow);
  expect(intents.find((e) => e.signature === dropped.key_signature)).toMatchObject({
    command: 'sign-intent',
    outcome: 'pending',
  });
  // Watched through the ledger file itself (a CLI process per poll would load the machine for a minute).
  const ledger = await openLedger({ store: 'sqlite', path: path.join(work, 'var/local/state/ledger.sqlite') });
  let final: AuditRow | undefined;
  try {
    await waitFor(
      async () => {
        final = (await ledger.tail(50)).find((e) => e.command === 'sign' && e.signature === dropped.key_signature);
        return final !== undefined;
      },
      100_000,
      'the dropped payment’s final entry',
    );
  } finally {
    await ledger.close();
  }
  expect(final!.outcome).toBe('signed_expired');
}, 150_000);

test('pay.mjs says what to set and exits 2 when MINT is missing', async () => {
  const r = await run(PAY, [], { cwd: work, env: { ...env, SIGNER_URL: mcpUrl, MINT: '', MERCHANT: destination } });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('pay.mjs: set MINT: the mint `sa-forge-signer localnet mint --key demo` printed');
  expect(r.stdout).toBe('');
});
