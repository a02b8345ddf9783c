/**
 * The dollars a key spent, as the usage book counts them from the value each intent recorded at sign time
 * (`usd_micros`): reserved by the intent, counted by its final (whatever its outcome, except never sent), never
 * re-priced, out of the window after 24 h; hashed only when present (both stores: contract.ts).
 */
import { GENESIS_PREV, hashEntry, sealEntry } from '../../src/ledger/hash-chain';
import { usageOf } from '../../src/ledger/usage-book';
import type { AuditEntry, AuditEntryInput } from '../../src/ledger/types';
import { intentInput, signInput } from './helpers';

const NOW = 1_800_000_000;
const seal = (i: AuditEntryInput): AuditEntry => sealEntry(i, GENESIS_PREV);
const valued = (sig: string, micros: bigint, ts = NOW - 10) =>
  seal(intentInput({ ts, signature: sig, balance_change: -5000, usd_micros: micros.toString() }));
const final = (sig: string, outcome: string, ts = NOW - 5) =>
  seal(signInput({ ts, signature: sig, outcome, balance_change: -5000 }));
const usd = (entries: AuditEntry[]) => usageOf(entries, NOW).usdMicros;

test('an intent reserves its recorded value; its final keeps it counted once; a never-sent final frees it', () => {
  expect(usd([valued('a', 4_000_000n)])).toBe(4_000_000n);
  for (const outcome of ['confirmed', 'failed', 'unknown', 'expired'])
    expect(usd([valued('a', 4_000_000n), final('a', outcome)])).toBe(4_000_000n);
  expect(usd([valued('a', 4_000_000n), final('a', 'refused')])).toBe(0n);
});

test("a final that records a value of its own (the tripwire's landed value) counts it instead of its intent's", () => {
  const landed = seal(signInput({ ts: NOW - 5, signature: 'a', outcome: 'confirmed', usd_micros: '9000000' }));
  expect(usd([valued('a', 4_000_000n), landed])).toBe(9_000_000n);
});

test('values add up beyond 2^53 micro-dollars exactly, and leave the window after 24 h', () => {
  const big = 9_007_199_254_740_993n;
  expect(usd([valued('a', big), valued('b', 1n, NOW - 9)])).toBe(big + 1n);
  expect(usd([valued('old', 4_000_000n, NOW - 86_401)])).toBe(0n);
});

test('an entry without a value hashes as before and counts no dollars; one with it hashes it', () => {
  const plain = intentInput({ ts: NOW, signature: 'x', balance_change: -1 });
  const withNone = seal({ ...plain, usd_micros: null });
  expect(withNone.hash).toBe(seal(plain).hash);
  expect(withNone).not.toHaveProperty('usd_micros');
  expect(usd([withNone])).toBe(0n);
  const withValue = seal({ ...plain, usd_micros: '1' });
  expect(withValue.hash).not.toBe(seal(plain).hash);
  expect(hashEntry(withValue)).toBe(withValue.hash);
});
