/** What the app and the drain share: the requests being answered now, and whether the process is stopping. */
export interface ServiceState {
  draining: boolean;
  inFlight: number;
}

export function createServiceState(): ServiceState {
  return { draining: false, inFlight: 0 };
}
