/** The RPC answers for the configured cluster, and a payload's blockhash is still valid there. */
import {
  blockhashExpiredRefusal,
  clusterChangedRefusal,
  clusterRefusal,
} from '../../../src/signer/policy/rules/cluster';
import { randomAddress } from '../../support/payloads';

test("the genesis hash must be the cluster's; a cluster that names none takes any", () => {
  const genesis = randomAddress();
  const other = randomAddress();
  expect(clusterRefusal('mainnet', genesis, genesis)).toBeNull();
  expect(clusterRefusal('local', null, other)).toBeNull();
  expect(clusterRefusal('mainnet', genesis, other)).toMatchObject({
    reason: 'wrong_cluster',
    figures: { genesis_hash: other },
  });
});

test('the node that simulated must answer the genesis hash checked before it', () => {
  const genesis = randomAddress();
  const other = randomAddress();
  expect(clusterChangedRefusal(genesis, genesis)).toBeNull();
  expect(clusterChangedRefusal(genesis, other)).toMatchObject({
    reason: 'wrong_cluster',
    figures: { genesis_hash: other },
  });
  const blockhash = randomAddress();
  expect(blockhashExpiredRefusal(blockhash)).toMatchObject({ reason: 'blockhash_expired', figures: { blockhash } });
});
