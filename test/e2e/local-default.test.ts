/**
 * The embedded default (`npm start`): its chain starts from genesis on every start, so every start begins a fresh
 * ledger and keeps the previous one under state/previous-runs/.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { prepareLocalDefault, runDemo } from '../../src/cli/local-default';
import { openLedger } from '../../src/ledger/open';
import { openEngine } from '../../src/signer';
import { freePort } from '../support/ports';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'local-default-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a restart starts a fresh chain and a fresh ledger; the previous ledger is kept to read', async () => {
  const env = { SIGNER_RPC_URL: `http://127.0.0.1:${String(await freePort())}` };
  const logged: string[] = [];
  const first = await prepareLocalDefault(dir, env, (l) => logged.push(l));
  expect(first.firstRun).toBe(true);
  expect(first.archivedLedger).toBeNull();
  const engine = await openEngine(first.config);
  const demo: string[] = [];
  await runDemo(engine, first.config, (l) => demo.push(l));
  expect(demo.join('\n')).toMatch(/demo: sign → confirmed/);
  const spent = (await engine.keyShow({ principal: { kind: 'operator' } }))[0]?.spent_or_reserved_24h;
  expect(spent).toBeGreaterThan(0);
  await engine.close();
  await first.close();

  const second = await prepareLocalDefault(dir, env, (l) => logged.push(l));
  try {
    expect(second.firstRun).toBe(false);
    expect(second.archivedLedger).not.toBeNull();
    expect(logged.join('\n')).toMatch(/fresh embedded chain, so a fresh ledger: the previous run's ledger is now /);
    const fresh = await openEngine(second.config);
    const view = (await fresh.keyShow({ principal: { kind: 'operator' } }))[0];
    expect(view?.spent_or_reserved_24h).toBe(0);
    expect(view?.balance_lamports).toBe(100_000_000_000);
    await fresh.close();
    const ledger = await openLedger(second.config.ledger);
    expect(await ledger.verify()).toEqual({ ok: true, entries: 0 });
    await ledger.close();
    const previous = await openLedger({ store: 'sqlite', path: second.archivedLedger ?? '' });
    const kept = await previous.verify();
    expect(kept.ok && kept.entries).toBeGreaterThanOrEqual(2);
    await previous.close();
  } finally {
    await second.close();
  }
});
