/**
 * A halt the ledger cannot record at that moment: the caller is told, this process keeps refusing the key, and the
 * halt reaches the ledger as soon as it is writable again, so `key show`, `resume` and other processes see it.
 * "Cannot record" is real: another connection holds SQLite's write lock while the engine's ledger waits 20 ms.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { JsonRpcClient } from '../../src/rpc/rpc-client';
import { openLedger } from '../../src/ledger/open';
import type { Ledger } from '../../src/ledger/types';
import { createEngine } from '../../src/signer/engine';
import { HELD_HALTS_FILE } from '../../src/signer/held-halts-file';
import type { SignerEngine } from '../../src/signer/types';
import { makeWorld, type World } from '../support/world';

const token = { kind: 'token', name: 'agent', keys: ['alpha'] } as const;

describe('a halt the ledger could not record', () => {
  let w: World;
  let ledger: Ledger;
  let engine: SignerEngine;
  let blocker: Database.Database;

  const holdWriteLock = (): void => {
    blocker.exec('BEGIN IMMEDIATE');
  };
  const releaseWriteLock = (): void => {
    if (blocker.inTransaction) blocker.exec('ROLLBACK');
  };
  const commands = async (): Promise<string[]> =>
    (await w.ledger.tail(1000)).filter((e) => e.key === 'alpha').map((e) => `${e.command}:${e.outcome}`);

  beforeEach(async () => {
    w = await makeWorld({ keys: { alpha: {} } });
    ledger = await openLedger(w.config.ledger, { sqlite: { busyTimeoutMs: 20 } });
    engine = createEngine({
      config: w.config,
      chain: new JsonRpcClient(w.localnet.url, { timeoutMs: 2000 }),
      ledger,
    });
    blocker = new Database((w.config.ledger as { path: string }).path);
    blocker.pragma('busy_timeout = 0');
  });
  afterEach(async () => {
    releaseWriteLock();
    blocker.close();
    await engine.close();
    await w.close();
  });

  it('is reported as not recorded, keeps refusing the key, and is written once the ledger is writable', async () => {
    holdWriteLock();
    const result = await engine.halt({ key: 'alpha', reason: 'runaway agent', principal: token });
    expect(result.halted).toEqual([]);
    expect(result.not_recorded).toEqual([{ key: 'alpha', error: expect.stringMatching(/halt/) as unknown }]);

    // While the ledger cannot take it, this process refuses the key and shows the halt.
    const refused = await engine.check({ payload: w.transfer('alpha', 1_000_000), principal: token });
    expect(refused).toMatchObject({ outcome: 'refused', failed_check: 'halted', reason: 'halted' });
    expect((await engine.keyShow({ key: 'alpha', principal: token }))[0]!.halted).toMatchObject({
      reason: 'runaway agent',
      by: 'token:agent',
    });
    expect(await w.ledger.getHalt('alpha')).toBeNull();

    // Writable again: the held halt reaches the ledger without anyone touching the key.
    releaseWriteLock();
    const deadline = Date.now() + 5_000;
    while ((await w.ledger.getHalt('alpha')) === null && Date.now() < deadline) await sleep(50);
    expect(await w.ledger.getHalt('alpha')).toMatchObject({ key: 'alpha', reason: 'runaway agent', by: 'token:agent' });
    expect(await commands()).toEqual(['halt:halted']);

    // Now any process can lift it, and this one signs again.
    expect(await w.ledger.resume('alpha', 'operator', Math.floor(Date.now() / 1000))).toBe(true);
    const sends = w.localnet.stats().sends;
    expect((await engine.sign({ payload: w.transfer('alpha', 1_000_000), principal: w.operator })).outcome).toBe(
      'confirmed',
    );
    expect(w.localnet.stats().sends).toBeGreaterThan(sends);
  });

  it('is lifted by another process even when that resume lands before this process hears its halt was recorded', async () => {
    // The held halt's write commits (other connections see it) and then waits, as a write waits for its fsync;
    // meanwhile another process resumes the key. The answer of that write must not bring the halt back.
    let reportRecorded!: () => void;
    const recordedReported = new Promise<void>((r) => (reportRecorded = r));
    let committed!: () => void;
    const commitSeen = new Promise<void>((r) => (committed = r));
    await engine.close();
    const real = await openLedger(w.config.ledger, { sqlite: { busyTimeoutMs: 20 } });
    const slowHalt: Ledger['halt'] = async (record) => {
      const stored = await real.halt(record);
      committed();
      await recordedReported;
      return stored;
    };
    const slowToHear = new Proxy(real, {
      get(target, name) {
        if (name === 'halt') return slowHalt;
        const value: unknown = Reflect.get(target, name);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    engine = createEngine({
      config: w.config,
      chain: new JsonRpcClient(w.localnet.url, { timeoutMs: 2000 }),
      ledger: slowToHear,
    });
    holdWriteLock();
    expect((await engine.halt({ key: 'alpha', reason: 'stop', principal: w.operator })).not_recorded).toHaveLength(1);
    releaseWriteLock();

    const check = (): ReturnType<SignerEngine['check']> =>
      engine.check({ payload: w.transfer('alpha', 1_000_000), principal: w.operator });
    const first = check(); // offers the held halt to the ledger again
    await commitSeen;
    expect(await w.ledger.getHalt('alpha')).toMatchObject({ reason: 'stop' });
    expect(await w.ledger.resume('alpha', 'operator', Math.floor(Date.now() / 1000))).toBe(true);
    const second = check();
    reportRecorded();
    expect((await first).outcome).toBe('ok');
    expect((await second).outcome).toBe('ok');
    expect(await commands()).toEqual(['halt:halted', 'resume:resumed']);
  });

  it('is not lifted by a resume while the ledger still cannot record it, and a later resume writes both', async () => {
    holdWriteLock();
    expect((await engine.halt({ key: 'alpha', reason: 'stop', principal: w.operator })).not_recorded).toHaveLength(1);
    await expect(engine.resume('alpha')).rejects.toMatchObject({
      code: 'ledger',
      message: expect.stringMatching(/nothing was resumed/) as unknown,
    });
    expect((await engine.check({ payload: w.transfer('alpha', 1_000_000), principal: w.operator })).reason).toBe(
      'halted',
    );

    releaseWriteLock();
    expect(await engine.resume('alpha')).toBe(true);
    expect(await commands()).toEqual(['halt:halted', 'resume:resumed']);
    expect(await w.ledger.getHalt('alpha')).toBeNull();
    expect((await engine.check({ payload: w.transfer('alpha', 1_000_000), principal: w.operator })).outcome).toBe('ok');
  });

  it('survives a restart: stopped before the ledger took it, the next start holds it and writes it', async () => {
    holdWriteLock();
    expect((await engine.halt({ key: 'alpha', reason: 'runaway agent', principal: token })).not_recorded).toHaveLength(
      1,
    );
    // The service stops while another process still holds the write lock; the lock is released; it starts again.
    await engine.close();
    releaseWriteLock();
    expect(await w.ledger.getHalt('alpha')).toBeNull();
    ledger = await openLedger(w.config.ledger, { sqlite: { busyTimeoutMs: 20 } });
    engine = createEngine({ config: w.config, chain: new JsonRpcClient(w.localnet.url, { timeoutMs: 2000 }), ledger });
    const refused = await engine.check({ payload: w.transfer('alpha', 1_000_000), principal: token });
    expect(refused).toMatchObject({ outcome: 'refused', failed_check: 'halted', reason: 'halted' });
    expect(await w.ledger.getHalt('alpha')).toMatchObject({ key: 'alpha', reason: 'runaway agent', by: 'token:agent' });
    expect(await commands()).toEqual(['halt:halted']);
    expect(fs.existsSync(path.join(w.config.state_dir, HELD_HALTS_FILE))).toBe(false);
  });

  it('refuses a sign for the held key even before the ledger is back', async () => {
    holdWriteLock();
    await engine.halt({ key: 'alpha', reason: 'stop', principal: w.operator });
    const sends = w.localnet.stats().sends;
    const outcome = await engine.sign({ payload: w.transfer('alpha', 1_000_000), principal: w.operator }).then(
      (r) => r.reason,
      (e: unknown) => (e as { code?: string }).code,
    );
    expect(['halted', 'ledger']).toContain(outcome);
    expect(w.localnet.stats().sends).toBe(sends);
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
