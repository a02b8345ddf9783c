/**
 * The localnet as a node: real LiteSVM behind the real HTTP endpoint, driven through JsonRpcClient with
 * hand-compiled legacy transactions. Blocks advance by hand (blockIntervalMs 0) so every height is exact.
 */
import { JsonRpcClient } from '../../src/rpc/rpc-client';
import { startLocalnet, type Localnet } from '../../src/localnet/server';
import { decodeAddress } from '../../src/util/base58';
import {
  SYSTEM_PROGRAM,
  computeUnitLimitIx,
  computeUnitPriceIx,
  memoIx,
  newSigner,
  randomAddress,
  signedTransfer,
  unsignedTransfer,
} from './legacy-tx';

const SOL = 1_000_000_000;
const FEE = 5000;

let net: Localnet;
let client: JsonRpcClient;
const payer = newSigner();

beforeAll(async () => {
  net = await startLocalnet({ blockIntervalMs: 0, fund: [{ address: payer.pubkey, lamports: 10 * SOL }] });
  client = new JsonRpcClient(net.url, { timeoutMs: 5000 });
});

afterAll(async () => {
  client.close();
  await net.close();
});

afterEach(() => net.faults.clear());

function funded(lamports = 2 * SOL) {
  const s = newSigner();
  net.airdrop(s.pubkey, lamports);
  return s;
}

test('reports a fixed genesis hash that is a base58 32-byte value', async () => {
  const hash = await client.getGenesisHash();
  expect(hash).toBe(net.genesisHash);
  expect(decodeAddress(hash)).not.toBeNull();
});

test('a blockhash is valid for 150 blocks after the block that issued it; confirmed and finalized heights trail', async () => {
  const h = net.blockHeight();
  const { lastValidBlockHeight } = await client.getLatestBlockhash();
  expect(lastValidBlockHeight).toBe(h + 150);
  expect(await client.getBlockHeight('confirmed')).toBe(h - 1);
  expect(await client.getBlockHeight('finalized')).toBe(h - 2);
  net.advanceBlocks(3);
  expect(await client.getBlockHeight('finalized')).toBe(h + 1);
  const next = await client.getLatestBlockhash();
  expect(next.lastValidBlockHeight).toBe(h + 153);
});

test('a signed System transfer simulates, lands, and moves processed → confirmed → finalized with exact balances', async () => {
  const from = funded();
  const to = randomAddress();
  const amount = 1_000_000;
  const { blockhash } = await client.getLatestBlockhash();
  const tx = signedTransfer(from, to, amount, blockhash);

  expect(await client.getFeeForMessage(tx.messageBase64)).toBe(FEE);
  const sim = await client.simulateTransaction(tx.base64, {
    sigVerify: true,
    replaceRecentBlockhash: false,
    accounts: [from.pubkey, to],
  });
  expect(sim.err).toBeNull();
  expect(sim.logs).toEqual([`Program ${SYSTEM_PROGRAM} invoke [1]`, `Program ${SYSTEM_PROGRAM} success`]);
  expect(sim.unitsConsumed).toBe(150);
  expect(sim.accounts).toEqual([
    { lamports: 2 * SOL - amount - FEE, owner: SYSTEM_PROGRAM, data: new Uint8Array() },
    { lamports: amount, owner: SYSTEM_PROGRAM, data: new Uint8Array() },
  ]);
  // Simulation changes nothing.
  expect(await client.getBalance(from.pubkey)).toBe(2 * SOL);

  expect(await client.sendTransaction(tx.base64)).toBe(tx.signature);
  const [processed] = await client.getSignatureStatuses([tx.signature], { searchTransactionHistory: false });
  expect(processed).toEqual({ slot: processed?.slot, confirmationStatus: 'processed', err: null });
  expect(typeof processed?.slot).toBe('number');
  expect(await client.getTransaction(tx.signature)).toBeNull(); // not yet visible at `confirmed`

  net.advanceBlocks(1);
  const [confirmed] = await client.getSignatureStatuses([tx.signature], { searchTransactionHistory: false });
  expect(confirmed?.confirmationStatus).toBe('confirmed');
  expect(confirmed?.slot).toBe(processed?.slot);
  net.advanceBlocks(1);
  const [finalized] = await client.getSignatureStatuses([tx.signature], { searchTransactionHistory: true });
  expect(finalized?.confirmationStatus).toBe('finalized');

  expect(await client.getBalance(from.pubkey)).toBe(2 * SOL - amount - FEE);
  expect(await client.getBalance(to)).toBe(amount);
  expect(await client.getTransaction(tx.signature)).toEqual({
    slot: processed!.slot,
    err: null,
    fee: FEE,
    preBalance0: 2 * SOL,
    postBalance0: 2 * SOL - amount - FEE,
    logs: sim.logs,
    signatures: [tx.signature],
    accountKeys: [from.pubkey, to, '11111111111111111111111111111111'],
    preBalances: [2 * SOL, 0, 1],
    postBalances: [2 * SOL - amount - FEE, amount, 1],
    preTokenBalances: [],
    postTokenBalances: [],
    loadedAddresses: [],
  });
});

