/**
 * x402 payments count in dollars (docs/pricing.md): a payment in the x402 shape (a facilitator pays the fee and
 * sends; the key signs only its own slot of a TransferChecked of a priced token, mode sign_only) is valued at the
 * token's Pyth price and counted toward the key's `usd.per_day`, through the real engine on the embedded chain.
 * The base-unit caps would let every payment here through; only the dollar cap refuses.
 */
import {
  AccountRole,
  address,
  createSolanaRpc,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  getTransactionDecoder,
  partiallySignTransaction,
  type Instruction,
  type KeyPairSigner,
} from '@solana/kit';
import type { PricesConfig } from '../../src/config/types';
import type { AuditEntry } from '../../src/ledger/types';
import type { Report } from '../../src/signer/report';
import { finalEntry } from '../support/async';
import { randomAddress } from '../support/payloads';
import { setMint, setTokenAccount, tokenBalance, transferChecked } from '../support/tokens';
import { makeWorld, type World } from '../support/world';
import { fundedSigner, latestLifetime, waitConfirmed, wireTransaction, type Rpc } from './kit-transactions';
import { tokenPolicy } from './policy/fixtures';
import { dollars, PRICE_BOUNDS, SOL_FEED } from '../support/prices';

const MINT = randomAddress();
const MINT_PRICE_ACCOUNT = randomAddress();
const MINT_FEED_ID = 'ab'.repeat(32);
const prices: PricesConfig = {
  bounds: PRICE_BOUNDS,
  feeds: new Map([
    ['SOL', { label: 'SOL', account: SOL_FEED.sponsoredAccount, feedId: SOL_FEED.feedId }],
    [MINT, { label: MINT, account: address(MINT_PRICE_ACCOUNT), feedId: MINT_FEED_ID }],
  ]),
};
/** $0.03 of the 6-decimals token at $1.00. */
const THREE_CENTS = 30_000n;

let w: World;
let rpc: Rpc;
let facilitator: KeyPairSigner;
let source: string;
let merchantAccount: string;
let payments = 0;

beforeAll(async () => {
  w = await makeWorld({
    keys: {
      payer: {
        // Ten whole tokens a day in base units: far more than the payments below move.
        tokens: [tokenPolicy(MINT, { per_day: 10_000_000n })],
        usd: { per_tx: null, per_day: dollars('0.10'), approve_above: null },
      },
    },
    prices,
  });
  rpc = createSolanaRpc(w.localnet.url);
  facilitator = await fundedSigner((a, l) => w.localnet.airdrop(a, l));
  setMint(w.localnet, MINT, { decimals: 6 });
  source = setTokenAccount(w.localnet, { mint: MINT, owner: w.keys.payer!.pubkey, amount: 1_000_000n });
  merchantAccount = setTokenAccount(w.localnet, { mint: MINT, owner: randomAddress(), amount: 0n });
  w.localnet.setPrice({
    account: SOL_FEED.sponsoredAccount,
    feedId: SOL_FEED.feedId,
    price: '150',
    conf: '0',
    ageS: 0,
  });
  w.localnet.setPrice({ account: MINT_PRICE_ACCOUNT, feedId: MINT_FEED_ID, price: '1.00', conf: '0', ageS: 0 });
});

afterAll(() => w.close());

/**
 * The x402 payment: a TransferChecked the key signs as owner, the facilitator paying the fee; every slot empty.
 * Each goes to a token account of its own (the first to `merchantAccount`), so two payments of the same amount
 * under the same blockhash are two transactions, not one signed twice.
 */
async function payment(amount: bigint): Promise<string> {
  const destination =
    payments++ === 0
      ? merchantAccount
      : setTokenAccount(w.localnet, { mint: MINT, owner: randomAddress(), amount: 0n });
  const ix = transferChecked({ source, mint: MINT, destination, owner: w.keys.payer!.pubkey }, amount, 6);
  const roles = [AccountRole.WRITABLE, AccountRole.READONLY, AccountRole.WRITABLE, AccountRole.READONLY_SIGNER];
  const instruction: Instruction = {
    programAddress: address(ix.program_id),
    accounts: ix.accounts.map((a, i) => ({ address: address(a.pubkey), role: roles[i]! })),
    data: new Uint8Array(ix.data),
  };
  return wireTransaction(facilitator.address, [instruction], { lifetime: await latestLifetime(rpc) });
}

const pay = async (amount: bigint): Promise<Report> =>
  w.engine.sign({
    payload: { version: 2, transaction: await payment(amount), summary: 'x402 payment', warnings: [] },
    key: 'payer',
    mode: 'sign_only',
    principal: w.operator,
  });

/** What the facilitator does with the signer's bytes: adds its signature and sends. */
async function facilitatorSends(signedByKey: string): Promise<void> {
  const tx = await partiallySignTransaction(
    [facilitator.keyPair],
    getTransactionDecoder().decode(Buffer.from(signedByKey, 'base64')),
  );
  await rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64' }).send();
  await waitConfirmed(rpc, getSignatureFromTransaction(tx));
}

const usdUsage = async () => (await w.ledger.keyUsage('payer', Math.floor(Date.now() / 1000))).usdMicros;

test('a landed payment counts toward usd.per_day at exactly the value its intent recorded', async () => {
  const report = await pay(THREE_CENTS);
  expect(report).toMatchObject({
    outcome: 'signed',
    fee_payer: facilitator.address,
    usd_value: '0.03',
    remaining_daily_usd: '0.07',
  });
  await facilitatorSends(report.signed_transaction!);
  const final = await finalEntry(w.ledger, report.signature!, 10_000);
  expect(final.outcome).toBe('confirmed');
  expect(await tokenBalance(w.localnet.url, merchantAccount)).toBe(THREE_CENTS);
  let intent: AuditEntry | undefined;
  for await (const e of w.ledger.entries())
    if (e.signature === report.signature && e.command === 'sign-intent') intent = e;
  expect(intent).toMatchObject({ usd_micros: '30000' });
  expect(intent!.usd_prices).toEqual([
    expect.objectContaining({ asset: MINT, decimals: 6, amount: '30000', price: '100000000', exponent: -8 }),
  ]);
  expect(await usdUsage()).toBe(30_000n);
});

test('past usd.per_day a payment the base-unit caps allow is refused usd_per_day_cap with the figures', async () => {
  // $0.03 landed above, two more signed and not yet sent: their reservations count as well.
  for (let i = 0; i < 2; i++) expect(await pay(THREE_CENTS)).toMatchObject({ outcome: 'signed', usd_value: '0.03' });
  expect(await usdUsage()).toBe(90_000n);
  const refused = await pay(THREE_CENTS);
  expect(refused).toMatchObject({
    outcome: 'refused',
    failed_check: 'limits',
    reason: 'usd_per_day_cap',
    signature: null,
    signed_transaction: null,
    figures: { usd_spent: '0.09', usd_requested: '0.03', usd_cap: '0.10' },
  });
  // What is left, exactly, still passes: $0.01 brings the day to the cap.
  expect(await pay(10_000n)).toMatchObject({ outcome: 'signed', usd_value: '0.01', remaining_daily_usd: '0.00' });
  expect(await usdUsage()).toBe(100_000n);
  // Four payments' base units are far under the mint's daily cap: the dollars refused it, nothing else.
  const [shown] = await w.engine.keyShow({ key: 'payer', principal: w.operator });
  expect(shown?.policy.usd).toMatchObject({ spent_or_reserved_24h: '0.10', remaining_daily: '0.00' });
});
