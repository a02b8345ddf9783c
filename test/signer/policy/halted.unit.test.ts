/** A halted key's refusal, and who halted it as an agent reads it. */
import { haltRefusal } from '../../../src/signer/policy/rules/halted';

test("an operator's name stays with the operators; a token's label is the agent side's own", () => {
  const by = (who: string) => haltRefusal({ key: 'k', reason: 'r', by: who, ts: 0 }).figures;
  expect(by('operator:alice')).toEqual({ by: 'operator' });
  expect(by('token:bot')).toEqual({ by: 'token:bot' });
  expect(haltRefusal({ key: 'k', reason: 'checking', by: 'operator:alice', ts: 0 })).toMatchObject({
    check: 'halted',
    reason: 'halted',
    message: expect.stringContaining('checking') as unknown,
  });
});
