/** The SOL per-destination daily cap on what each account received and what this transaction pays it. */
import { destinationCapRefusal, lamportPayments } from '../../../src/signer/policy/rules/destination-cap';
import { SYSTEM_PROGRAM } from '../../../src/solana/programs';
import { randomAddress } from '../../support/payloads';
import { listed, policyKey } from './fixtures';

const key = policyKey({ per_destination_per_day_lamports: 1_000 });
const pay = (lamports: number, address = listed) => [{ address, lamports, created: false, owner: SYSTEM_PROGRAM }];

test('received plus this payment equal to the cap passes; one lamport above is refused', () => {
  const received = new Map([[listed, 600]]);
  expect(destinationCapRefusal(key, pay(400), received)).toBeNull();
  expect(destinationCapRefusal(key, pay(401), received)).toEqual({
    check: 'limits',
    reason: 'per_destination_cap',
    figures: { destination: listed, received: 600, requested: 401, cap: 1_000 },
    message: `per-destination daily cap: ${listed} received 600 lamports from this key in 24 h, plus 401 now, exceeds per_destination_per_day_lamports 1000`,
  });
});

test('each destination has its own allowance', () => {
  const other = randomAddress();
  expect(destinationCapRefusal(key, pay(1_000, other), new Map([[listed, 1_000]]))).toBeNull();
});

test('the rent of an account created for a program is no payment; a new wallet paid is one', () => {
  const rent = { address: randomAddress(), lamports: 2_039_280, created: true, owner: randomAddress() };
  const wallet = { address: randomAddress(), lamports: 7, created: true, owner: SYSTEM_PROGRAM };
  expect(lamportPayments([rent, wallet])).toEqual([{ address: wallet.address, lamports: 7 }]);
  expect(destinationCapRefusal(key, [rent], new Map())).toBeNull();
});

test('without the cap nothing is refused here', () => {
  expect(destinationCapRefusal(policyKey(), pay(1e12), new Map())).toBeNull();
});
