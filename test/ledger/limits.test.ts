/**
 * The limit cases of docs/policy.md "Limits in detail", key rate 2/min and cap 1,000. The rate cases pin that
 * the rate counts sign-intent entries (attempts that were or may have been
 * sent), so refusals never burn a key's rate budget.
 */
import { GENESIS_PREV, sealEntry } from '../../src/ledger/hash-chain';
import { spendOf, usageOf } from '../../src/ledger/usage-book';
import type { AuditEntry, AuditEntryInput } from '../../src/ledger/types';
import { intentInput, signInput } from './helpers';
import { spentLamports } from '../../src/signer/policy/rules/daily-cap';

const NOW = 1_800_000_000;
const RATE = 2;
const CAP = 1_000;

const seal = (i: AuditEntryInput): AuditEntry => sealEntry(i, GENESIS_PREV);
const final = (over: Partial<AuditEntryInput>) => seal(signInput({ ts: NOW - 10, ...over }));
const intent = (over: Partial<AuditEntryInput>) => seal(intentInput({ ts: NOW - 10, ...over }));
/** A sign that was sent and confirmed: its intent and its final, linked by signature. */
const sent = (sig: string, reservation: number, actual: number | null, ts = NOW - 10, outcome = 'confirmed') => [
  intent({ ts, signature: sig, balance_change: -reservation }),
  final({ ts, signature: sig, outcome, balance_change: actual }),
];

/** The lamport figures of a fresh count (tokens are counted by the same rules; contract.ts covers them). */
const computeUsage = (entries: AuditEntry[], now: number, cap: number) => {
  const usage = usageOf(entries, now);
  return { signsLastMinute: usage.signsLastMinute, spent24h: spentLamports(usage, cap) };
};
const rateRefused = (entries: AuditEntry[]) => computeUsage(entries, NOW, CAP).signsLastMinute >= RATE;
const capRefused = (entries: AuditEntry[]) => computeUsage(entries, NOW, CAP).spent24h >= CAP;

describe('rate (sign-intents in the last 60 s)', () => {
  it('one attempt in the last minute is OK; two are refused', () => {
    expect(rateRefused(sent('s1', 10, -5))).toBe(false);
    expect(rateRefused([...sent('s1', 10, -5), ...sent('s2', 10, -5)])).toBe(true);
  });

  it('an orphan intent plus one completed sign is refused: an attempt counts without its final entry', () => {
    const entries = [intent({ signature: 'dead', balance_change: -10 }), ...sent('s1', 10, -5)];
    expect(computeUsage(entries, NOW, CAP).signsLastMinute).toBe(2);
    expect(rateRefused(entries)).toBe(true);
  });

  it('a signed message counts like a sent transaction and spends nothing; a refused one counts nothing', () => {
    const message = (outcome: string, ts = NOW - 10) =>
      final({ ts, command: 'sign-message', outcome, signature: outcome === 'signed' ? `m${ts}` : null });
    expect(computeUsage([message('signed')], NOW, CAP)).toEqual({ signsLastMinute: 1, spent24h: 0 });
    expect(rateRefused([message('signed'), ...sent('s1', 10, -5)])).toBe(true);
    expect(rateRefused([message('signed'), message('signed', NOW - 70)])).toBe(false);
    expect(
      computeUsage(
        Array.from({ length: 20 }, () => message('refused')),
        NOW,
        CAP,
      ).signsLastMinute,
    ).toBe(0);
  });

  it('refused finals (never sent) do not count, so a retry storm cannot lock a key out', () => {
    const refusals = Array.from({ length: 50 }, () => final({ outcome: 'refused', detail: 'rate limit: 2 signs' }));
    expect(computeUsage(refusals, NOW, CAP).signsLastMinute).toBe(0);
    expect(rateRefused([...refusals, ...sent('s1', 10, -5)])).toBe(false);
  });

  it('counts an intent exactly 60 s old and not one 61 s old', () => {
    expect(computeUsage([intent({ ts: NOW - 60, signature: 'a' })], NOW, CAP).signsLastMinute).toBe(1);
    expect(computeUsage([intent({ ts: NOW - 61, signature: 'a' })], NOW, CAP).signsLastMinute).toBe(0);
  });
});

