/**
 * Exponential backoff with full jitter: before retry n (0-based) wait a uniformly random time in
 * [0, min(maxMs, baseMs × 2ⁿ)). Random waits spread the retries of many callers that failed together (a batch,
 * a provider's rate-limit window) instead of sending them back in one burst.
 */
export interface BackoffSettings {
  baseMs: number;
  maxMs: number;
}

export function fullJitterDelay(retry: number, settings: BackoffSettings, random: () => number = Math.random): number {
  const ceiling = Math.min(settings.maxMs, settings.baseMs * 2 ** Math.max(0, retry));
  return Math.floor(random() * ceiling);
}
