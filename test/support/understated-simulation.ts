/**
 * A stand-in for a lying or broken RPC provider: the next simulation answered through the proxy says the key
 * loses only the fee, whatever the transaction really moves. The signer then reserves less than will land, which
 * is what the tripwire exists to catch.
 */
import type { FaultProxy } from '../abuse/support/fault-proxy';

interface SimulationAnswer {
  value: { accounts: ({ lamports: number } | null)[] | null; preBalances?: number[] };
}

/** Rewrites the next simulation so the key (the fee payer, the first account asked for) loses only `fee`. */
export function understateNextSimulation(proxy: FaultProxy, fee: number): void {
  let done = false;
  proxy.rewrite = (method, result) => {
    if (method !== 'simulateTransaction' || done) return result;
    const answer = result as SimulationAnswer;
    const key = answer.value.accounts?.[0];
    const pre = answer.value.preBalances?.[0];
    if (key && pre !== undefined) {
      key.lamports = pre - fee;
      done = true;
    }
    return result;
  };
}
