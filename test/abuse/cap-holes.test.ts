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
 */
import {
  AccountRole,
  address,
  createSolanaRpc,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  partiallySignTransaction,
  type Instruction,
  type KeyPairSigner,
} from '@solana/kit';
import { finalEntry } from '../support/async';
import { randomAddress } from '../support/payloads';
import { rpcResult } from '../support/rpc';
import { keyDirSecrets } from '../support/secrets';
import { ifSetUp } from '../support/set-up';
import { balanceOf, makeWorld, type World } from '../support/world';
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
const figures: Record<string, string | number> = {};

beforeAll(async () => {
  proxy = await FaultProxy.start();
  w = await makeWorld({
    keys: { alpha: { daily_lamport_cap: CAP } },
    rpcUrl: (url) => (proxy.setTarget(url), proxy.url()),
  });
  recordSecrets(
    SUITE,
    keyDirSecrets(w.config.key_dir).map((s, i) => ({ label: `key file ${i}`, value: s })),
  );
  const issued = issueTokens(SUITE, [{ name: 'agent', keys: ['alpha'] }]);
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
