/** Each mint's caps: per transaction, per day, and per destination per day, in base units. */
import { tokenCapRefusal, type MintFlow } from '../../../src/signer/policy/rules/tokens';
import type { TokenUsage } from '../../../src/ledger/types';
import { randomAddress } from '../../support/payloads';
import { policyKey, tokenPolicy } from './fixtures';

const mint = randomAddress();
const dest = randomAddress();
const decimals = () => 0;
const spend = (n: bigint, credit = n): { mints: MintFlow[] } => ({
  mints: [{ mint, keyChange: -n, credits: new Map([[dest, credit]]) }],
});
const used = (spent: bigint, received = 0n): TokenUsage =>
  new Map([[mint, { spent, received: new Map([[dest, received]]) }]]);

test('per_tx: equal passes, one above is refused', () => {
  const key = policyKey({ tokens: [tokenPolicy(mint, { per_tx: 100n })] });
  expect(tokenCapRefusal(key, spend(100n), decimals, used(0n))).toBeNull();
  expect(tokenCapRefusal(key, spend(101n), decimals, used(0n))).toMatchObject({
    reason: 'token_per_tx_cap',
    figures: { mint, requested: '101', cap: '100' },
  });
});

test('per_day: spent plus this spend equal to the cap passes, one above is refused', () => {
  const key = policyKey({ tokens: [tokenPolicy(mint, { per_day: 1_000n })] });
  expect(tokenCapRefusal(key, spend(400n), decimals, used(600n))).toBeNull();
  expect(tokenCapRefusal(key, spend(401n), decimals, used(600n))).toMatchObject({
    reason: 'token_per_day_cap',
    figures: { mint, spent: '600', requested: '401', cap: '1000' },
  });
});

test('per_destination_per_day: received plus this credit equal to the cap passes, one above is refused', () => {
  const key = policyKey({ tokens: [tokenPolicy(mint, { per_destination_per_day: 300n })] });
  expect(tokenCapRefusal(key, spend(100n), decimals, used(0n, 200n))).toBeNull();
  expect(tokenCapRefusal(key, spend(101n), decimals, used(0n, 200n))).toMatchObject({
    reason: 'token_per_destination_cap',
    figures: { mint, destination: dest, received: '200', requested: '101', cap: '300' },
  });
});

test('a mint received, not spent, is not capped', () => {
  const key = policyKey({ tokens: [tokenPolicy(mint, { per_day: 1n })] });
  const gain = { mints: [{ mint, keyChange: 5n, credits: new Map<string, bigint>() }] };
  expect(tokenCapRefusal(key, gain, decimals, used(1n))).toBeNull();
});
