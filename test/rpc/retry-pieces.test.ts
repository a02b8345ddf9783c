/**
 * The pieces the resilient client is made of, each on its own: reading Retry-After, the backoff, which failures
 * are transient, the endpoint order, the failures-in-a-row counter and the commitment a status must reach.
 */
import { fullJitterDelay } from '../../src/rpc/backoff';
import { meetsCommitment } from '../../src/rpc/commitment';
import { createEndpointPool } from '../../src/rpc/endpoint-pool';
import { failureStreak } from '../../src/rpc/failure-streak';
import { RpcError, type RpcErrorOptions } from '../../src/rpc/json-rpc-transport';
import { parseRetryAfter } from '../../src/rpc/retry-after';
import { isTransient } from '../../src/rpc/transient';
import type { RpcErrorKind } from '../../src/rpc/types';

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-03-01T12:00:00Z');
  test.each([
    ['0', 0],
    ['1', 1000],
    [' 120 ', 120_000],
    ['Sun, 01 Mar 2026 12:00:05 GMT', 5000],
    [['3', '9'], 3000],
  ])('%j → %d ms', (header, ms) => expect(parseRetryAfter(header, now)).toBe(ms));
  test('a date in the past means now', () => expect(parseRetryAfter('Sun, 01 Mar 2026 11:00:00 GMT', now)).toBe(0));
  test.each([undefined, '', '-1', '1.5', 'soon', 'Mon, 99 Foo 2026'])('%j is no instruction', (header) =>
    expect(parseRetryAfter(header, now)).toBeUndefined(),
  );
});

describe('fullJitterDelay', () => {
  const settings = { baseMs: 100, maxMs: 1000 };
  test('a uniform share of a ceiling that doubles per retry, up to the maximum', () => {
    expect([0, 1, 2, 3, 4, 10].map((n) => fullJitterDelay(n, settings, () => 0.999))).toEqual([
      99, 199, 399, 799, 999, 999,
    ]);
    expect(fullJitterDelay(3, settings, () => 0)).toBe(0);
    expect(fullJitterDelay(2, settings, () => 0.5)).toBe(200);
  });
  test('with the default source every wait stays below its ceiling', () => {
    for (let i = 0; i < 200; i++) {
      const d = fullJitterDelay(2, settings);
      expect(d).toBeGreaterThanOrEqual(0);
      expect(d).toBeLessThan(400);
    }
  });
});

describe('isTransient', () => {
  const e = (kind: RpcErrorKind, o: RpcErrorOptions = {}) => new RpcError(kind, 'm', 'm: x', o);
  test.each([
    ['a timeout', true, e('timeout')],
    ['a refused or reset connection', true, e('transport')],
    ['HTTP 429', true, e('transport', { httpStatus: 429 })],
    ['HTTP 503', true, e('transport', { httpStatus: 503 })],
    ['HTTP 408', true, e('transport', { httpStatus: 408 })],
    ['a JSON-RPC error under HTTP 502', true, e('node', { httpStatus: 502, rpcCode: -32603 })],
    ['JSON-RPC 429 in the body', true, e('node', { rpcCode: 429 })],
    ['node unhealthy (-32005)', true, e('node', { rpcCode: -32005 })],
    ['HTTP 401', false, e('transport', { httpStatus: 401 })],
    ['HTTP 404', false, e('transport', { httpStatus: 404 })],
    ['invalid params', false, e('node', { rpcCode: -32602 })],
    ['internal error at HTTP 200', false, e('node', { rpcCode: -32603 })],
    ['a wrong shape', false, e('shape')],
    ['an abort', false, e('aborted')],
  ])('%s → transient: %p', (_name, transient, error) => expect(isTransient(error)).toBe(transient));
});

