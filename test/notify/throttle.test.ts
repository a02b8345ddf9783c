/** Refusals by a cap are notified at most once a minute per key; the next one sent says how many were held back. */
import { REFUSAL_WINDOW_MS, refusalThrottle } from '../../src/notify/throttle';

it('sends the first refusal of a key, holds back the rest of its minute, and counts them in the next one sent', () => {
  const t = refusalThrottle();
  expect(t.take('a', 0)).toEqual({ send: true, heldBack: 0 });
  expect(t.take('a', 1_000)).toEqual({ send: false, heldBack: 1 });
  expect(t.take('b', 1_000)).toEqual({ send: true, heldBack: 0 });
  expect(t.take('a', REFUSAL_WINDOW_MS - 1)).toEqual({ send: false, heldBack: 2 });
  expect(t.take('a', REFUSAL_WINDOW_MS)).toEqual({ send: true, heldBack: 2 });
  expect(t.take('a', REFUSAL_WINDOW_MS + 1)).toEqual({ send: false, heldBack: 1 });
});