test('an unsigned transaction simulates with sigVerify off and a replaced blockhash, even an expired one', async () => {
  const from = funded();
  const to = randomAddress();
  const { blockhash } = await client.getLatestBlockhash();
  net.advanceBlocks(151);
  const tx = unsignedTransfer(from.pubkey, to, 1_000_000, blockhash);
  const sim = await client.simulateTransaction(tx.base64, {
    sigVerify: false,
    replaceRecentBlockhash: true,
    accounts: [from.pubkey],
  });
  expect(sim.err).toBeNull();
  expect(sim.accounts).toEqual([
    { lamports: 2 * SOL - 1_000_000 - FEE, owner: SYSTEM_PROGRAM, data: new Uint8Array() },
  ]);
});

test('an unsigned transaction with sigVerify on is refused as a node refuses it (-32003), before the blockhash is checked', async () => {
  const from = funded();
  const { blockhash } = await client.getLatestBlockhash();
  const tx = unsignedTransfer(from.pubkey, randomAddress(), 1_000_000, blockhash);
  const simulate = () =>
    client.simulateTransaction(tx.base64, { sigVerify: true, replaceRecentBlockhash: false, accounts: [] });
  await expect(simulate()).rejects.toMatchObject({ kind: 'node', rpcCode: -32003 });
  net.faults.expireAllBlockhashes();
  await expect(simulate()).rejects.toMatchObject({ kind: 'node', rpcCode: -32003 });
});

test('sigVerify together with replaceRecentBlockhash is an invalid-params error', async () => {
  const from = funded();
  const { blockhash } = await client.getLatestBlockhash();
  const tx = signedTransfer(from, randomAddress(), 1_000_000, blockhash);
  await expect(
    client.simulateTransaction(tx.base64, { sigVerify: true, replaceRecentBlockhash: true, accounts: [] }),
  ).rejects.toMatchObject({
    kind: 'node',
    rpcCode: -32602,
  });
});

test('a transfer beyond the balance fails with the System program error and logs, lands failed and pays its fee', async () => {
  const from = funded(SOL);
  const { blockhash } = await client.getLatestBlockhash();
  const tx = signedTransfer(from, randomAddress(), 5 * SOL, blockhash);
  const expectedErr = { InstructionError: [0, { Custom: 1 }] };

  const sim = await client.simulateTransaction(tx.base64, {
    sigVerify: true,
    replaceRecentBlockhash: false,
    accounts: [from.pubkey],
  });
  expect(sim.err).toEqual(expectedErr);
  expect(sim.logs).toEqual([
    `Program ${SYSTEM_PROGRAM} invoke [1]`,
    `Transfer: insufficient lamports ${SOL - FEE}, need ${5 * SOL}`,
    `Program ${SYSTEM_PROGRAM} failed: custom program error: 0x1`,
  ]);

  await client.sendTransaction(tx.base64);
  net.advanceBlocks(1);
  const [status] = await client.getSignatureStatuses([tx.signature], { searchTransactionHistory: false });
  expect(status).toMatchObject({ confirmationStatus: 'confirmed', err: expectedErr });
  const meta = await client.getTransaction(tx.signature);
  expect(meta).toMatchObject({ err: expectedErr, fee: FEE, preBalance0: SOL, postBalance0: SOL - FEE, logs: sim.logs });
  expect(await client.getBalance(from.pubkey)).toBe(SOL - FEE);
});

