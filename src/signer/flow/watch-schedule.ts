/** When the watcher (watch-signed.ts) polls next. */

/** The longest delay a Node timer takes (about 24.8 days); a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * How long the watcher sleeps before its next poll: one poll interval while any watched sign is due, else until
 * the first one is (orphans wait minutes to be due, and a poll before then would look at nothing).
 */
export function nextPollIn(notBefores: readonly number[], now: number, pollIntervalMs: number): number {
  const firstDue = notBefores.reduce((first, t) => Math.min(first, t), Infinity);
  return Math.min(MAX_TIMER_MS, Math.max(pollIntervalMs, firstDue - now));
}
