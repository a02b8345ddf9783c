/** The per-token request limit (src/http/rate-limit.ts) on an injected clock; the 429 itself is in test/http. */
import { TokenRateLimiter } from '../../src/http/rate-limit';

function limiterAt(limit: number): { limiter: TokenRateLimiter; advance: (ms: number) => void } {
  let now = 1_000_000;
  return { limiter: new TokenRateLimiter(limit, 60_000, () => now), advance: (ms) => (now += ms) };
}

test('admits `limit` requests in a window, then refuses with the seconds left until it resets', () => {
  const { limiter, advance } = limiterAt(3);
  for (let i = 0; i < 3; i++) expect(limiter.take('a').allowed).toBe(true);
  advance(20_500);
  const refused = limiter.take('a');
  expect(refused).toEqual({ allowed: false, retryAfterSeconds: 40 });
});

test('the window starts with the first request and a new one starts once it has passed', () => {
  const { limiter, advance } = limiterAt(1);
  expect(limiter.take('a').allowed).toBe(true);
  advance(59_999);
  expect(limiter.take('a')).toEqual({ allowed: false, retryAfterSeconds: 1 });
  advance(1);
  expect(limiter.take('a').allowed).toBe(true);
  expect(limiter.take('a').allowed).toBe(false);
});

test('tokens are counted apart', () => {
  const { limiter } = limiterAt(1);
  expect(limiter.take('a').allowed).toBe(true);
  expect(limiter.take('a').allowed).toBe(false);
  expect(limiter.take('b').allowed).toBe(true);
});
