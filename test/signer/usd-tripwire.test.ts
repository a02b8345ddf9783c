/**
 * The tripwire in dollars (docs/pricing.md, docs/policy.md "The tripwire"): a key with dollar caps whose transaction
 * lands spending more than its intent reserved is halted, and the halt says what the landing was worth at the prices
 * the intent recorded when it was signed (never at the price of the moment it landed), beside what was reserved; the
 * final entry records that landed value, so the daily dollar usage counts the real spend.
 *
 * As in tripwire.test.ts, a JSON-RPC proxy in front of the embedded chain rewrites the simulation's answer so the
 * key appears to lose only the fee; the transaction is real and moves its full amount when it lands.
 */
import type { AuditEntry } from '../../src/ledger/types';
import { openEngine } from '../../src/signer';
import type { EngineAlert } from '../../src/signer/engine-deps';
import type { SignerEngine } from '../../src/signer/types';
import { FaultProxy } from '../abuse/support/fault-proxy';
import { understateNextSimulation } from '../support/understated-simulation';
import { finalEntry, until } from '../support/async';
import { rpcResult } from '../support/rpc';
import { outboxOnlyNotify } from '../support/outbox-hook';
import { makeWorld, type World } from '../support/world';
import { dollars, SOL_FEED, SOL_PRICES, setSolPrice } from '../support/prices';

const SOL = 1_000_000_000;
const FEE = 5_000;

let w: World;
let proxy: FaultProxy;
let engine: SignerEngine;
const alerts: EngineAlert[] = [];

beforeAll(async () => {
  proxy = await FaultProxy.start();
  w = await makeWorld({
    // A daily dollar cap far above what is moved: only the tripwire is under test.
    keys: { alpha: { usd: { per_tx: null, per_day: dollars('1000.00'), approve_above: null } } },
    rpcUrl: (url) => (proxy.setTarget(url), proxy.url()),
    prices: SOL_PRICES,
    // The halt's event is looked at in the outbox.
    notify: outboxOnlyNotify('halts', ['key.halted']),
  });
  w.localnet.airdrop(w.keys.alpha!.destination, SOL);
  engine = await openEngine(w.config, { observer: { alert: (a) => alerts.push(a), watchPoll: () => {} } });
});

afterAll(async () => {
  await engine.close();
  await w.close();
  await proxy.close();
});

afterEach(async () => {
  proxy.reset();
  await engine.resume('alpha');
});

async function entriesOf(signature: string): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  for await (const e of w.ledger.entries()) if (e.signature === signature) out.push(e);
  return out;
}

async function lastHalt(): Promise<AuditEntry | undefined> {
  let halt: AuditEntry | undefined;
  for await (const e of w.ledger.entries()) if (e.command === 'halt' && e.key === 'alpha') halt = e;
  return halt;
}

const usdUsage = async () => (await w.ledger.keyUsage('alpha', Math.floor(Date.now() / 1000))).usdMicros;

describe('a landed spend worth more than the dollars its intent reserved', () => {
  it('send path: the halt gives the landed value at the recorded price and the reserved value; the final records it', async () => {
    setSolPrice(w.localnet, '150');
    understateNextSimulation(proxy, FEE);
    const before = await usdUsage();
    const amount = SOL / 10;
    const report = await engine.sign({ payload: w.transfer('alpha', amount, 'understated'), principal: w.operator });
    expect(report.outcome).toBe('confirmed');
    const [intent, final] = await entriesOf(report.signature!);
    // The intent reserved the fee's worth at $150 (5 000 lamports: $0.00075), with the price it was valued at.
    expect(intent).toMatchObject({ command: 'sign-intent', balance_change: -FEE, usd_micros: '750' });
    expect(intent!.usd_prices).toEqual([
      expect.objectContaining({
        asset: 'SOL',
        decimals: 9,
        amount: String(FEE),
        usd_micros: '750',
        price: '15000000000',
        conf: '0',
        exponent: -8,
        account: SOL_FEED.sponsoredAccount,
      }),
    ]);
    // It landed moving 0.1 SOL and the fee: $15.00075 at the same $150.
    const reason = `$15.00075 spent at the prices recorded at the sign, $0.00075 reserved`;
    expect(report.detail).toContain(reason);
    expect(final).toMatchObject({ command: 'sign', outcome: 'confirmed', usd_micros: '15000750' });
    expect(await usdUsage()).toBe(before + 15_000_750n);
    const halt = await lastHalt();
    expect(halt).toMatchObject({ outcome: 'halted', detail: 'by signer (tripwire)' });
    expect(halt!.summary).toContain(`${reason}; ${amount + FEE} lamports spent, ${FEE} reserved`);
    // The key.halted webhook carries the reason bounded to its first 280 characters: the dollars come first.
    const notified = (await w.ledger.listNotifications({ limit: 100 })).filter((n) => n.event === 'key.halted');
    expect(notified.map((n) => n.body).join('\n')).toContain(reason);
    expect(alerts).toContainEqual(
      expect.objectContaining({
        kind: 'spend_over_reservation',
        signature: report.signature,
        detail: expect.stringContaining(reason) as unknown,
      }),
    );
    const next = await engine.sign({ payload: w.transfer('alpha', 1_000, 'after'), principal: w.operator });
    expect(next).toMatchObject({ outcome: 'refused', failed_check: 'halted', reason: 'halted' });
  });

  it('sign-only: landing after the price moved is still valued at the price recorded at the sign', async () => {
    setSolPrice(w.localnet, '150');
    understateNextSimulation(proxy, FEE);
    const before = await usdUsage();
    const amount = SOL / 20;
    const report = await engine.sign({
      payload: w.transfer('alpha', amount, 'understated, sign-only'),
      mode: 'sign_only',
      principal: w.operator,
    });
    expect(report.outcome).toBe('signed');
    // SOL is at $3 000 by the time the caller sends it: at that price the landing would be worth $150.015.
    setSolPrice(w.localnet, '3000');
    await rpcResult(w.localnet.url, 'sendTransaction', [report.signed_transaction, { encoding: 'base64' }]);
    const final = await finalEntry(w.ledger, report.signature!, 10_000);
    // 0.05 SOL and the fee at the recorded $150: $7.50075.
    const reason = `$7.50075 spent at the prices recorded at the sign, $0.00075 reserved`;
    expect(final).toMatchObject({ outcome: 'confirmed', balance_change: -(amount + FEE), usd_micros: '7500750' });
    expect(final.detail).toContain(reason);
    await until(async () => (await lastHalt())?.summary.includes(report.signature!) === true, 'the tripwire halt');
    expect((await lastHalt())!.summary).toContain(reason);
    expect(await usdUsage()).toBe(before + 7_500_750n);
  });

  it('a transaction that spent what it reserved trips nothing and its final records no value of its own', async () => {
    setSolPrice(w.localnet, '150');
    const before = alerts.length;
    const report = await engine.sign({ payload: w.transfer('alpha', 1_000_000, 'honest'), principal: w.operator });
    expect(report).toMatchObject({ outcome: 'confirmed', detail: null, usd_value: '0.15075' });
    const [intent, final] = await entriesOf(report.signature!);
    expect(intent).toMatchObject({ usd_micros: '150750' });
    expect(final).not.toHaveProperty('usd_micros');
    const [view] = await engine.keyShow({ key: 'alpha', principal: w.operator });
    expect(view!.halted).toBeNull();
    expect(alerts).toHaveLength(before);
  });
});
