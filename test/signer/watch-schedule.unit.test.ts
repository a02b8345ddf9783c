import { nextPollIn } from '../../src/signer/flow/watch-schedule';

describe('when the signed-transaction watcher polls next', () => {
  const now = 1_000_000;
  const poll = 1_000;

  it('one poll interval while any watched sign is due, however far off the others are', () => {
    expect(nextPollIn([0], now, poll)).toBe(poll);
    expect(nextPollIn([now + 300_000, now - 1], now, poll)).toBe(poll);
    expect(nextPollIn([now], now, poll)).toBe(poll);
  });

  it('until the first orphan is due when none is due yet', () => {
    expect(nextPollIn([now + 360_000, now + 90_000], now, poll)).toBe(90_000);
    // Due within the interval: the interval, never a shorter wake-up.
    expect(nextPollIn([now + 10], now, poll)).toBe(poll);
  });

  it('never longer than a Node timer can wait (a longer one would fire at once)', () => {
    expect(nextPollIn([now + 2 ** 40], now, poll)).toBe(2 ** 31 - 1);
  });
});
