/**
 * A payload v2 (built by the agent with @solana/kit) that spends as the treasury's delegate (docs/treasury.md): a
 * `TransferChecked` from the treasury account with the agent key as authority, the key paying the fee. Judged as
 * any other sign: simulated on the embedded chain, counted against the mint's per_tx and per_day; one beyond the
 * allowance left on chain fails simulation (the token program refuses it) and nothing is sent or counted.
 */
import { address, createSolanaRpc } from '@solana/kit';
import { getTransferCheckedInstruction } from '@solana-program/token';
import { randomAddress } from '../support/payloads';
import { setMint, setTokenAccount, tokenBalance } from '../support/tokens';
import { makeWorld, type World } from '../support/world';
import { latestLifetime, wireTransaction, type Rpc } from '../signer/kit-transactions';
import { tokenPolicy } from '../signer/policy/fixtures';

const M = 1_000_000n;
const MINT = randomAddress();
const OWNER = randomAddress(); // the operator's wallet, off this host: the account is written as its approval left it
const merchant = randomAddress();
// per_day above the allowance: here the chain's bound is the tighter one.
const policy = tokenPolicy(MINT, { per_tx: 3n * M, per_day: 10n * M });

let w: World;
let rpc: Rpc;
let treasury: string;
let merchantAccount: string;
let agentPubkey: string;

beforeAll(async () => {
  w = await makeWorld({ keys: { agent: { tokens: [policy] } } });
  rpc = createSolanaRpc(w.localnet.url);
  const agent = w.config.keys.find((k) => k.name === 'agent')!;
  agentPubkey = agent.pubkey;
  setMint(w.localnet, MINT, { decimals: 6 });
  treasury = setTokenAccount(w.localnet, {
    mint: MINT,
    owner: OWNER,
    amount: 100n * M,
    delegate: agent.pubkey,
    delegatedAmount: 5n * M,
  });
  merchantAccount = setTokenAccount(w.localnet, { mint: MINT, owner: merchant, amount: 0n });
  agent.treasury = { owner: OWNER, accounts: [treasury], refill_below_percent: 50 };
});
afterAll(() => w.close());

/** What an agent builds: the delegate transfer, the key as fee payer and authority, its signature slot empty. */
async function delegateSpend(amount: bigint): Promise<Record<string, unknown>> {
  const ix = getTransferCheckedInstruction({
    source: address(treasury),
    mint: address(MINT),
    destination: address(merchantAccount),
    authority: address(agentPubkey),
    amount,
    decimals: 6,
  });
  const transaction = await wireTransaction(agentPubkey, [ix], { lifetime: await latestLifetime(rpc) });
  return { version: 2, transaction, summary: `pay ${amount} from the treasury`, warnings: [] };
}

const sign = async (amount: bigint) =>
  w.engine.sign({ key: 'agent', payload: await delegateSpend(amount), principal: w.operator });

async function allowance(): Promise<bigint> {
  const [view] = await w.engine.treasuryShow();
  return view!.accounts[0]!.chain!.delegatedAmount;
}

describe('payload v2 spending as the delegate', () => {
  it('over per_tx but within the allowance: simulated, then refused by the cap; nothing sent', async () => {
    const r = await sign(4n * M);
    expect(r).toMatchObject({ outcome: 'refused', reason: 'token_per_tx_cap', signature: null });
    expect(r.token_changes).toEqual([expect.objectContaining({ mint: MINT, change: '-4000000' })]);
    expect(await allowance()).toBe(5n * M);
  });

  it('within the caps: confirmed, the allowance on chain falls and the spend counts against per_day', async () => {
    const r = await sign(2n * M);
    expect(r).toMatchObject({
      outcome: 'confirmed',
      remaining_daily_tokens: [{ mint: MINT, remaining: '8000000' }],
    });
    expect(r.token_changes).toEqual([expect.objectContaining({ mint: MINT, change: '-2000000' })]);
    expect(await tokenBalance(w.localnet.url, merchantAccount)).toBe(2n * M);
    expect(await allowance()).toBe(3n * M);
    expect(await sign(2n * M)).toMatchObject({
      outcome: 'confirmed',
      remaining_daily_tokens: [{ mint: MINT, remaining: '6000000' }],
    });
    expect(await allowance()).toBe(1n * M);
  });

  it('beyond the allowance left (within every cap): simulation fails with the token program’s error; nothing counts', async () => {
    const r = await sign(2n * M);
    expect(r).toMatchObject({ outcome: 'simulation_failed', signature: null });
    expect(r.program_error).toMatch(/insufficient funds/i);
    expect(await tokenBalance(w.localnet.url, merchantAccount)).toBe(4n * M);
    expect(await allowance()).toBe(1n * M);
    const [view] = await w.engine.keyShow({ key: 'agent', principal: w.operator });
    expect(view!.policy.tokens).toEqual([expect.objectContaining({ mint: MINT, remaining_daily: '6000000' })]);
  });
});
