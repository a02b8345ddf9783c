/** Each top-level instruction's program against the programs the key may call. */
import { allowedPrograms, instructionProgramRefusal } from '../../../src/signer/policy/rules/programs';
import { localCluster } from '../../../src/config/clusters';
import { MEMO_PROGRAM } from '../../../src/solana/programs';
import { randomAddress } from '../../support/payloads';
import { compiled, policyKey } from './fixtures';

const cluster = localCluster({ rpc_url: 'http://127.0.0.1:1', game_programs: [], player_profile: null });

test("the allowed programs are the cluster's, the key's extras and those every key may call, once each", () => {
  const extra = randomAddress();
  const allowed = allowedPrograms(cluster, policyKey({ extra_programs: [extra, extra] }));
  expect(allowed.filter((p) => p === extra)).toHaveLength(1);
  expect(allowed).toContain(MEMO_PROGRAM);
});

test('an instruction calling a program not listed is refused with its index; a missing program id too', () => {
  const key = policyKey();
  const allowed = randomAddress();
  const other = randomAddress();
  expect(instructionProgramRefusal([allowed], compiled([key.pubkey, allowed], [{ program: 1 }]))).toBeNull();
  expect(
    instructionProgramRefusal([allowed], compiled([key.pubkey, allowed, other], [{ program: 1 }, { program: 2 }])),
  ).toMatchObject({ reason: 'program_not_allowed', figures: { instruction: 1, program: other } });
  expect(instructionProgramRefusal([allowed], compiled([key.pubkey], [{ program: 5 }]))).toMatchObject({
    reason: 'program_missing',
    figures: { instruction: 0 },
  });
});
