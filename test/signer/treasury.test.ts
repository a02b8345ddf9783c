/**
 * A treasury-backed key on the embedded chain (docs/treasury.md): the treasury token account is owned by a key the
 * test holds, standing in for the operator's wallet; the agent's key is its delegate. The planned ApproveChecked is
 * signed by that wallet and checked before it is sent; signs spend through the delegate under the key's caps; and
 * the agent key, taken from its file and used directly on the chain, can move no more than the allowance.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import {
  address,
  appendTransactionMessageInstructions,
  createKeyPairSignerFromBytes,
  createSolanaRpc,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getTransactionDecoder,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransaction,
  signTransactionMessageWithSigners,
  type KeyPairSigner,
  type Signature,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import {
  getApproveCheckedInstruction,
  getRevokeInstruction,
  getTokenDecoder,
  getTransferCheckedInstruction,
} from '@solana-program/token';
import type { TokenPolicy } from '../../src/config/types';
import { keyFilePath } from '../../src/keys/keyfile';
import { approveTransaction, checkApproveTransaction } from '../../src/treasury/approve-transaction';
import { planAllowances, type AllowancePlan } from '../../src/treasury/plan';
import { treasuryTransferPayload } from '../../src/treasury/transfer-payload';
import { randomAddress } from '../support/payloads';
import { setMint, setTokenAccount, tokenBalance } from '../support/tokens';
import { BIN, assertBuilt, run } from '../support/cli';
import { outboxOnlyNotify } from '../support/outbox-hook';
import { makeWorld, worldConfigDocument, type World } from '../support/world';
import { fundedSigner, latestLifetime, sendSigned, waitConfirmed, type Rpc } from './kit-transactions';

const M = 1_000_000n; // one token in base units (6 decimals)
const USDC = randomAddress();
const merchant = randomAddress();

let w: World;
let rpc: Rpc;
/** The operator's wallet stand-in: owns the treasury account, never given to the signer. */
let operatorWallet: KeyPairSigner;
let treasuryAccount: string;
let merchantAccount: string;
let plans: AllowancePlan[];
/** The world's config as a file, for the operator CLI. */
let configFile: string;

const policy: TokenPolicy = {
  mint: USDC,
  program: 'spl-token',
  per_tx: 3n * M,
  per_day: 5n * M,
  destinations: null,
  per_destination_per_day: null,
  approve_above: null,
};

beforeAll(async () => {
  const treasuryAddress = randomAddress();
  // The mismatch and the refill notice are read from the ledger's outbox.
  w = await makeWorld({
    keys: { agent: { tokens: [policy] } },
    notify: outboxOnlyNotify('treasury'),
  });
  rpc = createSolanaRpc(w.localnet.url);
  operatorWallet = await fundedSigner((a, l) => w.localnet.airdrop(a, l));
  // The world's keys are built before the wallet exists: the treasury is set on the engine's key in place.
  const agent = w.config.keys.find((k) => k.name === 'agent')!;
  agent.treasury = { owner: operatorWallet.address, accounts: [treasuryAddress], refill_below_percent: 50 };
  setMint(w.localnet, USDC, { decimals: 6 });
  treasuryAccount = setTokenAccount(w.localnet, {
    mint: USDC,
    owner: operatorWallet.address,
    amount: 100n * M,
    address: treasuryAddress,
  });
  merchantAccount = setTokenAccount(w.localnet, { mint: USDC, owner: merchant, amount: 0n });
  const doc = worldConfigDocument(w);
  const keysDoc = doc['keys'] as Record<string, Record<string, unknown>>;
  keysDoc['agent'] = {
    ...keysDoc['agent'],
    tokens: [{ mint: USDC, per_tx: policy.per_tx!.toString(), per_day: policy.per_day.toString() }],
    treasury: agent.treasury,
  };
  configFile = path.join(w.dir, 'treasury.yaml');
  fs.writeFileSync(configFile, YAML.stringify(doc));
  assertBuilt(BIN.signer);
});
afterAll(() => w.close());

async function onChainAllowance(): Promise<{ delegate: string | null; delegatedAmount: bigint }> {
  const { value } = await rpc.getAccountInfo(address(treasuryAccount), { encoding: 'base64' }).send();
  if (value === null) throw new Error('the treasury account is gone');
  const state = getTokenDecoder().decode(getBase64Encoder().encode(value.data[0]));
  return {
    delegate: state.delegate.__option === 'Some' ? state.delegate.value : null,
    delegatedAmount: state.delegatedAmount,
  };
}

/** The operator's wallet signs an unsigned base64 transaction, as a wallet app would. */
async function ownerSigns(unsigned: string): Promise<string> {
  const tx = getTransactionDecoder().decode(getBase64Encoder().encode(unsigned));
  return getBase64EncodedWireTransaction(await signTransaction([operatorWallet.keyPair], tx));
}

