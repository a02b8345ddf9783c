/**
 * A treasury of Token-2022 accounts on the embedded chain (docs/treasury.md): a dollar stablecoin without
 * extensions, its mint and accounts owned by LiteSVM's Token-2022 program. `treasury plan` addresses the ApproveChecked to that
 * program, `treasury submit` sends it once the owner's wallet (a key the test holds) signed it, the agent key spends
 * as delegate through the signer under its caps, and the reconciliation reads the allowance back: the signer's own
 * spends explain it, one made with the key off the signer does not. A mint whose extensions the signer cannot
 * account for (a permanent delegate, a transfer hook) gets no plan, with the extension named.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import {
  address,
  createKeyPairSignerFromBytes,
  createSolanaRpc,
  decompileTransactionMessage,
  getAddressEncoder,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  signTransaction,
  type Instruction,
  type KeyPairSigner,
  type Signature,
} from '@solana/kit';
import { getTokenDecoder, getTransferCheckedInstruction } from '@solana-program/token';
import { keyFilePath } from '../../src/keys/keyfile';
import { chainClientFor } from '../../src/rpc/for-cluster';
import { TOKEN_2022_PROGRAM } from '../../src/solana/programs';
import { approveTransaction, checkApproveTransaction } from '../../src/treasury/approve-transaction';
import { planAllowances, type AllowancePlan } from '../../src/treasury/plan';
import { planTreasury } from '../../src/treasury/status';
import { treasuryTransferPayload } from '../../src/treasury/transfer-payload';
import { BIN, assertBuilt, run } from '../support/cli';
import { randomAddress } from '../support/payloads';
import { setMint, setTokenAccount, tokenBalance } from '../support/tokens';
import { outboxOnlyNotify } from '../support/outbox-hook';
import { makeWorld, worldConfigDocument, type World } from '../support/world';
import { tokenPolicy } from '../signer/policy/fixtures';
import { fundedSigner, latestLifetime, sendSigned, waitConfirmed, type Rpc } from '../signer/kit-transactions';

const M = 1_000_000n;
/** A dollar stablecoin on Token-2022 with no extensions. */
const DOLLAR = randomAddress();
/** Token-2022 mints the signer cannot account for: a permanent delegate (12), a transfer hook (14). */
const PERMANENT = randomAddress();
const HOOKED = randomAddress();
const merchant = randomAddress();
const policy = tokenPolicy(DOLLAR, { program: 'token-2022', per_tx: 3n * M, per_day: 5n * M });

let w: World;
let rpc: Rpc;
let operatorWallet: KeyPairSigner;
let treasuryAccount: string;
let merchantAccount: string;
let configFile: string;

const agent = () => w.config.keys.find((k) => k.name === 'agent')!;
const sign = (p: Record<string, unknown>) => w.engine.sign({ payload: p, principal: w.operator });

beforeAll(async () => {
  // Events are read from the ledger's outbox.
  w = await makeWorld({
    keys: {
      agent: { tokens: [policy] },
      risky: { tokens: [tokenPolicy(PERMANENT, { program: 'token-2022', per_day: 5n * M })] },
    },
    notify: outboxOnlyNotify('treasury-2022'),
  });
  rpc = createSolanaRpc(w.localnet.url);
  operatorWallet = await fundedSigner((a, l) => w.localnet.airdrop(a, l));
  setMint(w.localnet, DOLLAR, { program: 'token-2022', decimals: 6 });
  const permanentDelegate = new Uint8Array(getAddressEncoder().encode(address(randomAddress())));
  setMint(w.localnet, PERMANENT, { program: 'token-2022', decimals: 6, extensions: [[12, permanentDelegate]] });
  setMint(w.localnet, HOOKED, { program: 'token-2022', decimals: 6, extensions: [[14, new Uint8Array(64)]] });
  const owned = (mint: string, amount: bigint) =>
    setTokenAccount(w.localnet, { mint, owner: operatorWallet.address, amount, program: 'token-2022' });
  treasuryAccount = owned(DOLLAR, 100n * M);
  const permanentAccount = owned(PERMANENT, 100n * M);
  merchantAccount = setTokenAccount(w.localnet, { mint: DOLLAR, owner: merchant, amount: 0n, program: 'token-2022' });
  // The keys are made before the wallet exists: their treasuries are set on the engine's keys in place.
  agent().treasury = { owner: operatorWallet.address, accounts: [treasuryAccount], refill_below_percent: 50 };
  const risky = w.config.keys.find((k) => k.name === 'risky')!;
  risky.treasury = { owner: operatorWallet.address, accounts: [permanentAccount], refill_below_percent: 50 };

  const doc = worldConfigDocument(w);
  const keysDoc = doc['keys'] as Record<string, Record<string, unknown>>;
  for (const k of [agent(), risky]) {
    keysDoc[k.name] = {
      ...keysDoc[k.name],
      tokens: (k.tokens ?? []).map((t) => ({
        mint: t.mint,
        program: t.program,
        ...(t.per_tx === null ? {} : { per_tx: t.per_tx.toString() }),
        per_day: t.per_day.toString(),
      })),
      treasury: k.treasury,
    };
  }
  configFile = path.join(w.dir, 'treasury-2022.yaml');
  fs.writeFileSync(configFile, YAML.stringify(doc));
  assertBuilt(BIN.signer);
});
afterAll(() => w.close());

