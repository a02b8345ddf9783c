/**
 * The tripwire after the fact: when a landed transaction's metadata shows the key lost more than its intent
 * reserved, the final entry records the real spend, the key is halted with the reason, and an alert is raised.
 *
 * To make a real spend exceed the simulated one on the embedded chain, a JSON-RPC proxy in front of it (a stand-in
 * for a node that answers a simulation wrongly, or for any hole not known yet) rewrites the simulation's answer so
 * the key appears to lose only the fee; the transaction itself is real and moves its full amount when it lands.
 */
import { openEngine } from '../../src/signer';
import type { EngineAlert } from '../../src/signer/engine-deps';
import type { SignerEngine } from '../../src/signer/types';
import type { AuditEntry } from '../../src/ledger/types';
import { FaultProxy } from '../abuse/support/fault-proxy';
import { understateNextSimulation } from '../support/understated-simulation';
import { finalEntry, until } from '../support/async';
import { rpcResult } from '../support/rpc';
import { makeWorld, type World } from '../support/world';

const SOL = 1_000_000_000;
const FEE = 5_000;

let w: World;
let proxy: FaultProxy;
let engine: SignerEngine;
const alerts: EngineAlert[] = [];

beforeAll(async () => {
  proxy = await FaultProxy.start();
  w = await makeWorld({ keys: { alpha: {} }, rpcUrl: (url) => (proxy.setTarget(url), proxy.url()) });
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

const finalOf = (signature: string, timeoutMs = 10_000) => finalEntry(w.ledger, signature, timeoutMs);

async function intentOf(signature: string): Promise<AuditEntry | undefined> {
  for await (const e of w.ledger.entries()) if (e.signature === signature && e.command === 'sign-intent') return e;
  return undefined;
}

describe('a landed transaction that spent more than its reservation', () => {
  it('send path: recorded at its real size, the key halted with the reason, an alert raised', async () => {
    understateNextSimulation(proxy, FEE);
    const amount = SOL / 2;
    const report = await engine.sign({ payload: w.transfer('alpha', amount, 'understated'), principal: w.operator });
    expect(report.outcome).toBe('confirmed');
    // The intent reserved only the fee; the chain says the key lost the transfer too.
    expect((await intentOf(report.signature!))?.balance_change).toBe(-FEE);
    expect(report.balance_change).toBe(-(amount + FEE));
    expect(report.detail).toMatch(/tripwire: transaction \S+ landed spending more than the cap reserved/);
    const final = await finalOf(report.signature!);
    expect(final).toMatchObject({ outcome: 'confirmed', balance_change: -(amount + FEE) });
    const [view] = await engine.keyShow({ key: 'alpha', principal: w.operator });
    expect(view!.spent_or_reserved_24h).toBeGreaterThanOrEqual(amount + FEE);
    expect(view!.halted?.reason).toContain(`${amount + FEE} lamports spent, ${FEE} reserved`);
    expect(alerts).toContainEqual(
      expect.objectContaining({ kind: 'spend_over_reservation', key: 'alpha', signature: report.signature }),
    );
    // The cap holds from the next sign on: the key is halted until an operator resumes it.
    const next = await engine.sign({ payload: w.transfer('alpha', 1_000, 'after'), principal: w.operator });
    expect(next).toMatchObject({ outcome: 'refused', failed_check: 'halted', reason: 'halted' });
  });

  it('sign-only: the watcher records the real size when the caller sends it, and halts the key', async () => {
    understateNextSimulation(proxy, FEE);
    const amount = SOL / 4;
    const report = await engine.sign({
      payload: w.transfer('alpha', amount, 'understated, sign-only'),
      mode: 'sign_only',
      principal: w.operator,
    });
    expect(report.outcome).toBe('signed');
    await rpcResult(w.localnet.url, 'sendTransaction', [report.signed_transaction, { encoding: 'base64' }]);
    const final = await finalOf(report.signature!);
    expect(final).toMatchObject({ outcome: 'confirmed', balance_change: -(amount + FEE) });
    expect(final.detail).toMatch(/tripwire: it spent more than its reservation/);
    // The watcher halts the key and raises the alert after it wrote the final entry.
    const haltOf = async () => (await engine.keyShow({ key: 'alpha', principal: w.operator }))[0]!.halted;
    await until(async () => (await haltOf()) !== null, 'the tripwire halt');
    await until(() => alerts.some((a) => a.signature === report.signature), 'the tripwire alert');
    expect((await haltOf())?.reason).toContain(`${amount + FEE} lamports spent, ${FEE} reserved`);
    expect(alerts.filter((a) => a.signature === report.signature)).toHaveLength(1);
  });

  it('a transaction that spent what it reserved trips nothing', async () => {
    const before = alerts.length;
    const report = await engine.sign({ payload: w.transfer('alpha', 1_000, 'honest'), principal: w.operator });
    expect(report.outcome).toBe('confirmed');
    expect(report.detail).toBeNull();
    const [view] = await engine.keyShow({ key: 'alpha', principal: w.operator });
    expect(view!.halted).toBeNull();
    expect(alerts).toHaveLength(before);
  });
});
