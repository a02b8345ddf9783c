/**
 * The SQLite store's one-transaction cap gate (reserveAtOnce): what it decides on, and when it leaves the gate to
 * the key's lock. A second handle on the same file stands for another process (its own connections, mutex and
 * usage books). The contract (contract.ts) runs the whole gate over several handles at once on both stores.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { LedgerConfig } from '../../src/config/types';
import { openLedger } from '../../src/ledger/open';
import type { Ledger, ReserveDecision, ReserveRequest, ReserveView } from '../../src/ledger/types';
import { nowSeconds } from '../../src/util/time';
import { intentInput } from './helpers';
import { spentLamports } from '../../src/signer/policy/rules/daily-cap';

const KEY = 'game';
const CAP = 1_000_000;

describe('SQLite: the cap gate as one write transaction (reserveAtOnce)', () => {
  let dir: string;
  let cfg: LedgerConfig;
  let ledger: Ledger;
  const others: Ledger[] = [];
  const another = async () => {
    const l = await openLedger(cfg, { sqlite: { lockPollMs: 5 } });
    others.push(l);
    return l;
  };

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'ledger-reserve-'));
    cfg = { store: 'sqlite', path: path.join(dir, 'state', 'ledger.db') };
    ledger = await openLedger(cfg, { sqlite: { lockPollMs: 5 } });
  });
  afterEach(async () => {
    for (const l of others.splice(0)) await l.close();
    await ledger.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const request = (signature: string | null = 'sig-new'): ReserveRequest => ({
    key: KEY,
    now: nowSeconds(),
    signature,
  });
  /** A decision that records every view it was asked about and appends an intent of `spend` lamports. */
  const reserving = (spend: number, signature = 'sig-new') => {
    const views: ReserveView[] = [];
    const decide = (view: ReserveView): ReserveDecision<string> => {
      views.push(view);
      return {
        intent: intentInput({ ts: nowSeconds(), key: KEY, signature, balance_change: -spend }),
        result: 'reserved',
      };
    };
    return { views, decide };
  };
  /** The key's usage read once, as a sign's preflight reads it before the gate. */
  const preflight = (l: Ledger) => l.keyUsage(KEY, nowSeconds());

  it('decides on the usage, the in-flight signatures and the halt, and appends the intent it returns', async () => {
    await ledger.append(intentInput({ ts: nowSeconds(), key: KEY, signature: 'sig-open', balance_change: -700 }));
    await ledger.halt({ key: KEY, reason: 'checking', by: 'op', ts: nowSeconds() });
    await preflight(ledger);
    const { views, decide } = reserving(300, 'sig-open-2');

    expect(await ledger.reserveAtOnce(request('sig-open'), decide)).toBe('reserved');
    expect(views).toHaveLength(1);
    expect(spentLamports(views[0]!.usage, CAP)).toBe(700);
    expect(views[0]!.signatureInFlight).toBe(true);
    expect(views[0]!.halt).toMatchObject({ key: KEY, reason: 'checking' });
    expect(spentLamports(await preflight(ledger), CAP)).toBe(1_000);
    expect(await ledger.signatureInFlight(KEY, 'sig-open-2')).toBe(true);
    expect(await ledger.verify()).toEqual({ ok: true, entries: 3 });
  });

  it('a decision without an intent writes nothing', async () => {
    await preflight(ledger);
    const before = await ledger.head();
    expect(await ledger.reserveAtOnce(request(), () => ({ intent: null, result: 'refused' }))).toBe('refused');
    expect(await ledger.head()).toEqual(before);
  });

  it('leaves the gate to the lock while this handle holds the key lock, and decides once it is released', async () => {
    await preflight(ledger);
    const lock = await ledger.lockKey(KEY);
    const { views, decide } = reserving(100);
    expect(await ledger.reserveAtOnce(request(), decide)).toBeNull();
    await lock.release();
    expect(await ledger.reserveAtOnce(request(), decide)).toBe('reserved');
    expect(views).toHaveLength(1);
  });

  it("leaves the gate to the lock while another process holds the key's lock row", async () => {
    const other = await another();
    await preflight(ledger);
    const lock = await other.lockKey(KEY);
    const { views, decide } = reserving(100);
    expect(await ledger.reserveAtOnce(request(), decide)).toBeNull();
    expect(views).toHaveLength(0);
    await lock.release();
    expect(await ledger.reserveAtOnce(request(), decide)).toBe('reserved');
  });

  it('leaves the gate to the lock when another process appended since this handle last read', async () => {
    const other = await another();
    await preflight(ledger);
    await other.append(intentInput({ ts: nowSeconds(), key: KEY, signature: 'sig-other', balance_change: -400 }));
    const { views, decide } = reserving(100);
    expect(await ledger.reserveAtOnce(request(), decide)).toBeNull();
    // The lock path reads what the other wrote; from then on this handle is current again.
    await preflight(ledger);
    expect(await ledger.reserveAtOnce(request(), decide)).toBe('reserved');
    expect(views.map((v) => spentLamports(v.usage, CAP))).toEqual([400]);
  });

  it('leaves the gate to the lock for a key this handle has not read yet', async () => {
    const { views, decide } = reserving(100);
    expect(await ledger.reserveAtOnce(request(), decide)).toBeNull();
    expect(views).toHaveLength(0);
  });
});