/** The agent key as an intruder holds it: read from the key file, used on the chain without the signer. */
async function stolenAgentKey(): Promise<KeyPairSigner> {
  const bytes = JSON.parse(fs.readFileSync(keyFilePath(w.config.key_dir, 'agent'), 'utf8')) as number[];
  return createKeyPairSignerFromBytes(Uint8Array.from(bytes));
}

async function directTransfer(signer: KeyPairSigner, amount: bigint): Promise<void> {
  await sendSigned(rpc, signer, [
    getTransferCheckedInstruction({
      source: address(treasuryAccount),
      mint: address(USDC),
      destination: address(merchantAccount),
      authority: signer,
      amount,
      decimals: 6,
    }),
  ]);
}

/** A v1 payload in which the agent key, as the treasury's delegate, pays the merchant. */
function payFromTreasury(amount: bigint): Record<string, unknown> {
  return treasuryTransferPayload({
    key: w.config.keys.find((k) => k.name === 'agent')!,
    account: treasuryAccount,
    mint: USDC,
    destination: merchantAccount,
    amount,
    decimals: 6,
    program: 'spl-token',
    summary: `pay ${amount} from the treasury`,
  });
}

describe('a treasury-backed key', () => {
  it('treasury plan prints the per_day allowance; the operator wallet signs it; treasury submit sends it', async () => {
    const agent = w.config.keys.find((k) => k.name === 'agent')!;
    const cli = await run(BIN.signer, ['--config', configFile, 'treasury', 'plan', 'agent', '--json']);
    expect(cli).toMatchObject({ code: 0 });
    const printed = JSON.parse(cli.stdout) as { plans: unknown[]; transaction: string };
    expect(printed.plans).toEqual([
      {
        account: treasuryAccount,
        mint: USDC,
        owner: operatorWallet.address,
        delegate: agent.pubkey,
        amount: '5000000',
        decimals: 6,
        program: 'spl-token',
        basis: 'tokens.per_day',
        why: "the mint's per_day, 5000000 base units",
      },
    ]);
    const planned = planAllowances(agent, [
      {
        account: treasuryAccount,
        mint: USDC,
        owner: operatorWallet.address,
        decimals: 6,
        program: 'spl-token',
        mintRefusal: null,
      },
    ]);
    if (!planned.ok) throw new Error(planned.message);
    plans = planned.plans;
    expect(plans).toEqual([
      {
        account: treasuryAccount,
        mint: USDC,
        owner: operatorWallet.address,
        delegate: agent.pubkey,
        amount: 5n * M,
        decimals: 6,
        program: 'spl-token',
        basis: 'tokens.per_day',
        why: "the mint's per_day, 5000000 base units",
      },
    ]);
    const signed = await ownerSigns(printed.transaction);
    const file = path.join(w.dir, 'approve.signed.b64');
    fs.writeFileSync(file, signed);
    const sent = await run(BIN.signer, ['--config', configFile, 'treasury', 'submit', file, '--json']);
    expect(sent).toMatchObject({ code: 0 });
    await waitConfirmed(rpc, (JSON.parse(sent.stdout) as { signature: Signature }).signature);
    expect(await onChainAllowance()).toEqual({ delegate: agent.pubkey, delegatedAmount: 5n * M });
  });

  it('refuses to submit an approval of another delegate, another amount, or one with an extra instruction', async () => {
    const lifetime = await latestLifetime(rpc);
    const other = [{ ...plans[0]!, delegate: randomAddress() }];
    const more = [{ ...plans[0]!, amount: 6n * M }];
    for (const [bad, field] of [
      [other, 'delegate'],
      [more, 'amount'],
    ] as const) {
      const r = checkApproveTransaction(await ownerSigns(approveTransaction(bad, lifetime)), plans);
      expect(r).toMatchObject({ ok: false, code: 'treasury_submit_mismatch' });
      expect(!r.ok && r.message).toContain(`approves ${field}`);
    }
    // The planned approval plus a transfer out of the owner's wallet: the same approval, but not only it.
    const p = plans[0]!;
    const approval = getApproveCheckedInstruction({
      source: address(p.account),
      mint: address(p.mint),
      delegate: address(p.delegate),
      owner: operatorWallet,
      amount: p.amount,
      decimals: p.decimals,
    });
    const drain = getTransferSolInstruction({ source: operatorWallet, destination: address(merchant), amount: 1n });
    const withExtra = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(operatorWallet, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
      (m) => appendTransactionMessageInstructions([approval, drain], m),
    );
    const extra = getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(withExtra));
    const r = checkApproveTransaction(extra, plans);
    expect(r).toMatchObject({ ok: false, code: 'treasury_submit_mismatch' });
    expect(!r.ok && r.message).toContain('2 instructions');
    // The CLI refuses it too, and sends nothing.
    const file = path.join(w.dir, 'extra.signed.b64');
    fs.writeFileSync(file, extra);
    const sent = await run(BIN.signer, ['--config', configFile, 'treasury', 'submit', file]);
    expect(sent.code).not.toBe(0);
    expect(sent.stderr).toContain('treasury_submit_mismatch');
    expect(await onChainAllowance()).toMatchObject({ delegatedAmount: 5n * M });
  });

  it('signs a delegate transfer under the caps and counts it against the key’s per_day; refuses one over per_tx', async () => {
    const pay = payFromTreasury;
    const r = await w.engine.sign({ payload: pay(1n * M), principal: w.operator });
    expect(r).toMatchObject({ outcome: 'confirmed', remaining_daily_tokens: [{ mint: USDC, remaining: '4000000' }] });
    expect(await tokenBalance(w.localnet.url, merchantAccount)).toBe(1n * M);
    expect(await onChainAllowance()).toMatchObject({ delegatedAmount: 4n * M });
    // Within the allowance left on chain (4), over per_tx (3): the signer's cap refuses it.
    const over = await w.engine.sign({ payload: pay(4n * M), principal: w.operator });
    expect(over).toMatchObject({ outcome: 'refused', reason: 'token_per_tx_cap' });
  });

  it('bypassing the signer, the stolen agent key cannot move more than the allowance; it can move what is left', async () => {
    // A pass before the theft: its baseline is the allowance the signer's own spend left.
    expect((await w.engine.reconcileTreasuries())[0]?.verdicts).toEqual([
      { kind: 'first_seen', account: treasuryAccount, delegatedAmount: 4n * M },
    ]);
    const stolen = await stolenAgentKey();
    w.localnet.airdrop(stolen.address, 1_000_000_000);
    await expect(directTransfer(stolen, 6n * M)).rejects.toThrow(/failed/);
    expect(await tokenBalance(w.localnet.url, merchantAccount)).toBe(1n * M);
    await directTransfer(stolen, 1n * M);
    expect(await tokenBalance(w.localnet.url, merchantAccount)).toBe(2n * M);
    expect(await onChainAllowance()).toMatchObject({ delegatedAmount: 3n * M });
  });

  it('the next reconciliation sees the spend the signer did not make: halts the key and raises treasury.mismatch', async () => {
    const [pass] = await w.engine.reconcileTreasuries();
    expect(pass?.verdicts).toEqual([
      { kind: 'mismatch', account: treasuryAccount, mint: USDC, expected: 4n * M, actual: 3n * M },
    ]);
    const halt = await w.ledger.getHalt('agent');
    expect(halt).toMatchObject({ key: 'agent', by: 'signer (treasury reconciliation)' });
    expect(halt?.reason).toContain(`token account ${treasuryAccount}`);
    const notes = (await w.ledger.listNotifications({ limit: 100 })).filter((n) => n.event === 'treasury.mismatch');
    expect(notes).toHaveLength(1);
    expect(JSON.parse(notes[0]!.body)).toMatchObject({
      type: 'treasury.mismatch',
      data: {
        key: 'agent',
        account: treasuryAccount,
        mint: USDC,
        expected_allowance: '4000000',
        chain_allowance: '3000000',
      },
    });
    const r = await w.engine.sign({ payload: payFromTreasury(1n * M), principal: w.operator });
    expect(r).toMatchObject({ outcome: 'refused', reason: 'halted' });
  });

  it('once the owner revokes the delegate, signs are refused with treasury_delegate_revoked until it is approved again', async () => {
    await w.engine.resume('agent', 'operator:test');
    const revoke = getRevokeInstruction({ source: address(treasuryAccount), owner: operatorWallet });
    const lifetime = await latestLifetime(rpc);
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(operatorWallet, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
      (m) => appendTransactionMessageInstructions([revoke], m),
    );
    const signed = await signTransactionMessageWithSigners(message);
    await waitConfirmed(
      rpc,
      await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: 'base64' }).send(),
    );
    expect(await onChainAllowance()).toEqual({ delegate: null, delegatedAmount: 0n });
    const r = await w.engine.sign({ payload: payFromTreasury(1n * M), principal: w.operator });
    expect(r).toMatchObject({
      outcome: 'refused',
      reason: 'treasury_delegate_revoked',
      figures: { account: treasuryAccount },
    });
    expect(r.detail).toContain('no delegate (revoked)');
    expect((await w.engine.reconcileTreasuries())[0]?.verdicts).toEqual([
      { kind: 'delegate_changed', account: treasuryAccount, delegate: null },
    ]);
  });
});
