/** Token accounts created for others must belong to an account of a game program. */
import { localCluster } from '../../../src/config/clusters';
import { ataOwnerRefusal, ataOwnersToVerify } from '../../../src/signer/policy/rules/ata-owners';
import { ASSOCIATED_TOKEN_PROGRAM, SPL_TOKEN_PROGRAM, SYSTEM_PROGRAM } from '../../../src/solana/programs';
import { randomAddress } from '../../support/payloads';
import { compiled, listed, policyKey } from './fixtures';

const GAME = randomAddress();
const cluster = localCluster({
  rpc_url: 'http://127.0.0.1:1',
  game_programs: [{ label: 'game', address: GAME }],
  player_profile: null,
});

test('owners to look up: not the key nor its destinations, once each; an instruction short of accounts refuses', () => {
  const key = policyKey();
  const foreign = randomAddress();
  const accounts = [key.pubkey, ASSOCIATED_TOKEN_PROGRAM, SYSTEM_PROGRAM, SPL_TOKEN_PROGRAM, listed, foreign];
  const create = (owner: number, slots?: number[]) => ({ program: 1, accounts: slots ?? [0, 0, owner, 0, 2, 3] });
  expect(ataOwnersToVerify(key, compiled(accounts, [create(0), create(4), create(5), create(5)]))).toEqual([foreign]);
  expect(ataOwnersToVerify(key, compiled(accounts, [create(0, [0, 0, 5, 0, 2])]))).toMatchObject({
    reason: 'ata_accounts_missing',
    figures: { instruction: 0 },
  });
});

test("an owner whose account a game program owns passes; another program's or none is refused", () => {
  const [a, b] = [randomAddress(), randomAddress()];
  expect(ataOwnerRefusal(cluster, [], [])).toBeNull();
  expect(ataOwnerRefusal(cluster, [a], [GAME])).toBeNull();
  expect(ataOwnerRefusal(cluster, [a, b], [GAME, SYSTEM_PROGRAM])).toMatchObject({
    reason: 'ata_owner_not_allowed',
    figures: { account: b },
  });
  expect(ataOwnerRefusal(cluster, [a], [null])).toMatchObject({ figures: { account: a } });
});
