/**
 * The two ways past the caps a security review found, tried again through the live service (MCP over HTTP, real
 * embedded chain). A JSON-RPC proxy in front of the chain (a stand-in for the network's timing) lands the key's own
 * sign-only transaction between a simulation and the read that follows it.
 *
 * - flood: an x402-style payment (the fee payer is the agent's) landed in one block with a thousand transactions
 *   naming the key read-only must end `confirmed`, and the next payment of the same size is refused by the cap;
 * - bank race: a transfer simulated before another transaction of the key lands and read after it must be judged
 *   on one bank and refused by the cap.
 * Either way the key's real on-chain spend stays within its cap ("keys past their cap" stays 0).
 * - approval binding: an allowed destination closes the token accounts an approved payment creates "if missing"
 *   while the operator decides; the sign answered over MCP after the approval is refused and the key spends nothing.
 */
import {
  AccountRole,
  address,
  createSolanaRpc,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  partiallySignTransaction,
  type Instruction,
  generateKeyPairSigner,
  type KeyPairSigner,
} from '@solana/kit';
import { finalEntry, until } from '../support/async';
import { randomAddress } from '../support/payloads';
import { rpcResult } from '../support/rpc';
import { keyDirSecrets } from '../support/secrets';
import { ifSetUp } from '../support/set-up';
import { balanceOf, makeWorld, type World } from '../support/world';
import { closingDestination, type ClosingDestination } from '../support/closing-destination';
import { fundedSigner, latestLifetime, transfer, wireTransaction, type Rpc } from '../signer/kit-transactions';
import { FaultProxy } from './support/fault-proxy';
import { send, toolCall, toolResult } from './support/mcp-client';
import { recordFigures, recordSecrets } from './support/record';
import { issueTokens, serveInProcess, type InProcessService } from './support/service';

const SUITE = 'cap-holes';
const SOL = 1_000_000_000;
const CAP = SOL;
const FLOOD = 1_000;

let w: World;
let proxy: FaultProxy;
let svc: InProcessService;
let token: string;
let rpc: Rpc;
let facilitator: KeyPairSigner;
let keyStart: number;
let closing: ClosingDestination;
const figures: Record<string, string | number> = {};

beforeAll(async () => {
  proxy = await FaultProxy.start();
  const destination = await generateKeyPairSigner();
  w = await makeWorld({
    keys: {
      alpha: { daily_lamport_cap: CAP },
      vault: { approval: 'confirm', approve_above_lamports: 5_000_000, transfer_to: [destination.address] },
    },
    rpcUrl: (url) => (proxy.setTarget(url), proxy.url()),
    timings: { approval_timeout_ms: 60_000 },
  });
  closing = await closingDestination(w.localnet, { signer: destination });
  recordSecrets(
    SUITE,
    keyDirSecrets(w.config.key_dir).map((s, i) => ({ label: `key file ${i}`, value: s })),
  );
  const issued = issueTokens(SUITE, [{ name: 'agent', keys: ['alpha', 'vault'] }]);
  token = issued.tokens[0]!.token;
  svc = await serveInProcess({ suite: SUITE, config: w.config, engine: w.engine, tokens: issued.config });
  rpc = createSolanaRpc(w.localnet.url);
  facilitator = await fundedSigner((a, l) => w.localnet.airdrop(a, l), 100 * SOL);
  w.localnet.airdrop(w.keys.alpha!.destination, SOL);
  keyStart = await balanceOf(w, w.keys.alpha!.pubkey);
});

afterAll(async () => {
  const world = ifSetUp(w);
  if (world) {
    const lost = keyStart - (await balanceOf(world, world.keys.alpha!.pubkey));
    figures.onchain_spent = lost;
    figures.keys_past_cap_onchain = lost > CAP ? 1 : 0;
    recordFigures(SUITE, figures);
  }
  await ifSetUp(svc)?.close();
  await ifSetUp(proxy)?.close();
  await world?.close();
});

async function sign(args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const answer = await send(svc.url, toolCall('sign', { key: 'alpha', ...args }, token));
  const { structured } = toolResult(answer);
  if (structured === null) throw new Error(`no report: ${answer.text.slice(0, 300)}`);
  return structured;
}

const finalOf = (signature: string, timeoutMs = 60_000) => finalEntry(w.ledger, signature, timeoutMs);

const v2 = (transaction: string) => ({ version: 2, transaction, summary: 'an x402 payment', warnings: [] });

async function payment(lamports: number): Promise<string> {
  const key = w.keys.alpha!;
  const ix = transfer(address(key.pubkey), key.destination, lamports);
  const accounts = (ix.accounts ?? []).map((a, i) => (i === 0 ? { ...a, role: AccountRole.WRITABLE_SIGNER } : a));
  return wireTransaction(facilitator.address, [{ ...ix, accounts }], { lifetime: await latestLifetime(rpc) });
}