test('a blockhash older than 150 blocks: BlockhashNotFound in simulation, no fee quote, and a send that never lands', async () => {
  const from = funded();
  const { blockhash } = await client.getLatestBlockhash();
  const tx = signedTransfer(from, randomAddress(), 1_000_000, blockhash);

  net.advanceBlocks(150);
  expect(await client.getFeeForMessage(tx.messageBase64)).toBe(FEE); // the last valid height itself is still valid
  net.advanceBlocks(1);
  const sim = await client.simulateTransaction(tx.base64, {
    sigVerify: true,
    replaceRecentBlockhash: false,
    accounts: [from.pubkey],
  });
  expect(sim).toMatchObject({ err: 'BlockhashNotFound', logs: [], unitsConsumed: 0, accounts: [] });
  expect(sim.slot).toBeGreaterThan(0);
  expect(await client.getFeeForMessage(tx.messageBase64)).toBeNull();

  expect(await client.sendTransaction(tx.base64)).toBe(tx.signature);
  net.advanceBlocks(3);
  expect(await client.getSignatureStatuses([tx.signature], { searchTransactionHistory: true })).toEqual([null]);
  expect(await client.getBalance(from.pubkey)).toBe(2 * SOL);
});

test('sending the same transaction twice lands it once', async () => {
  const from = funded();
  const { blockhash } = await client.getLatestBlockhash();
  const tx = signedTransfer(from, randomAddress(), 1_000_000, blockhash);
  const before = net.stats();
  expect(await client.sendTransaction(tx.base64)).toBe(tx.signature);
  expect(await client.sendTransaction(tx.base64)).toBe(tx.signature);
  expect(await client.getBalance(from.pubkey)).toBe(2 * SOL - 1_000_000 - FEE);
  const after = net.stats();
  expect(after.sends - before.sends).toBe(2);
  expect(after.landed - before.landed).toBe(1);
});

test('a transaction whose fee payer does not exist never lands', async () => {
  const ghost = newSigner();
  const { blockhash } = await client.getLatestBlockhash();
  const tx = signedTransfer(ghost, randomAddress(), 1_000_000, blockhash);
  const sim = await client.simulateTransaction(tx.base64, {
    sigVerify: true,
    replaceRecentBlockhash: false,
    accounts: [ghost.pubkey],
  });
  expect(sim.err).toBe('AccountNotFound');
  await client.sendTransaction(tx.base64);
  expect(await client.getSignatureStatuses([tx.signature], { searchTransactionHistory: true })).toEqual([null]);
});

test('the fee it quotes and records is the fee LiteSVM charges, priority fees included', async () => {
  const cases = [
    { extra: [computeUnitPriceIx(1_000), computeUnitLimitIx(200_000)], expected: FEE + 200 },
    // No limit: 3000 units per builtin instruction (compute budget + system) → ceil(6000 × 1.5) = 9000.
    { extra: [computeUnitPriceIx(1_500_000)], expected: FEE + 9_000 },
    // A non-builtin program reserves 200 000 units.
    { extra: [computeUnitPriceIx(1_000_000), memoIx('hello')], expected: FEE + 206_000 },
  ];
  for (const { extra, expected } of cases) {
    const from = funded();
    const { blockhash } = await client.getLatestBlockhash();
    const tx = signedTransfer(from, randomAddress(), 1_000_000, blockhash, extra);
    expect(await client.getFeeForMessage(tx.messageBase64)).toBe(expected);
    await client.sendTransaction(tx.base64);
    net.advanceBlocks(1);
    const charged = 2 * SOL - 1_000_000 - (await client.getBalance(from.pubkey));
    expect(charged).toBe(expected);
    expect((await client.getTransaction(tx.signature))?.fee).toBe(expected);
  }
});

test('without searchTransactionHistory only recent statuses are answered; with it, the history is searched', async () => {
  const from = funded();
  const { blockhash } = await client.getLatestBlockhash();
  const tx = signedTransfer(from, randomAddress(), 1_000_000, blockhash);
  await client.sendTransaction(tx.base64);
  net.advanceBlocks(301);
  expect(await client.getSignatureStatuses([tx.signature], { searchTransactionHistory: false })).toEqual([null]);
  const [old] = await client.getSignatureStatuses([tx.signature], { searchTransactionHistory: true });
  expect(old?.confirmationStatus).toBe('finalized');
});

test('accounts report lamports and owner, and null when absent', async () => {
  const owner = randomAddress();
  const custom = randomAddress();
  net.setAccount(custom, { lamports: 3_000_000, owner, data: new Uint8Array([1, 2, 3]) });
  const unknown = randomAddress();
  expect(await client.getAccountInfo(payer.pubkey)).toEqual({ lamports: 10 * SOL, owner: SYSTEM_PROGRAM });
  expect(await client.getAccountInfo(unknown)).toBeNull();
  expect(await client.getBalance(unknown)).toBe(0);
  expect(await client.getMultipleAccounts([custom, unknown, payer.pubkey])).toEqual([
    { lamports: 3_000_000, owner },
    null,
    { lamports: 10 * SOL, owner: SYSTEM_PROGRAM },
  ]);
});

