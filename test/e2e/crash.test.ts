/**
 * kill -9 of a signing process at several points: the ledger must verify afterwards and every intent whose
 * transaction may have been sent must stay charged against the key's cap.
 */
import fs from 'node:fs';
import path from 'node:path';
import { assertBuilt, BIN, run, spawnBin, waitForOutput, writeYaml } from '../support/cli';
import { balanceOf, makeWorld, worldConfigDocument, type World } from '../support/world';
import { spentLamports } from '../../src/signer/policy/rules/daily-cap';

const FUNDED = 50_000_000_000;

const FEE = 5000;

describe('crash safety of sign (kill -9 of the CLI)', () => {
  let w: World;
  let configFile: string;
  let payloadFile: string;

  beforeAll(async () => {
    assertBuilt(BIN.signer);
    w = await makeWorld({
      keys: { alpha: {} },
      blockIntervalMs: 100,
      timings: { confirm_deadline_ms: 60_000, poll_interval_ms: 20 },
    });
    configFile = path.join(w.dir, 'config.yaml');
    writeYaml(configFile, worldConfigDocument(w));
    payloadFile = path.join(w.dir, 'payload.json');
    fs.writeFileSync(payloadFile, JSON.stringify(w.transfer('alpha', 1_000_000)));
  });
  afterAll(() => w.close());

  async function verifyOk(): Promise<void> {
    const v = await run(BIN.signer, ['--config', configFile, 'audit', 'verify']);
    expect(v.stdout.trim()).toMatch(/^ok: \d+ entries$/);
    expect(v.code).toBe(0);
  }

  /** What the ledger charges against the key's cap now (read fresh: the signs ran in other processes). */
  async function spent(): Promise<number> {
    return spentLamports(
      await w.ledger.keyUsage('alpha', Math.floor(Date.now() / 1000)),
      w.keys.alpha!.daily_lamport_cap,
    );
  }

  it('after the intent is written and the transaction sent, the orphan intent stays charged', async () => {
    w.localnet.faults.stallConfirmations(true);
    try {
      const before = await spent();
      const child = spawnBin(BIN.signer, ['--config', configFile, 'sign', payloadFile]);
      const exited = new Promise((r) => child.once('exit', r));
      await waitForOutput(child, /confirming/);
      child.kill('SIGKILL');
      await exited;
      await verifyOk();
      const entries = await w.ledger.tail(1);
      expect(entries[0]).toMatchObject({ command: 'sign-intent', outcome: 'pending' });
      expect(await spent()).toBe(before + 1_000_000 + FEE);
    } finally {
      w.localnet.faults.stallConfirmations(false);
    }
  });

  it('at instants across a sign the ledger always verifies and never undercharges', async () => {
    let killedAfterIntent = 0;
    let killedBeforeIntent = 0;
    // Instants relative to what the process has reached: before its intent (during start-up and checks, or at the
    // cap gate, where it takes the key's lock for a few milliseconds), right after it, while confirming.
    const points: [RegExp | null, number][] = [
      [null, 0],
      [/key lock/, 0],
      [/key lock/, 15],
      [/key lock/, 40],
      [/sent /, 0],
      [/sent /, 20],
      [/sent /, 60],
      [/confirming/, 0],
      [/confirming/, 50],
    ];
    for (const [marker, delayMs] of points) {
      const before = await w.ledger.tail(10_000);
      const child = spawnBin(BIN.signer, ['--config', configFile, 'sign', payloadFile]);
      const exited = new Promise((r) => child.once('exit', r));
      if (marker) await waitForOutput(child, marker).catch(() => undefined); // it may finish first
      await new Promise((r) => setTimeout(r, delayMs));
      child.kill('SIGKILL'); // a no-op if the sign already finished
      await exited;
      await verifyOk();
      // What actually left the account on-chain is never more than the ledger charges against the cap.
      const onChainSpend = FUNDED - (await balanceOf(w, w.keys.alpha!.pubkey));
      expect(await spent()).toBeGreaterThanOrEqual(onChainSpend);
      const added = (await w.ledger.tail(10_000)).slice(before.length);
      if (added.some((e) => e.command === 'sign-intent') && !added.some((e) => e.command === 'sign'))
        killedAfterIntent++;
      if (added.length === 0) killedBeforeIntent++;
    }
    expect(killedAfterIntent).toBeGreaterThan(0);
    expect(killedBeforeIntent).toBeGreaterThan(0);
    // The key's lock was left by dead processes: the next sign takes it over and completes.
    const r = await run(BIN.signer, ['--config', configFile, 'sign', payloadFile]);
    expect(JSON.parse(r.stdout)).toMatchObject({ outcome: 'confirmed' });
    expect(r.code).toBe(0);
  }, 120_000);
});
