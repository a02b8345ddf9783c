/**
 * What each other account received from a key, as the usage book counts it from the intents' lamport credits
 * (docs/ledger.md, "Lamport credits"): reserved by an intent, counted by its final unless it failed, out of the
 * window after 24 h. The store counts; no cap is applied here.
 */
import { GENESIS_PREV, hashEntry, sealEntry } from '../../src/ledger/hash-chain';
import { usageOf } from '../../src/ledger/usage-book';
import type { AuditEntry, AuditEntryInput } from '../../src/ledger/types';
import { intentInput, signInput } from './helpers';

const NOW = 1_800_000_000;
const seal = (i: AuditEntryInput): AuditEntry => sealEntry(i, GENESIS_PREV);
const paid = (sig: string, lamports: number, ts = NOW - 10, address = 'D') =>
  seal(intentInput({ ts, signature: sig, balance_change: -lamports, lamport_credits: [{ address, lamports }] }));
const final = (sig: string, outcome: string, ts = NOW - 5) =>
  seal(signInput({ ts, signature: sig, outcome, balance_change: null }));
const received = (entries: AuditEntry[]) => Object.fromEntries(usageOf(entries, NOW).received);

test('an intent in flight reserves its credits; a confirmed, unknown or expired final keeps them counted', () => {
  expect(received([paid('a', 100)])).toEqual({ D: 100 });
  for (const outcome of ['confirmed', 'unknown', 'expired']) {
    expect(received([paid('a', 100), final('a', outcome)])).toEqual({ D: 100 });
  }
});

test('a failed final paid no one; a never-sent final counts nothing', () => {
  expect(received([paid('a', 100), final('a', 'failed')])).toEqual({});
  expect(received([paid('a', 100), final('a', 'refused')])).toEqual({});
});

test('credits add up per address, and leave the window after 24 h', () => {
  const entries = [paid('a', 100), paid('b', 50, NOW - 9, 'E'), paid('c', 25, NOW - 8)];
  expect(received(entries)).toEqual({ D: 125, E: 50 });
  expect(received([paid('old', 100, NOW - 86_401)])).toEqual({});
});

test('an entry without credits hashes as before; one with them hashes them', () => {
  const plain = intentInput({ ts: NOW, signature: 'x', balance_change: -1 });
  const withNone = seal({ ...plain, lamport_credits: null });
  expect(withNone.hash).toBe(seal(plain).hash);
  expect(withNone).not.toHaveProperty('lamport_credits');
  const withCredits = seal({ ...plain, lamport_credits: [{ address: 'D', lamports: 1 }] });
  expect(withCredits.hash).not.toBe(seal(plain).hash);
  expect(hashEntry(withCredits)).toBe(withCredits.hash);
});
