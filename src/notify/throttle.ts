/**
 * At most one `sign.refused_by_cap` notification per key per window from one process: an agent that keeps asking
 * for what its caps refuse (a loop, a retry storm) would otherwise flood the operators' channel with one post per
 * request. The next one sent says how many were held back meanwhile.
 */
export interface RefusalThrottle {
  /** Whether to notify this refusal now, and how many refusals of the key were held back since the last one sent. */
  take(key: string, nowMs: number): { send: boolean; heldBack: number };
}

export const REFUSAL_WINDOW_MS = 60_000;

export function refusalThrottle(windowMs = REFUSAL_WINDOW_MS): RefusalThrottle {
  const last = new Map<string, { sentAt: number; heldBack: number }>();
  return {
    take(key, nowMs) {
      const seen = last.get(key);
      if (seen && nowMs - seen.sentAt < windowMs) {
        seen.heldBack++;
        return { send: false, heldBack: seen.heldBack };
      }
      last.set(key, { sentAt: nowMs, heldBack: 0 });
      return { send: true, heldBack: seen?.heldBack ?? 0 };
    },
  };
}
