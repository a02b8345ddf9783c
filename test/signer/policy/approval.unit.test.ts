/** With approval `confirm`, which spends need an operator. */
import { needsApproval } from '../../../src/signer/policy/rules/approval';
import type { TokenMovements } from '../../../src/signer/spl-tokens/movements';
import { randomAddress } from '../../support/payloads';
import { policyKey, tokenPolicy } from './fixtures';

const none: TokenMovements = { mints: [], authority: [] };

test('a spend equal to approve_above_lamports signs alone; one lamport above needs an operator', () => {
  const key = policyKey({ approval: 'confirm', approve_above_lamports: 1_000 });
  expect(needsApproval(key, -1_000, none)).toBe(false);
  expect(needsApproval(key, -1_001, none)).toBe(true);
  // An unknown spend, or no threshold, always asks.
  expect(needsApproval(key, null, none)).toBe(true);
  expect(needsApproval(policyKey({ approval: 'confirm' }), 0, none)).toBe(true);
});

test('an auto key never asks', () => {
  expect(needsApproval(policyKey({ approval: 'auto' }), -1e12, none)).toBe(false);
});

test('a mint spent above its approve_above asks, at it does not', () => {
  const mint = randomAddress();
  const key = policyKey({
    approval: 'confirm',
    approve_above_lamports: 1_000_000,
    tokens: [tokenPolicy(mint, { approve_above: 50n })],
  });
  const spending = (n: bigint): TokenMovements => ({
    mints: [{ mint, program: 'spl-token', keyChange: -n, credits: new Map() }],
    authority: [],
  });
  expect(needsApproval(key, -5_000, spending(50n))).toBe(false);
  expect(needsApproval(key, -5_000, spending(51n))).toBe(true);
});
