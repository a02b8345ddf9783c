/**
 * Before and after from one bank (issue: a spend hidden by a balance read from a later bank). The signer's
 * simulation is followed by a read of the balances before; if another signed transaction of the same key lands
 * between the two, that read comes from a later bank and would subtract the other transaction's spend from this
 * one's. A JSON-RPC proxy in front of the embedded chain (a stand-in for the network's timing: on a cluster the gap
 * is one round trip) lands the key's own sign-only transaction exactly between the simulation and the read. The
 * sign must be judged on one bank and refused by the cap (SOL: the lamports before come from the simulation's own
 * pre-state) or the mint's destination list (token: simulated again, since the token amounts read disagree).
 */
import type { TokenPolicy } from '../../src/config/types';
import { SAME_BANK_ATTEMPTS } from '../../src/signer/flow/simulate';
import type { Report } from '../../src/signer/report';
import { FaultProxy } from '../abuse/support/fault-proxy';
import { payload, randomAddress } from '../support/payloads';
import { rpcResult } from '../support/rpc';
import { setMint, setTokenAccount, tokenBalance, transferChecked } from '../support/tokens';
import { balanceOf, makeWorld, type World } from '../support/world';

const SOL = 1_000_000_000;
const M = 1_000_000n;
const USDC = randomAddress();
const merchant = randomAddress();
const stranger = randomAddress();

const usdc: TokenPolicy = {
  mint: USDC,
  program: 'spl-token',
  per_tx: null,
  per_day: 1_000n * M,
  destinations: [merchant],
  per_destination_per_day: null,
  approve_above: null,
};

let w: World;
let proxy: FaultProxy;
let keyUsdc: string;
let merchantUsdc: string;
let strangerUsdc: string;

beforeAll(async () => {
  proxy = await FaultProxy.start();
  w = await makeWorld({
    keys: {
      alpha: { daily_lamport_cap: (7 * SOL) / 10 },
      payer: { tokens: [usdc] },
    },
    rpcUrl: (url) => (proxy.setTarget(url), proxy.url()),
  });
  w.localnet.airdrop(w.keys.alpha!.destination, SOL);
  setMint(w.localnet, USDC, { decimals: 6 });
  keyUsdc = setTokenAccount(w.localnet, { mint: USDC, owner: w.keys.payer!.pubkey, amount: 100n * M });
  merchantUsdc = setTokenAccount(w.localnet, { mint: USDC, owner: merchant, amount: 0n });
  strangerUsdc = setTokenAccount(w.localnet, { mint: USDC, owner: stranger, amount: 0n });
});

afterAll(async () => {
  await w.close();
  await proxy.close();
});

afterEach(() => proxy.reset());

const isPinnedRead = (c: { method: string; params: unknown[] }): boolean =>
  c.method === 'getMultipleAccounts' &&
  typeof (c.params[1] as { minContextSlot?: unknown } | undefined)?.minContextSlot === 'number';

/** Lands `signedTransaction` on the chain (straight, not through the proxy) the first time the pinned read passes. */
function landBeforeFirstPinnedRead(signedTransaction: string): { landed: () => boolean } {
  let done = false;
  proxy.beforeForward = async (calls) => {
    if (done || !calls.some(isPinnedRead)) return;
    done = true;
    await rpcResult(w.localnet.url, 'sendTransaction', [signedTransaction, { encoding: 'base64' }]);
    // The read now comes from a later bank than the simulation's.
    w.localnet.advanceBlocks(1);
  };
  return { landed: () => done };
}

const signOnly = (p: Record<string, unknown>): Promise<Report> =>
  w.engine.sign({ payload: p, mode: 'sign_only', principal: w.operator });

describe('a transaction of the key lands between the simulation and the read of the balances before', () => {
  it("SOL: the sign is judged on the simulation's own pre-state and refused by the cap; nothing is sent", async () => {
    const alpha = w.keys.alpha!;
    const first = await signOnly(w.transfer('alpha', (3 * SOL) / 10, 'first, sign-only'));
    expect(first.outcome).toBe('signed');
    const race = landBeforeFirstPinnedRead(first.signed_transaction!);
    const simulations = proxy.calls.simulateTransaction ?? 0;
    const destBefore = await balanceOf(w, alpha.destination);

    const second = await w.engine.sign({ payload: w.transfer('alpha', SOL / 2, 'second'), principal: w.operator });
    expect(race.landed()).toBe(true);
    // Judged on one bank: 0.5 SOL, which with the first's 0.3 passes the 0.7 SOL cap (not 0.2 as a later read says).
    expect(second).toMatchObject({ outcome: 'refused', failed_check: 'limits', reason: 'per_day_cap' });
    expect(second.balance_change).toBeLessThanOrEqual(-SOL / 2);
    // The key's other transaction changed only its lamports, which the simulation reports as they were: no retry.
    expect((proxy.calls.simulateTransaction ?? 0) - simulations).toBe(1);
    expect(proxy.forwardedSends).toHaveLength(0);
    // Only the first transfer moved.
    expect((await balanceOf(w, alpha.destination)) - destBefore).toBe((3 * SOL) / 10);
  });

  it('token: judged again on one bank, a transfer to an owner outside the mint destinations is refused', async () => {
    const payer = w.keys.payer!;
    const pay = (to: string, amount: bigint, summary: string) =>
      payload(
        payer.pubkey,
        [transferChecked({ source: keyUsdc, mint: USDC, destination: to, owner: payer.pubkey }, amount, 6)],
        {
          summary,
        },
      );
    const first = await signOnly(pay(merchantUsdc, 5n * M, 'to the merchant, sign-only'));
    expect(first.outcome).toBe('signed');
    const race = landBeforeFirstPinnedRead(first.signed_transaction!);
    const simulations = proxy.calls.simulateTransaction ?? 0;

    const second = await w.engine.sign({ payload: pay(strangerUsdc, 5n * M, 'to a stranger'), principal: w.operator });
    expect(race.landed()).toBe(true);
    expect(second).toMatchObject({
      outcome: 'refused',
      reason: 'token_destination_not_allowed',
      figures: { mint: USDC, destination: stranger },
    });
    expect(second.token_changes?.[0]?.change).toBe('-5000000');
    expect((proxy.calls.simulateTransaction ?? 0) - simulations).toBe(2);
    expect(await tokenBalance(w.localnet.url, strangerUsdc)).toBe(0n);
    expect(await tokenBalance(w.localnet.url, merchantUsdc)).toBe(5n * M);
  });

  it(`when every read comes from a later bank the sign is refused after ${SAME_BANK_ATTEMPTS} simulations`, async () => {
    const payer = w.keys.payer!;
    // Before each pinned read the key's token balance moves (tokens sent to it), so no read agrees with the
    // simulation's pre-state.
    let amount = 100n * M;
    proxy.beforeForward = (calls) => {
      if (calls.some(isPinnedRead)) {
        amount += 1n;
        setTokenAccount(w.localnet, { mint: USDC, owner: payer.pubkey, amount, address: keyUsdc });
      }
      return Promise.resolve();
    };
    const p = payload(
      payer.pubkey,
      [transferChecked({ source: keyUsdc, mint: USDC, destination: merchantUsdc, owner: payer.pubkey }, 1n, 6)],
      { summary: 'small' },
    );
    const r = await w.engine.sign({ payload: p, principal: w.operator });
    expect(r).toMatchObject({ outcome: 'refused', failed_check: 'limits', reason: 'spend_unknown', figures: null });
    expect(proxy.calls.simulateTransaction).toBe(SAME_BANK_ATTEMPTS);
    expect(proxy.forwardedSends).toHaveLength(0);
  });
});