/** The treasury account's delegate and allowance, decoded from the Token-2022 account as the chain holds it. */
async function onChainAllowance(): Promise<{ program: string; delegate: string | null; delegatedAmount: bigint }> {
  const { value } = await rpc.getAccountInfo(address(treasuryAccount), { encoding: 'base64' }).send();
  if (value === null) throw new Error('the treasury account is gone');
  const state = getTokenDecoder().decode(getBase64Encoder().encode(value.data[0]));
  return {
    program: value.owner,
    delegate: state.delegate.__option === 'Some' ? state.delegate.value : null,
    delegatedAmount: state.delegatedAmount,
  };
}

async function ownerSigns(unsigned: string): Promise<string> {
  const tx = getTransactionDecoder().decode(getBase64Encoder().encode(unsigned));
  return getBase64EncodedWireTransaction(await signTransaction([operatorWallet.keyPair], tx));
}

function payFromTreasury(amount: bigint): Record<string, unknown> {
  return treasuryTransferPayload({
    key: agent(),
    account: treasuryAccount,
    mint: DOLLAR,
    destination: merchantAccount,
    amount,
    decimals: 6,
    program: 'token-2022',
    summary: `pay ${amount} from the Token-2022 treasury`,
  });
}

const agentPass = async () => (await w.engine.reconcileTreasuries()).find((p) => p.key === 'agent')?.verdicts;