describe('createEndpointPool', () => {
  let t = 1_000_000;
  const now = () => t;
  beforeEach(() => {
    t = 1_000_000;
  });

  test('healthy endpoints in configured order; a failed one goes to the back for its cool-down', () => {
    const pool = createEndpointPool(['a', 'b', 'c'], { cooldownMs: 100, now });
    expect(pool.order()).toEqual(['a', 'b', 'c']);
    pool.fail('a');
    expect(pool.order()).toEqual(['b', 'c', 'a']);
    expect(pool.best()).toBe('b');
    t += 100;
    expect(pool.order()).toEqual(['a', 'b', 'c']);
  });

  test('the cool-down doubles with each failure in a row (up to 16×) and a success clears it', () => {
    const pool = createEndpointPool(['a', 'b'], { cooldownMs: 100, now });
    const cooldowns: number[] = [];
    for (let i = 0; i < 6; i++) {
      pool.fail('a');
      cooldowns.push(pool.health('a').coolingUntil - t);
      t = pool.health('a').coolingUntil;
    }
    expect(cooldowns).toEqual([100, 200, 400, 800, 1600, 1600]);
    pool.ok('a');
    expect(pool.health('a')).toEqual({ failures: 0, coolingUntil: 0, notBefore: 0 });
    pool.fail('a');
    expect(pool.health('a').coolingUntil - t).toBe(100);
  });

  test('failures during a cool-down (one batch, one outage) count once', () => {
    const pool = createEndpointPool(['a'], { cooldownMs: 100, now });
    pool.fail('a');
    pool.fail('a');
    pool.fail('a');
    expect(pool.health('a').failures).toBe(1);
  });

  test('Retry-After keeps the endpoint back at least that long', () => {
    const pool = createEndpointPool(['a', 'b'], { cooldownMs: 100, now });
    pool.fail('a', 5000);
    expect(pool.health('a')).toMatchObject({ coolingUntil: t + 5000, notBefore: t + 5000 });
    t += 4999;
    expect(pool.order()).toEqual(['b', 'a']);
  });

  test('when every endpoint cools down, the one back first goes first', () => {
    const pool = createEndpointPool(['a', 'b'], { cooldownMs: 100, now });
    pool.fail('b');
    t += 10;
    pool.fail('a');
    expect(pool.order()).toEqual(['b', 'a']);
    expect(pool.coolingDown('a') && pool.coolingDown('b')).toBe(true);
  });

  test('an empty pool is refused', () => {
    expect(() => createEndpointPool([], { cooldownMs: 1 })).toThrow(RangeError);
  });
});

describe('failureStreak', () => {
  test('counts failures in a row: a success in between starts again', () => {
    const streak = failureStreak(3);
    expect([streak.fail(), streak.fail()]).toEqual([false, false]);
    streak.ok();
    expect(streak.current).toBe(0);
    expect([streak.fail(), streak.fail(), streak.fail()]).toEqual([false, false, true]);
    expect(streak.current).toBe(3);
  });
  test('a cumulative count would have stopped here; the streak does not', () => {
    const streak = failureStreak(2);
    const verdicts: boolean[] = [];
    for (let i = 0; i < 10; i++) {
      verdicts.push(streak.fail());
      streak.ok();
    }
    expect(verdicts.every((v) => !v)).toBe(true);
  });
  test('a limit of 1 stops at the first failure; a limit below 1 is refused', () => {
    expect(failureStreak(1).fail()).toBe(true);
    expect(() => failureStreak(0)).toThrow(RangeError);
  });
});

describe('meetsCommitment', () => {
  test.each([
    ['processed', 'confirmed', false],
    ['confirmed', 'confirmed', true],
    ['finalized', 'confirmed', true],
    ['processed', 'finalized', false],
    ['confirmed', 'finalized', false],
    ['finalized', 'finalized', true],
    [null, 'confirmed', false],
  ] as const)('%s meets %s: %s', (status, commitment, meets) =>
    expect(meetsCommitment(status, commitment)).toBe(meets),
  );
});