it('flood: a payment hidden under a thousand transactions naming the key ends confirmed; the next is refused', async () => {
  const key = w.keys.alpha!;
  const paid = (6 * SOL) / 10;
  const signed = await sign({ payload: v2(await payment(paid)), mode: 'sign_only' });
  expect(signed.outcome).toBe('signed');
  const sink = randomAddress();
  w.localnet.airdrop(sink, SOL);
  w.localnet.faults.freezeHeight(true);
  try {
    const full = await partiallySignTransaction(
      [facilitator.keyPair],
      getTransactionDecoder().decode(Buffer.from(signed.signed_transaction as string, 'base64')),
    );
    await rpc.sendTransaction(getBase64EncodedWireTransaction(full), { encoding: 'base64' }).send();
    const lifetime = await latestLifetime(rpc);
    const wires: string[] = [];
    for (let i = 0; i < FLOOD; i++) {
      const ix: Instruction = transfer(facilitator, sink, 1 + i);
      const named = {
        ...ix,
        accounts: [...(ix.accounts ?? []), { address: address(key.pubkey), role: AccountRole.READONLY }],
      };
      wires.push(await wireTransaction(facilitator.address, [named], { lifetime }));
    }
    for (let at = 0; at < wires.length; at += 50)
      await Promise.all(
        wires.slice(at, at + 50).map((t) => rpcResult(w.localnet.url, 'sendTransaction', [t, { encoding: 'base64' }])),
      );
  } finally {
    w.localnet.faults.freezeHeight(false);
  }
  const final = await finalOf(signed.signature as string);
  expect(final).toMatchObject({ outcome: 'confirmed', balance_change: -paid });
  const next = await sign({ payload: v2(await payment(paid)), mode: 'sign_only' });
  expect(next).toMatchObject({ outcome: 'refused', failed_check: 'limits' });
  figures.flood_transactions = FLOOD;
  figures.flood_final = final.outcome;
  figures.flood_next = `${String(next.outcome)} (${String(next.failed_check)})`;
});

it('bank race: a transaction of the key landing between simulation and read does not hide a spend', async () => {
  // What is left of the cap after the flood case: 0.4 SOL. A sign-only transfer reserves 0.2 of it; the next,
  // 0.3, is simulated before the first lands and read after: judged on one bank it takes the key past the cap.
  const first = await sign({ payload: w.transfer('alpha', (2 * SOL) / 10, 'first, sign-only'), mode: 'sign_only' });
  expect(first.outcome).toBe('signed');
  let landed = false;
  proxy.beforeForward = async (calls) => {
    const pinned = calls.some(
      (c) =>
        c.method === 'getMultipleAccounts' &&
        typeof (c.params[1] as { minContextSlot?: unknown } | undefined)?.minContextSlot === 'number',
    );
    if (landed || !pinned) return;
    landed = true;
    await rpcResult(w.localnet.url, 'sendTransaction', [first.signed_transaction, { encoding: 'base64' }]);
    w.localnet.advanceBlocks(1);
  };
  try {
    const second = await sign({ payload: w.transfer('alpha', (3 * SOL) / 10, 'second') });
    expect(landed).toBe(true);
    expect(second).toMatchObject({ outcome: 'refused', failed_check: 'limits' });
    figures.bank_race = `${String(second.outcome)} (${String(second.failed_check)})`;
  } finally {
    proxy.beforeForward = null;
  }
});

it('approval binding: what the operator approved bounds what is sent, though the destination changed state meanwhile', async () => {
  const vault = w.keys.vault!;
  await closing.open();
  const before = await balanceOf(w, vault.pubkey);
  const answer = sign({ key: 'vault', payload: await closing.paymentWithCreates(vault.pubkey, 6_000_000) });
  let id = '';
  await until(async () => {
    const [pending] = await w.ledger.listApprovals({ status: 'pending' });
    id = pending?.id ?? '';
    return id !== '';
  }, 'the payment to wait for an operator');
  await closing.close();
  await w.ledger.decideApproval(id, 'approved', 'operator', Math.floor(Date.now() / 1000));
  const report = await answer;
  expect(report).toMatchObject({ outcome: 'refused', reason: 'approval_figures_changed', signature: null });
  const spent = before - (await balanceOf(w, vault.pubkey));
  expect(spent).toBe(0);
  figures.approval_bound = `${String(report.outcome)} (${String(report.reason)}), the key spent ${String(spent)} lamports`;
});
