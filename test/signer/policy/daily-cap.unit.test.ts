/** The daily lamport cap on the usage the ledger counts, and what an entry no figure bounds counts for. */
import { dailyCapRefusal, remainingDaily, spentLamports } from '../../../src/signer/policy/rules/daily-cap';
import { policyKey } from './fixtures';

const key = policyKey({ daily_lamport_cap: 1_000 });

test('spent plus the reservation equal to the cap passes; one lamport above is refused', () => {
  expect(dailyCapRefusal(key, 600, 400)).toBeNull();
  expect(dailyCapRefusal(key, 600, 401)).toMatchObject({
    reason: 'per_day_cap',
    figures: { spent: 600, requested: 401, cap: 1_000 },
  });
});

test('a cap already used up refuses before the reservation is known', () => {
  expect(dailyCapRefusal(key, 999, null)).toBeNull();
  expect(dailyCapRefusal(key, 1_000, null)).toMatchObject({
    reason: 'per_day_cap',
    figures: { spent: 1_000, cap: 1_000 },
  });
});

test('an entry no figure bounds counts as the whole cap given, so it alone uses the cap up', () => {
  expect(spentLamports({ lamports: 250, unbounded: 0 }, 1_000)).toBe(250);
  expect(spentLamports({ lamports: 250, unbounded: 2 }, 1_000)).toBe(2_250);
  expect(dailyCapRefusal(key, spentLamports({ lamports: 0, unbounded: 1 }, 1_000), null)).toMatchObject({
    reason: 'per_day_cap',
  });
});

test('what is left never goes below 0', () => {
  expect(remainingDaily(key, 600, 400)).toBe(0);
  expect(remainingDaily(key, 600, 100)).toBe(300);
  expect(remainingDaily(key, 2_000, 0)).toBe(0);
});
