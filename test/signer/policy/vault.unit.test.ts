/** A session key never withdraws its Player Profile vault. */
import { localCluster } from '../../../src/config/clusters';
import { vaultRefusal } from '../../../src/signer/policy/rules/vault';
import { DRAIN_SOL_VAULT_DISCRIMINATOR } from '../../../src/solana/programs';
import { randomAddress } from '../../support/payloads';
import { compiled, policyKey } from './fixtures';

const PROFILE = randomAddress();
const cluster = localCluster({ rpc_url: 'http://127.0.0.1:1', game_programs: [], player_profile: PROFILE });

test('a session key is refused DrainSolVault and a short profile instruction; a wallet key is not', () => {
  const session = policyKey();
  const drain = (data: number[]) => compiled([session.pubkey, PROFILE], [{ program: 1, data }]);
  expect(vaultRefusal(session, cluster, drain([...DRAIN_SOL_VAULT_DISCRIMINATOR]))).toMatchObject({
    reason: 'vault_withdrawal',
    figures: { instruction: 0 },
  });
  expect(vaultRefusal(session, cluster, drain([...DRAIN_SOL_VAULT_DISCRIMINATOR.slice(0, 7)]))).toMatchObject({
    reason: 'vault_instruction_malformed',
  });
  expect(vaultRefusal(session, cluster, drain([1, 2, 3, 4, 5, 6, 7, 8]))).toBeNull();
  const wallet = policyKey({ class: 'wallet' });
  expect(vaultRefusal(wallet, cluster, drain([...DRAIN_SOL_VAULT_DISCRIMINATOR]))).toBeNull();
});