test('an unknown method is JSON-RPC -32601', async () => {
  const res = await rawCall(net.url, { jsonrpc: '2.0', id: 7, method: 'getBlockProduction', params: [] });
  expect(res).toEqual({
    jsonrpc: '2.0',
    error: { code: -32601, message: 'Method not found: getBlockProduction' },
    id: 7,
  });
});

test('a body that is not JSON is -32700, and a batch gets one answer per call', async () => {
  const bad = await fetch(net.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{nope' });
  expect(await bad.json()).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
  const batch = await rawCall(net.url, [
    { jsonrpc: '2.0', id: 1, method: 'getGenesisHash' },
    { jsonrpc: '2.0', id: 2, method: 'getBlockHeight', params: [{ commitment: 'processed' }] },
  ]);
  expect(batch).toEqual([
    { jsonrpc: '2.0', result: net.genesisHash, id: 1 },
    { jsonrpc: '2.0', result: net.blockHeight(), id: 2 },
  ]);
});

describe('faults', () => {
  test('dropSends: the signature comes back but the transaction never lands; a rebroadcast after it lands', async () => {
    const from = funded();
    const { blockhash } = await client.getLatestBlockhash();
    const tx = signedTransfer(from, randomAddress(), 1_000_000, blockhash);
    net.faults.dropSends(true);
    expect(await client.sendTransaction(tx.base64)).toBe(tx.signature);
    net.advanceBlocks(2);
    expect(await client.getSignatureStatuses([tx.signature], { searchTransactionHistory: true })).toEqual([null]);
    net.faults.dropSends(false);
    await client.sendTransaction(tx.base64);
    const [status] = await client.getSignatureStatuses([tx.signature], { searchTransactionHistory: false });
    expect(status?.confirmationStatus).toBe('processed');
  });

  test('expireAllBlockhashes: every earlier blockhash is BlockhashNotFound and never lands; a fresh one works', async () => {
    const from = funded();
    const { blockhash } = await client.getLatestBlockhash();
    const old = signedTransfer(from, randomAddress(), 1_000_000, blockhash);
    net.faults.expireAllBlockhashes();
    const sim = await client.simulateTransaction(old.base64, {
      sigVerify: true,
      replaceRecentBlockhash: false,
      accounts: [],
    });
    expect(sim.err).toBe('BlockhashNotFound');
    await client.sendTransaction(old.base64);
    expect(await client.getSignatureStatuses([old.signature], { searchTransactionHistory: true })).toEqual([null]);

    const fresh = await client.getLatestBlockhash();
    expect(fresh.blockhash).not.toBe(blockhash);
    const tx = signedTransfer(from, randomAddress(), 1_000_000, fresh.blockhash);
    expect(
      (await client.simulateTransaction(tx.base64, { sigVerify: true, replaceRecentBlockhash: false, accounts: [] }))
        .err,
    ).toBeNull();
  });

  test('stallConfirmations: statuses stay processed and getTransaction finds nothing until it is lifted', async () => {
    const from = funded();
    const { blockhash } = await client.getLatestBlockhash();
    const tx = signedTransfer(from, randomAddress(), 1_000_000, blockhash);
    net.faults.stallConfirmations(true);
    await client.sendTransaction(tx.base64);
    net.advanceBlocks(5);
    const [stalled] = await client.getSignatureStatuses([tx.signature], { searchTransactionHistory: false });
    expect(stalled?.confirmationStatus).toBe('processed');
    expect(await client.getTransaction(tx.signature)).toBeNull();
    net.faults.stallConfirmations(false);
    const [status] = await client.getSignatureStatuses([tx.signature], { searchTransactionHistory: false });
    expect(status?.confirmationStatus).toBe('finalized');
  });

  test('failNext: the next n calls fail with -32603, or only calls of the named method', async () => {
    net.faults.failNext(2);
    await expect(client.getBlockHeight('confirmed')).rejects.toMatchObject({ kind: 'node', rpcCode: -32603 });
    await expect(client.getGenesisHash()).rejects.toMatchObject({ kind: 'node', rpcCode: -32603 });
    await expect(client.getGenesisHash()).resolves.toBe(net.genesisHash);

    net.faults.failNext(1, 'getBalance');
    await expect(client.getGenesisHash()).resolves.toBe(net.genesisHash);
    await expect(client.getBalance(payer.pubkey)).rejects.toThrow('getBalance: node error -32603: Internal error');
    await expect(client.getBalance(payer.pubkey)).resolves.toBe(10 * SOL);
  });
});

test('freezeHeight stops the block timer; advanceBlocks still moves the height', async () => {
  const timed = await startLocalnet({ blockIntervalMs: 5 });
  try {
    const start = timed.blockHeight();
    await waitUntil(() => timed.blockHeight() >= start + 3);
    timed.faults.freezeHeight(true);
    const frozenAt = timed.blockHeight();
    await new Promise((r) => setTimeout(r, 60));
    expect(timed.blockHeight()).toBe(frozenAt);
    timed.advanceBlocks(2);
    expect(timed.blockHeight()).toBe(frozenAt + 2);
    timed.faults.freezeHeight(false);
    await waitUntil(() => timed.blockHeight() > frozenAt + 2);
  } finally {
    await timed.close();
  }
});

test('fault controls answer over JSON-RPC only when controls are enabled', async () => {
  const from = funded();
  expect(await rawCall(net.url, { jsonrpc: '2.0', id: 1, method: 'localnet_dropSends', params: [true] })).toMatchObject(
    {
      error: { code: -32601 },
    },
  );

  const remote = await startLocalnet({
    blockIntervalMs: 0,
    controls: true,
    fund: [{ address: from.pubkey, lamports: SOL }],
  });
  const remoteClient = new JsonRpcClient(remote.url, { timeoutMs: 5000 });
  try {
    const call = (method: string, params: unknown[] = []) =>
      rawCall(remote.url, { jsonrpc: '2.0', id: 1, method, params });
    expect(await call('localnet_dropSends', [true])).toEqual({ jsonrpc: '2.0', result: null, id: 1 });
    const { blockhash } = await remoteClient.getLatestBlockhash();
    const tx = signedTransfer(from, randomAddress(), 1_000_000, blockhash);
    await remoteClient.sendTransaction(tx.base64);
    expect(await remoteClient.getSignatureStatuses([tx.signature], { searchTransactionHistory: true })).toEqual([null]);
    await call('localnet_clearFaults');

    await call('localnet_failNext', [1, 'getGenesisHash']);
    await expect(remoteClient.getGenesisHash()).rejects.toMatchObject({ rpcCode: -32603 });

    const height = remote.blockHeight();
    await call('localnet_advanceBlocks', [4]);
    expect(await call('localnet_blockHeight')).toMatchObject({ result: height + 4 });

    await call('localnet_stallConfirmations', [true]);
    await remoteClient.sendTransaction(tx.base64);
    await call('localnet_advanceBlocks', [3]);
    const [status] = await remoteClient.getSignatureStatuses([tx.signature], { searchTransactionHistory: false });
    expect(status?.confirmationStatus).toBe('processed');

    await call('localnet_expireAllBlockhashes');
    const sim = await remoteClient.simulateTransaction(tx.base64, {
      sigVerify: true,
      replaceRecentBlockhash: false,
      accounts: [],
    });
    expect(sim.err).toBe('BlockhashNotFound');

    expect(await call('localnet_stats')).toMatchObject({ result: { sends: 2, landed: 1 } });
  } finally {
    remoteClient.close();
    await remote.close();
  }
});

test('stats count sends, landings and calls per method', async () => {
  const before = net.stats();
  await client.getGenesisHash();
  await client.getGenesisHash();
  const after = net.stats();
  expect(after.calls['getGenesisHash']! - (before.calls['getGenesisHash'] ?? 0)).toBe(2);
});

async function rawCall(url: string, body: unknown): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return res.json();
}

async function waitUntil(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('a malformed transaction is refused at send with invalid params, as a node sanitizes it', async () => {
  const { blockhash } = await client.getLatestBlockhash();
  const tx = signedTransfer(payer, randomAddress(), 1_000_000, blockhash);
  const bytes = Buffer.from(tx.base64, 'base64');
  const trailing = Buffer.concat([bytes, Buffer.from([0])]).toString('base64');
  await expect(client.sendTransaction(trailing)).rejects.toMatchObject({
    kind: 'node',
    rpcCode: -32602,
    message: 'sendTransaction: node error -32602: invalid transaction: trailing bytes after the message',
  });
  const noSignatures = Buffer.concat([Buffer.from([0]), bytes.subarray(65)]).toString('base64');
  await expect(client.sendTransaction(noSignatures)).rejects.toThrow(
    'invalid transaction: 0 signatures for 1 required signers',
  );
  expect(await client.getBalance(payer.pubkey)).toBe(10 * SOL);
});
