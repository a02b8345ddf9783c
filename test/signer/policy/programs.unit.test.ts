/** A recorded sign's programs against those the key may call now (policy replay). */
import { recordedProgramRefusal } from '../../../src/signer/policy/rules/programs';

test('every program allowed passes; the first one not allowed is named', () => {
  expect(recordedProgramRefusal(['A', 'B'], ['A', 'B'])).toBeNull();
  expect(recordedProgramRefusal(['A'], ['A', 'C', 'D'])).toMatchObject({
    reason: 'program_not_allowed',
    figures: { program: 'C' },
  });
});
