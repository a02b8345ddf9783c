/**
 * Counts failures in a row, not in total: every success starts the count again. A confirmation loop that polls
 * for minutes must give up on an endpoint that keeps failing, not on one that failed now and then.
 */
export interface FailureStreak {
  /** A success: the streak is over. */
  ok(): void;
  /** A failure; true once `limit` failures have come in a row. */
  fail(): boolean;
  /** Failures since the last success. */
  readonly current: number;
}

export function failureStreak(limit: number): FailureStreak {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('a failure streak limit is a whole number ≥ 1');
  let current = 0;
  return {
    ok() {
      current = 0;
    },
    fail() {
      current++;
      return current >= limit;
    },
    get current() {
      return current;
    },
  };
}
