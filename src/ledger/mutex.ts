/**
 * In-process helpers for the per-key lock: a FIFO async mutex per key (so callers in one process queue in order
 * and only the head of the queue touches the cross-process lock), abortable waiting, and abortable sleeps.
 */
import { SignerError } from '../util/errors';

type Waiter = {
  resolve: (release: () => void) => void;
  reject: (e: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
};

export function cancelledError(key: string): SignerError {
  return new SignerError('cancelled', `gave up waiting for the lock on key ${key}`);
}

export class KeyedMutex {
  private readonly held = new Set<string>();
  private readonly queues = new Map<string, Waiter[]>();

  /** Resolves with a release function once this caller holds `key`; rejects 'cancelled' if `signal` aborts first. */
  acquire(key: string, signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(cancelledError(key));
    if (!this.held.has(key)) {
      this.held.add(key);
      return Promise.resolve(this.releaser(key));
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal };
      if (signal) {
        waiter.onAbort = () => {
          const q = this.queues.get(key);
          const i = q ? q.indexOf(waiter) : -1;
          if (q && i >= 0) q.splice(i, 1);
          reject(cancelledError(key));
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      const q = this.queues.get(key) ?? [];
      q.push(waiter);
      this.queues.set(key, q);
    });
  }

  isHeld(key: string): boolean {
    return this.held.has(key);
  }

  private releaser(key: string): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const q = this.queues.get(key);
      const next = q?.shift();
      if (q && q.length === 0) this.queues.delete(key);
      if (!next) {
        this.held.delete(key);
        return;
      }
      if (next.signal && next.onAbort) next.signal.removeEventListener('abort', next.onAbort);
      next.resolve(this.releaser(key));
    };
  }
}

/** Sleeps `ms`, rejecting with `onAbort()` as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined, onAbort: () => Error): Promise<void> {
  if (signal?.aborted) return Promise.reject(onAbort());
  return new Promise((resolve, reject) => {
    const abort = () => {
      clearTimeout(timer);
      reject(onAbort());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', abort, { once: true });
  });
}
