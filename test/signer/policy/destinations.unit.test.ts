/** Which lamport gains from a simulation the destination allow-list lets through. */
import { destinationRefusal } from '../../../src/signer/policy/rules/destinations';
import { SYSTEM_PROGRAM } from '../../../src/solana/programs';
import { randomAddress } from '../../support/payloads';
import { listed, policyKey } from './fixtures';

const key = policyKey();
const program = randomAddress();

test('a listed destination may gain, new or not, whoever owns it', () => {
  expect(destinationRefusal(key, [{ address: listed, lamports: 5, created: false, owner: SYSTEM_PROGRAM }])).toBeNull();
  expect(destinationRefusal(key, [{ address: listed, lamports: 5, created: true, owner: program }])).toBeNull();
});

test('the rent of an account created for a program passes; a new wallet that is paid does not', () => {
  const rent = { address: randomAddress(), lamports: 2_039_280, created: true, owner: program };
  expect(destinationRefusal(key, [rent])).toBeNull();
  const wallet = { address: randomAddress(), lamports: 1_000_000, created: true, owner: SYSTEM_PROGRAM };
  expect(destinationRefusal(key, [rent, wallet])).toEqual({
    check: 'destinations',
    reason: 'destination_not_allowed',
    figures: { destination: wallet.address, requested: 1_000_000 },
    message: `the simulation moves 1000000 lamports to ${wallet.address}, which is not an allowed destination (transfer_to)`,
  });
});

test('an existing program account that gains lamports is refused unless listed', () => {
  const vault = { address: randomAddress(), lamports: 7, created: false, owner: program };
  expect(destinationRefusal(key, [vault])?.reason).toBe('destination_not_allowed');
  expect(destinationRefusal({ ...key, transfer_to: [vault.address] }, [vault])).toBeNull();
});
