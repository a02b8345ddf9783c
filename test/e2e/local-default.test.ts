/**
 * The embedded default (`npm start`): its chain starts from genesis on every start, so every start begins a fresh
 * ledger and keeps the previous one under state/previous-runs/; the halts hold on in the fresh ledger.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { prepareLocalDefault, runDemo } from '../../src/cli/local-default';
import { openLedger } from '../../src/ledger/open';
import { openEngine } from '../../src/signer';
import { HELD_HALTS_FILE } from '../../src/signer/held-halts-file';
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

test('a previous ledger whose halts cannot be read is not moved: the start stops and says what to do', async () => {
  const env = { SIGNER_RPC_URL: `http://127.0.0.1:${String(await freePort())}` };
  const first = await prepareLocalDefault(dir, env, () => {});
  await first.close();
  const ledgerFile = path.join(dir, 'state', 'ledger.sqlite');
  fs.mkdirSync(path.dirname(ledgerFile), { recursive: true });
  fs.writeFileSync(ledgerFile, 'not a SQLite database, whatever it once was');

  await expect(prepareLocalDefault(dir, env, () => {})).rejects.toMatchObject({
    code: 'ledger',
    message: expect.stringMatching(
      /^cannot start a fresh ledger: the halts of the previous run's ledger .*ledger\.sqlite cannot be read \(.+\), and a halt must outlive the restart; nothing was moved\. Repair it, or move it aside yourself/,
    ) as unknown,
  });
  expect(fs.readFileSync(ledgerFile, 'utf8')).toBe('not a SQLite database, whatever it once was');
  expect(fs.existsSync(path.join(dir, 'state', 'previous-runs'))).toBe(false);
  // The chain it started is closed again: the same address serves the next start.
  const again = await prepareLocalDefault(dir, { ...env }, () => {}).catch((e: unknown) => e);
  expect(again).toMatchObject({ code: 'ledger' });
});

test("a restart records the previous ledger's halts and the held ones in the fresh ledger; the ledger's record of a key wins", async () => {
  const env = { SIGNER_RPC_URL: `http://127.0.0.1:${String(await freePort())}` };
  const first = await prepareLocalDefault(dir, env, () => {});
  const engine = await openEngine(first.config);
  await engine.halt({ key: 'demo', reason: 'recorded', principal: { kind: 'operator' } });
  await engine.close();
  await first.close();
  // Halts an earlier run held because its ledger could not take them: one for the halted key, one for another.
  const stateDir = path.join(dir, 'state');
  const held = [
    { key: 'demo', reason: 'held', by: 'token:local', ts: 1 },
    { key: 'gone', reason: 'held too', by: 'token:local', ts: 2 },
  ];
  fs.writeFileSync(path.join(stateDir, HELD_HALTS_FILE), JSON.stringify(held));

  const logged: string[] = [];
  const second = await prepareLocalDefault(dir, env, (l) => logged.push(l));
  try {
    const archive = path.relative(stateDir, second.archivedLedger ?? '');
    const ledger = await openLedger(second.config.ledger);
    const halts = await ledger.listHalts();
    const entries = await ledger.tail(10);
    await ledger.close();
    expect(halts).toEqual([
      { key: 'demo', reason: 'recorded', by: 'operator', ts: expect.any(Number) as unknown },
      { key: 'gone', reason: 'held too', by: 'token:local', ts: 2 },
    ]);
    expect(entries.map((e) => [e.key, e.summary, e.detail])).toEqual(
      expect.arrayContaining([
        ['demo', 'recorded', `by operator; carried over from the archived ledger ${archive}`],
        ['gone', 'held too', 'by token:local'],
      ]),
    );
    expect(entries).toHaveLength(2);
    expect(fs.existsSync(path.join(stateDir, HELD_HALTS_FILE))).toBe(false);
    expect(logged.join('\n')).toContain('halts carried over to the fresh ledger: demo');
  } finally {
    await second.close();
  }
});

test('a start cut short after the move left the halts in the state directory: the next start records them', async () => {
  const env = { SIGNER_RPC_URL: `http://127.0.0.1:${String(await freePort())}` };
  const first = await prepareLocalDefault(dir, env, () => {});
  await first.close();
  // What a start leaves when it stops right after moving the ledger: no ledger, the halt to carry in the file.
  const stateDir = path.join(dir, 'state');
  fs.mkdirSync(stateDir, { recursive: true });
  const carried = {
    key: 'demo',
    reason: 'runaway agent',
    by: 'operator',
    ts: 5,
    carried_from: 'previous-runs/2026-01-01T00-00-00-000Z/ledger.sqlite',
  };
  fs.writeFileSync(path.join(stateDir, HELD_HALTS_FILE), JSON.stringify([carried]));

  const second = await prepareLocalDefault(dir, env, () => {});
  try {
    expect(second.archivedLedger).toBeNull();
    const ledger = await openLedger(second.config.ledger);
    expect(await ledger.getHalt('demo')).toEqual({ key: 'demo', reason: 'runaway agent', by: 'operator', ts: 5 });
    expect((await ledger.tail(1))[0]!.detail).toBe(
      'by operator; carried over from the archived ledger previous-runs/2026-01-01T00-00-00-000Z/ledger.sqlite',
    );
    await ledger.close();
    expect(fs.existsSync(path.join(stateDir, HELD_HALTS_FILE))).toBe(false);
  } finally {
    await second.close();
  }
});