describe('spent in 24 h', () => {
  it('finals of −600 and −500 inside 24 h are refused for the cap; the same entries older than 24 h are OK', () => {
    const recent = [...sent('a', 600, -600), ...sent('b', 500, -500)];
    expect(computeUsage(recent, NOW, CAP).spent24h).toBe(1_100);
    expect(capRefused(recent)).toBe(true);
    const old = [...sent('a', 600, -600, NOW - 86_401), ...sent('b', 500, -500, NOW - 86_401)];
    expect(computeUsage(old, NOW, CAP).spent24h).toBe(0);
    expect(capRefused(old)).toBe(false);
  });

  it('an unknown final is charged its intent reservation (−600), plus another −500: refused', () => {
    const entries = [...sent('a', 600, null, NOW - 10, 'unknown'), ...sent('b', 500, -500)];
    expect(computeUsage(entries, NOW, CAP).spent24h).toBe(1_100);
    expect(capRefused(entries)).toBe(true);
  });

  it('a confirmed final without metadata is charged the intent reservation: refused', () => {
    const entries = [...sent('a', 600, null), ...sent('b', 500, -500)];
    expect(computeUsage(entries, NOW, CAP).spent24h).toBe(1_100);
    expect(capRefused(entries)).toBe(true);
  });

  it('an orphan intent of −600 plus another −500 is refused', () => {
    const entries = [intent({ signature: 'dead', balance_change: -600 }), ...sent('b', 500, -500)];
    expect(computeUsage(entries, NOW, CAP).spent24h).toBe(1_100);
    expect(capRefused(entries)).toBe(true);
  });

  it('an orphan intent with no figure is charged the whole cap', () => {
    const entries = [intent({ signature: null, balance_change: null })];
    expect(computeUsage(entries, NOW, CAP).spent24h).toBe(CAP);
    expect(capRefused(entries)).toBe(true);
  });

  it('a legacy expired final is charged its reservation', () => {
    const entries = [...sent('a', 600, null, NOW - 10, 'expired')];
    expect(computeUsage(entries, NOW, CAP).spent24h).toBe(600);
  });

  it('a refused final costs 0 (the total stays 500)', () => {
    const entries = [final({ outcome: 'refused', balance_change: -600 }), ...sent('b', 500, -500)];
    expect(computeUsage(entries, NOW, CAP).spent24h).toBe(500);
    expect(capRefused(entries)).toBe(false);
  });

  it('a confirmed final of −5 replaces its −600 reservation: OK', () => {
    const entries = [...sent('a', 600, -5), ...sent('b', 500, -500)];
    expect(computeUsage(entries, NOW, CAP).spent24h).toBe(505);
    expect(capRefused(entries)).toBe(false);
  });

  it('a confirmed or failed final with no matching intent and no figure is charged the whole cap', () => {
    expect(computeUsage([final({ signature: 'x', outcome: 'failed', balance_change: null })], NOW, CAP).spent24h).toBe(
      CAP,
    );
  });

  it('a gain spends nothing', () => {
    expect(spendOf(10)).toBe(0);
    expect(spendOf(-10)).toBe(10);
    expect(computeUsage([...sent('a', 5_000, 10)], NOW, CAP).spent24h).toBe(0);
  });

  it('ignores halt and resume entries', () => {
    const halt = seal(signInput({ command: 'halt', outcome: 'halted', payload_hash: '', balance_change: null }));
    expect(computeUsage([halt], NOW, CAP)).toEqual({ signsLastMinute: 0, spent24h: 0 });
  });
});
