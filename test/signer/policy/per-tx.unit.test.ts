/** The per-transaction lamport cap (`per_tx_lamports`). */
import { perTxRefusal } from '../../../src/signer/policy/rules/per-tx';
import { policyKey } from './fixtures';

test('a reservation equal to per_tx_lamports passes; one above is refused', () => {
  const key = policyKey({ per_tx_lamports: 500 });
  expect(perTxRefusal(key, 500)).toBeNull();
  expect(perTxRefusal(key, 501)).toMatchObject({ reason: 'per_tx_cap', figures: { requested: 501, cap: 500 } });
});

test('without per_tx_lamports nothing is refused here', () => {
  expect(perTxRefusal(policyKey(), Number.MAX_SAFE_INTEGER)).toBeNull();
});
