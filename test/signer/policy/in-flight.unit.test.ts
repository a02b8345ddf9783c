/** The same transaction signed for a second request while the first has no outcome yet. */
import { inFlightRefusal } from '../../../src/signer/policy/rules/in-flight';

test('a signature in flight is refused; one not in flight, or none to look up, passes', () => {
  expect(inFlightRefusal('sig', true)).toMatchObject({ reason: 'signature_in_flight', figures: { signature: 'sig' } });
  expect(inFlightRefusal('sig', false)).toBeNull();
  expect(inFlightRefusal(null, true)).toBeNull();
});
