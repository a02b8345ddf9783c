/** System instructions: only a transfer, only to one of the key's destinations. */
import { systemInstructionRefusal } from '../../../src/signer/policy/rules/system-instructions';
import { SYSTEM_PROGRAM, SYSTEM_TRANSFER_TAG } from '../../../src/solana/programs';
import { randomAddress } from '../../support/payloads';
import { compiled, listed, policyKey } from './fixtures';

const tagged = (tag: number): number[] => {
  const data = Buffer.alloc(12);
  data.writeUInt32LE(tag, 0);
  return [...data];
};

test('a transfer to a listed destination passes; another destination, tag or a short one is refused', () => {
  const key = policyKey();
  const stranger = randomAddress();
  const msg = (data: number[], to = listed, accounts = [0, 2]) =>
    compiled([key.pubkey, SYSTEM_PROGRAM, to], [{ program: 1, accounts, data }]);
  expect(systemInstructionRefusal(key, msg(tagged(SYSTEM_TRANSFER_TAG)))).toBeNull();
  expect(systemInstructionRefusal(key, msg(tagged(SYSTEM_TRANSFER_TAG), stranger))).toMatchObject({
    reason: 'transfer_destination_not_allowed',
    figures: { instruction: 0, destination: stranger },
  });
  expect(systemInstructionRefusal(key, msg(tagged(0)))).toMatchObject({ reason: 'system_instruction_not_allowed' });
  expect(systemInstructionRefusal(key, msg([2, 0, 0]))).toMatchObject({ reason: 'system_instruction_malformed' });
  expect(systemInstructionRefusal(key, msg([2, 0, 0, 0]))).toBeNull();
  expect(systemInstructionRefusal(key, msg(tagged(SYSTEM_TRANSFER_TAG), listed, [0]))).toMatchObject({
    reason: 'system_instruction_malformed',
  });
});
