/** What the app and the drain share: the requests being answered now, and whether the process is stopping. */
export interface ServiceState {
  draining: boolean;
  /** Every request past the in-flight cap not yet answered, whether it holds a place or not (a halt, a wait). */
  inFlight: number;
}

export function createServiceState(): ServiceState {
  return { draining: false, inFlight: 0 };
}
