/** Token and associated-token instructions by their tag, before anything is simulated. */
import { tokenInstructionRefusal } from '../../../src/signer/policy/rules/token-instructions';
import { ASSOCIATED_TOKEN_PROGRAM, SPL_TOKEN_PROGRAM, SYSTEM_PROGRAM } from '../../../src/solana/programs';
import { randomAddress } from '../../support/payloads';
import { compiled, policyKey } from './fixtures';

const TRANSFER_CHECKED = 12;
const APPROVE = 4;

test('a transfer passes; a gated operation passes only when the key allows it', () => {
  const key = policyKey();
  const accounts = [key.pubkey, SPL_TOKEN_PROGRAM];
  expect(tokenInstructionRefusal(key, compiled(accounts, [{ program: 1, data: [TRANSFER_CHECKED] }]))).toBeNull();
  const approve = compiled(accounts, [{ program: 1, data: [APPROVE] }]);
  expect(tokenInstructionRefusal(key, approve)).toMatchObject({
    reason: 'token_op_not_allowed',
    figures: { token_op: 'approve' },
  });
  expect(tokenInstructionRefusal(policyKey({ pubkey: key.pubkey, allow_token_ops: ['approve'] }), approve)).toBeNull();
  expect(tokenInstructionRefusal(key, compiled(accounts, [{ program: 1 }]))).toMatchObject({
    reason: 'token_instruction_refused',
    figures: { instruction: 0 },
  });
});

test('an associated-token instruction may only create, with the System and a token program in its slots', () => {
  const key = policyKey();
  const accounts = [key.pubkey, ASSOCIATED_TOKEN_PROGRAM, randomAddress(), SYSTEM_PROGRAM, SPL_TOKEN_PROGRAM];
  const create = (data: number[], slots = [0, 2, 0, 2, 3, 4]) =>
    compiled(accounts, [{ program: 1, accounts: slots, data }]);
  expect(tokenInstructionRefusal(key, create([]))).toBeNull();
  expect(tokenInstructionRefusal(key, create([1]))).toBeNull();
  expect(tokenInstructionRefusal(key, create([2]))).toMatchObject({ reason: 'ata_instruction_not_allowed' });
  expect(tokenInstructionRefusal(key, create([1, 0]))).toMatchObject({ reason: 'ata_instruction_not_allowed' });
  expect(tokenInstructionRefusal(key, create([1], [0, 2, 0, 2, 3]))).toMatchObject({ reason: 'ata_create_malformed' });
  expect(tokenInstructionRefusal(key, create([1], [0, 2, 0, 2, 4, 4]))).toMatchObject({
    reason: 'ata_create_malformed',
  });
});
