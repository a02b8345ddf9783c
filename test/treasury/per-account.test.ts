/**
 * Reconciliation per account (docs/treasury.md): a key with two treasury accounts of one mint. The signer spends 2
 * tokens from the first; 1 token leaves the second with no sign of the signer's (written on chain as a thief's
 * direct transfer would leave it). The sign's intent says which account it spent from as delegate, so the pass
 * expects the second account unchanged and calls its fall a mismatch, where a comparison per mint would have let
 * the signer's 2 tokens from the first explain it.
 */
import { treasuryTransferPayload } from '../../src/treasury/transfer-payload';
import { randomAddress } from '../support/payloads';
import { setMint, setTokenAccount } from '../support/tokens';
import { makeWorld, type World } from '../support/world';
import { tokenPolicy } from '../signer/policy/fixtures';

const M = 1_000_000n;
const MINT = randomAddress();
const OWNER = randomAddress();
const policy = tokenPolicy(MINT, { per_tx: 3n * M, per_day: 10n * M });

let w: World;
let first: string;
let second: string;
let merchantAccount: string;

const agent = () => w.config.keys.find((k) => k.name === 'agent')!;
const delegated = (delegatedAmount: bigint, address?: string) =>
  setTokenAccount(w.localnet, {
    mint: MINT,
    owner: OWNER,
    amount: 100n * M - (5n * M - delegatedAmount),
    delegate: agent().pubkey,
    delegatedAmount,
    ...(address === undefined ? {} : { address }),
  });

beforeAll(async () => {
  w = await makeWorld({ keys: { agent: { tokens: [policy] } } });
  setMint(w.localnet, MINT, { decimals: 6 });
  first = delegated(5n * M);
  second = delegated(5n * M);
  merchantAccount = setTokenAccount(w.localnet, { mint: MINT, owner: randomAddress(), amount: 0n });
  agent().treasury = { owner: OWNER, accounts: [first, second], refill_below_percent: 50 };
});
afterAll(() => w.close());

test('a foreign spend from one account is not explained by the signer’s spend from another of the same mint', async () => {
  expect((await w.engine.reconcileTreasuries())[0]?.verdicts.map((v) => v.kind)).toEqual(['first_seen', 'first_seen']);
  const payload = treasuryTransferPayload({
    key: agent(),
    account: first,
    mint: MINT,
    destination: merchantAccount,
    amount: 2n * M,
    decimals: 6,
    program: 'spl-token',
    summary: 'pay 2 from the first treasury account',
  });
  const r = await w.engine.sign({ payload, principal: w.operator });
  expect(r).toMatchObject({ outcome: 'confirmed' });
  // The intent's figure says which account the key spent from as delegate.
  let intent;
  for await (const e of w.ledger.entries()) if (e.command === 'sign-intent' && e.signature === r.signature) intent = e;
  expect(intent?.tokens).toEqual([
    expect.objectContaining({ mint: MINT, change: '-2000000', delegated: [{ account: first, change: '-2000000' }] }),
  ]);
  delegated(4n * M, second); // 1 token moved from the second account by someone else than the signer

  const [pass] = await w.engine.reconcileTreasuries();
  expect(pass?.verdicts).toEqual([
    { kind: 'ok', account: first, delegatedAmount: 3n * M },
    { kind: 'mismatch', account: second, mint: MINT, expected: 5n * M, actual: 4n * M },
  ]);
  expect(await w.ledger.getHalt('agent')).toMatchObject({ by: 'signer (treasury reconciliation)' });
  // The figure with its accounts is part of the hash-chained entry, read back and verified from the ledger.
  expect(await w.ledger.verify()).toMatchObject({ ok: true });
});
