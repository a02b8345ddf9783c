/** Wraps a RpcClient so every JSON-RPC call reports its latency and success (the metrics' RPC hook). */
import type { RpcClient } from '../rpc/types';

export type RpcObserver = (method: string, durationMs: number, ok: boolean) => void;

export function timedChain(chain: RpcClient, observe: RpcObserver): RpcClient {
  return new Proxy(chain, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function' || typeof prop !== 'string') return value;
      return async (...args: unknown[]) => {
        const started = performance.now();
        try {
          const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          observe(prop, performance.now() - started, true);
          return result;
        } catch (e) {
          observe(prop, performance.now() - started, false);
          throw e;
        }
      };
    },
  });
}
