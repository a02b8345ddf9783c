/** What the policy in force now says of a pending approval's recorded figures, for the approver about to decide. */
import type { KeyConfig } from '../../../src/config/types';
import type { ApprovalRecord, Usage } from '../../../src/ledger/types';
import { SYSTEM_PROGRAM, SPL_TOKEN_PROGRAM } from '../../../src/solana/programs';
import { policyNowRefusal } from '../../../src/signer/rules/policy-now';
import { randomAddress } from '../../support/payloads';

const dest = randomAddress();
const mint = randomAddress();
const key: KeyConfig = {
  name: 'vault',
  class: 'wallet',
  pubkey: randomAddress(),
  profile: null,
  approval: 'confirm',
  transfer_to: [dest],
  extra_programs: [],
  rate_limit_per_minute: 30,
  daily_lamport_cap: 1_000_000,
  allow_unattended: false,
  tokens: [
    {
      mint,
      program: 'spl-token',
      per_tx: null,
      per_day: 1_000n,
      destinations: [dest],
      per_destination_per_day: null,
      approve_above: null,
    },
  ],
};
const pending: Pick<ApprovalRecord, 'key' | 'balance_change' | 'tokens' | 'destinations' | 'message'> = {
  key: 'vault',
  balance_change: -500_000,
  tokens: [{ mint, decimals: 0, change: '-400', credits: [{ owner: dest, amount: '400' }] }],
  destinations: [{ address: dest, lamports: 495_000, created: false, owner: SYSTEM_PROGRAM }],
  message: null,
};
const none: Usage = {
  signsLastMinute: 0,
  lamports: 0,
  unbounded: 0,
  received: new Map(),
  tokens: new Map(),
  usdMicros: 0n,
};
const spentToday = (lamports: number, tokens = 0n): Usage => ({
  signsLastMinute: 0,
  lamports,
  unbounded: 0,
  received: new Map(),
  tokens: new Map([[mint, { spent: tokens, received: new Map() }]]),
  usdMicros: 0n,
});

test('figures within the policy now: nothing to warn of', () => {
  expect(policyNowRefusal(key, pending, none, null)).toBeNull();
  // Exactly at the daily cap still passes; one lamport more is refused.
  expect(policyNowRefusal(key, pending, spentToday(500_000), null)).toBeNull();
  expect(policyNowRefusal(key, pending, spentToday(500_001), null)).toMatchObject({ reason: 'per_day_cap' });
});

test('a key removed, halted or set to deny', () => {
  expect(policyNowRefusal(null, pending, none, null)).toMatchObject({ reason: 'key_not_authorized' });
  expect(
    policyNowRefusal(key, pending, none, { key: 'vault', reason: 'r', by: 'operator:alice', ts: 1 }),
  ).toMatchObject({ reason: 'halted', figures: { by: 'operator' } });
  expect(policyNowRefusal({ ...key, approval: 'deny' }, pending, none, null)).toMatchObject({
    reason: 'key_set_to_deny',
  });
});

test('a destination no longer allowed; the rent of an account created for a program is not a payment', () => {
  const moved = { ...key, transfer_to: [randomAddress()] };
  expect(policyNowRefusal(moved, pending, none, null)).toMatchObject({
    reason: 'destination_not_allowed',
    figures: { destination: dest },
  });
  const rentOnly = {
    ...pending,
    destinations: [{ address: randomAddress(), lamports: 2_039_280, created: true, owner: SPL_TOKEN_PROGRAM }],
  };
  expect(policyNowRefusal(key, rentOnly, none, null)).toBeNull();
  // Recorded without whether it is new: judged as a payment to a wallet.
  const unknown = { ...pending, destinations: [{ address: randomAddress(), lamports: 2_039_280 }] };
  expect(policyNowRefusal(key, unknown, none, null)).toMatchObject({ reason: 'destination_not_allowed' });
});

test('a mint no longer listed, its destination removed, or its daily cap reached', () => {
  expect(policyNowRefusal({ ...key, tokens: [] }, pending, none, null)).toMatchObject({ reason: 'mint_not_listed' });
  const elsewhere = { ...key, tokens: [{ ...key.tokens![0]!, destinations: [randomAddress()] }] };
  expect(policyNowRefusal(elsewhere, pending, none, null)).toMatchObject({ reason: 'token_destination_not_allowed' });
  expect(policyNowRefusal(key, pending, spentToday(0, 600n), null)).toBeNull();
  expect(policyNowRefusal(key, pending, spentToday(0, 601n), null)).toMatchObject({ reason: 'token_per_day_cap' });
});

test('a message moves nothing: only the key itself is judged', () => {
  const message = { ...pending, message: 'sign in', balance_change: null, destinations: null, tokens: null };
  expect(policyNowRefusal({ ...key, transfer_to: [] }, message, spentToday(2_000_000), null)).toBeNull();
  expect(policyNowRefusal(null, message, none, null)).toMatchObject({ reason: 'key_not_authorized' });
});