describe('a Token-2022 treasury', () => {
  let plans: AllowancePlan[];

  it('treasury plan prints an ApproveChecked addressed to Token-2022; the owner signs it; treasury submit sends it', async () => {
    const cli = await run(BIN.signer, ['--config', configFile, 'treasury', 'plan', 'agent', '--json']);
    expect(cli).toMatchObject({ code: 0 });
    const printed = JSON.parse(cli.stdout) as { plans: unknown[]; transaction: string };
    expect(printed.plans).toEqual([
      {
        account: treasuryAccount,
        mint: DOLLAR,
        owner: operatorWallet.address,
        delegate: agent().pubkey,
        amount: '5000000',
        decimals: 6,
        program: 'token-2022',
        basis: 'tokens.per_day',
        why: "the mint's per_day, 5000000 base units",
      },
    ]);
    const tx = getTransactionDecoder().decode(getBase64Encoder().encode(printed.transaction));
    const instructions: readonly Instruction[] = decompileTransactionMessage(
      getCompiledTransactionMessageDecoder().decode(tx.messageBytes),
    ).instructions;
    // One ApproveChecked (tag 13), addressed to the program that owns the account.
    expect(instructions.map((ix) => [ix.programAddress, ix.data?.[0]])).toEqual([[TOKEN_2022_PROGRAM, 13]]);

    const planned = await planTreasury(chainClientFor(w.config.cluster, w.config.timings), agent(), undefined);
    if (!planned.ok) throw new Error(planned.message);
    plans = planned.plans;
    // The same approval addressed to SPL Token would fail on chain; submit's check refuses it first.
    const lifetime = await latestLifetime(rpc);
    const wrong = await ownerSigns(approveTransaction([{ ...plans[0]!, program: 'spl-token' }], lifetime));
    const r = checkApproveTransaction(wrong, plans);
    expect(r).toMatchObject({ ok: false, code: 'treasury_submit_mismatch' });
    expect(!r.ok && r.message).toContain('is addressed to spl-token');

    // The config's other treasury key has no plan (its mint is refused): that does not stop this approval.
    const file = path.join(w.dir, 'approve-2022.signed.b64');
    fs.writeFileSync(file, await ownerSigns(printed.transaction));
    const sent = await run(BIN.signer, ['--config', configFile, 'treasury', 'submit', file, '--json']);
    expect(sent).toMatchObject({ code: 0 });
    await waitConfirmed(rpc, (JSON.parse(sent.stdout) as { signature: Signature }).signature);
    expect(await onChainAllowance()).toEqual({
      program: TOKEN_2022_PROGRAM,
      delegate: agent().pubkey,
      delegatedAmount: 5n * M,
    });
  });

  it('the agent key spends as delegate through the signer, within the caps and the allowance; the spends count', async () => {
    expect(await agentPass()).toEqual([{ kind: 'first_seen', account: treasuryAccount, delegatedAmount: 5n * M }]);
    // Within the allowance (5), over per_tx (3): the signer's cap refuses it.
    expect(await sign(payFromTreasury(4n * M))).toMatchObject({ outcome: 'refused', reason: 'token_per_tx_cap' });
    const first = await sign(payFromTreasury(2n * M));
    expect(first).toMatchObject({
      outcome: 'confirmed',
      remaining_daily_tokens: [{ mint: DOLLAR, remaining: '3000000' }],
    });
    const second = await sign(payFromTreasury(1n * M));
    expect(second).toMatchObject({
      outcome: 'confirmed',
      remaining_daily_tokens: [{ mint: DOLLAR, remaining: '2000000' }],
    });
    expect(await tokenBalance(w.localnet.url, merchantAccount)).toBe(3n * M);
    expect(await onChainAllowance()).toMatchObject({ delegatedAmount: 2n * M });
    let intent;
    for await (const e of w.ledger.entries()) {
      if (e.command === 'sign-intent' && e.signature === second.signature) intent = e;
    }
    expect(intent?.tokens).toEqual([
      expect.objectContaining({
        mint: DOLLAR,
        change: '-1000000',
        delegated: [{ account: treasuryAccount, change: '-1000000' }],
      }),
    ]);
    // Beyond the allowance left (2): Token-2022 refuses it in simulation; nothing is sent and nothing counts.
    const over = await sign(payFromTreasury(3n * M));
    expect(over).toMatchObject({ outcome: 'simulation_failed' });
    expect(await onChainAllowance()).toMatchObject({ delegatedAmount: 2n * M });
  });

  it('the reconciliation explains the fall by the signer’s spends and tells the refill due', async () => {
    expect(await agentPass()).toEqual([{ kind: 'ok', account: treasuryAccount, delegatedAmount: 2n * M }]);
    expect(await w.ledger.getHalt('agent')).toBeNull();
    const notes = (await w.ledger.listNotifications({ limit: 100 })).filter((n) => n.event === 'treasury.refill_due');
    expect(notes.map((n) => JSON.parse(n.body) as unknown)).toEqual([
      expect.objectContaining({
        data: expect.objectContaining({
          key: 'agent',
          account: treasuryAccount,
          mint: DOLLAR,
          chain_allowance: '2000000',
          refill_below: '2500000',
        }) as unknown,
      }),
    ]);
  });

  it('a spend made with the agent key off the signer is not explained: the key is halted', async () => {
    const bytes = JSON.parse(fs.readFileSync(keyFilePath(w.config.key_dir, 'agent'), 'utf8')) as number[];
    const stolen = await createKeyPairSignerFromBytes(Uint8Array.from(bytes));
    w.localnet.airdrop(stolen.address, 1_000_000_000);
    await sendSigned(rpc, stolen, [
      getTransferCheckedInstruction(
        {
          source: address(treasuryAccount),
          mint: address(DOLLAR),
          destination: address(merchantAccount),
          authority: stolen,
          amount: 1n * M,
          decimals: 6,
        },
        { programAddress: address(TOKEN_2022_PROGRAM) },
      ),
    ]);
    expect(await onChainAllowance()).toMatchObject({ delegatedAmount: 1n * M });
    expect(await agentPass()).toEqual([
      { kind: 'mismatch', account: treasuryAccount, mint: DOLLAR, expected: 2n * M, actual: 1n * M },
    ]);
    expect(await w.ledger.getHalt('agent')).toMatchObject({ by: 'signer (treasury reconciliation)' });
  });
});

describe('Token-2022 mints a treasury cannot use', () => {
  it('treasury plan refuses a mint with a permanent delegate, naming the extension', async () => {
    const cli = await run(BIN.signer, ['--config', configFile, 'treasury', 'plan', 'risky']);
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toContain('treasury_mint_extension_refused');
    expect(cli.stderr).toContain('a permanent delegate');
    expect(cli.stdout).toBe('');
  });

  it('refuses a mint with a transfer hook, naming it', async () => {
    const hookedAccount = setTokenAccount(w.localnet, {
      mint: HOOKED,
      owner: operatorWallet.address,
      amount: 100n * M,
      program: 'token-2022',
    });
    const key = {
      ...agent(),
      tokens: [tokenPolicy(HOOKED, { program: 'token-2022' })],
      treasury: { owner: operatorWallet.address, accounts: [hookedAccount], refill_below_percent: 50 },
    };
    const planned = await planTreasury(chainClientFor(w.config.cluster, w.config.timings), key, undefined);
    expect(planned).toMatchObject({ ok: false, code: 'treasury_mint_extension_refused' });
    expect(!planned.ok && planned.message).toContain('a transfer hook');
  });

  it('refuses an account whose program is not the one the key’s policy names for the mint', () => {
    const key = { ...agent(), tokens: [{ ...policy, program: 'spl-token' as const }] };
    const fact = {
      account: treasuryAccount,
      mint: DOLLAR,
      owner: operatorWallet.address,
      decimals: 6,
      program: 'token-2022' as const,
      mintRefusal: null,
    };
    expect(planAllowances(key, [fact])).toMatchObject({ ok: false, code: 'treasury_program_differs' });
  });
});
