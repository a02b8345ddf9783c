/**
 * examples/x402-pay, run as an agent author would run it: a real `sa-forge-signer-serve` process on the embedded
 * chain, the official x402 packages unchanged (a resource server with @x402/express, a local facilitator with
 * its own key, the agent's @x402/fetch), and the agent's kit signer the service's (`sa-forge-signer/kit`). The
 * key's policy caps the example token per transaction and per day; the facilitator pays every fee.
 *
 * The embedded chain is labelled with devnet's network id inside the example (@x402/svm refuses any other);
 * every RPC URL points at the embedded chain.
 */
import path from 'node:path';
import { address, createSolanaRpc } from '@solana/kit';
import { ROOT, run } from '../support/cli';
import { LiveService, waitFor } from '../relay/live-service';
import { balanceOf } from './kit-balance';

const EXAMPLE = path.join(ROOT, 'examples/x402-pay');
/** Base units of the 6-decimals example token: 0.03 and 0.06 of a token. */
const CHEAP = 30_000;
const DEAR = 60_000;
const PER_TX = 50_000;
/** Three cheap payments fit (90 000); a fourth, or the three plus a pending one, do not. */
const PER_DAY = 100_000;

interface Setup {
  mint: string;
  merchant: string;
  agentAta: string;
  merchantAta: string;
}
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

let service: LiveService;
let setup: Setup;
let rpc: ReturnType<typeof createSolanaRpc>;

beforeAll(async () => {
  service = await LiveService.start({
    keys: { demo: {} },
    // The token and the accounts exist before the signer starts, so its config can name them.
    prepare: async (localnet, keys) => {
      const r = await run(path.join(EXAMPLE, 'setup.mjs'), [], {
        env: { RPC_URL: localnet.url, AGENT: keys.demo!.pubkey, AGENT_AMOUNT: '1000000' },
      });
      if (r.code !== 0) throw new Error(`setup.mjs failed (${r.code}): ${r.stderr}`);
      setup = JSON.parse(r.stdout.trim()) as Setup;
      return {
        demo: {
          // Memo, ComputeBudget and the token programs need no listing: every key may call them.
          tokens: [
            {
              mint: setup.mint,
              program: 'spl-token',
              per_tx: PER_TX,
              per_day: String(PER_DAY),
              destinations: [setup.merchant],
            },
          ],
        },
      };
    },
  });
  rpc = createSolanaRpc(service.localnet.url);
}, 60_000);

afterAll(async () => {
  // Unset when the service could not start.
  await (service as LiveService | undefined)?.close();
});

async function pay(steps: string[]): Promise<{ facilitator: string; steps: Step[] }> {
  const r = await run(path.join(EXAMPLE, 'pay.mjs'), [], {
    env: {
      SIGNER_URL: service.url,
      SIGNER_TOKEN_FILE: service.tokenFile,
      SIGNER_KEY: 'demo',
      RPC_URL: service.localnet.url,
      MINT: setup.mint,
      MERCHANT: setup.merchant,
      PRICE_CHEAP: String(CHEAP),
      PRICE_DEAR: String(DEAR),
      STEPS: steps.join(','),
    },
  });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const [head, ...rest] = r.stdout.trim().split('\n');
  return {
    facilitator: (JSON.parse(head!) as { facilitator: string }).facilitator,
    steps: rest.map((l) => JSON.parse(l) as Step),
  };
}

async function tokens(account: string): Promise<bigint> {
  const { value } = await rpc.getTokenAccountBalance(address(account), { commitment: 'confirmed' }).send();
  return BigInt(value.amount);
}

/** The final `sign` entries of the audit log, through the operator's CLI. */
async function finals(): Promise<AuditRow[]> {
  const r = await service.cli(['audit', 'tail', '-n', '200', '--json']);
  if (r.code !== 0) throw new Error(`audit tail failed (${r.code}): ${r.stderr}`);
  // One JSON entry per line.
  const rows = r.stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as AuditRow);
  return rows.filter((e) => e.command === 'sign');
}

test('a payment signed but never sent expires: signed_expired, and its reservation no longer counts', async () => {
  const { steps } = await pay(['drop']);
  const dropped = steps[0]!;
  expect(dropped.error).toBeNull();
  expect(dropped.key_signature).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
  // Blocks advance on their own (every 20 ms): the blockhash expires after 150 of them.
  let final: AuditRow | undefined;
  await waitFor(
    async () => {
      final = (await finals()).find((e) => e.signature === dropped.key_signature);
      return final !== undefined;
    },
    30_000,
    'the dropped payment’s final entry',
  );
  expect(final!.outcome).toBe('signed_expired');
}, 60_000);

test('three payments under the caps are paid; over per_tx and past per_day the signer refuses; the facilitator pays every fee', async () => {
  const keySol = await balanceOf(rpc, service.keys.demo!.pubkey);
  const merchantBefore = await tokens(setup.merchantAta);
  const agentBefore = await tokens(setup.agentAta);

  const { facilitator, steps } = await pay(['cheap', 'cheap', 'cheap', 'dear', 'cheap']);
  const [a, b, c, dear, fourth] = steps;

  // Three under the caps: 200 each (the expired payment above no longer holds any of per_day).
  for (const paid of [a, b, c]) {
    expect(paid).toMatchObject({ status: 200 });
    expect(paid!.transaction).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
  }
  expect(await tokens(setup.merchantAta)).toBe(merchantBefore + BigInt(3 * CHEAP));
  expect(await tokens(setup.agentAta)).toBe(agentBefore - BigInt(3 * CHEAP));

  // Over per_tx: refused by the signer before anything is signed; the agent's fetch error names the cap.
  expect(dear!.status).toBeNull();
  expect(dear!.error).toMatch(/per[_ -]?tx|per-transaction/i);
  // Past per_day: the fourth cheap payment would bring the day to 120 000 of 100 000.
  expect(fourth!.status).toBeNull();
  expect(fourth!.error).toMatch(/per[_ -]?day|daily/i);
  // Nothing more moved than the three payments.
  expect(await tokens(setup.merchantAta)).toBe(merchantBefore + BigInt(3 * CHEAP));

  // The key's SOL did not move: the facilitator paid every fee.
  expect(await balanceOf(rpc, service.keys.demo!.pubkey)).toBe(keySol);

  // Each payment is in the ledger as confirmed, under the key's signature, naming the facilitator's id and payer.
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
    expect(row!.signature).not.toBe(p!.transaction);
  }
}, 120_000);
