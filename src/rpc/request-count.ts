/**
 * How many HTTP requests one operation (a sign, a check) sent to the cluster, and how many of them went before its
 * first send. Against a remote provider each request is a round trip, so this is the figure the flows are built to
 * keep small: one request before the send in the common case (docs/chain.md, "Round trips").
 *
 * The count follows the operation's asynchronous context (AsyncLocalStorage), so signs running side by side are
 * counted apart. A batch that carries calls of several operations counts once for each of them: each waited for
 * that one round trip. What runs on after the operation returned (a sign-only watcher's polls) is not counted.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** The requests of one operation so far. */
export interface RequestTally {
  /** HTTP requests sent, retries included. */
  readonly requests: number;
  /** Requests sent before the first one carrying sendTransaction; null while none has carried one. */
  readonly beforeSend: number | null;
  /** The JSON-RPC methods of each request, in the order sent. */
  readonly methods: readonly (readonly string[])[];
}

/** A tally the transport adds to; closed once its operation has returned. */
export class RequestCounter implements RequestTally {
  requests = 0;
  beforeSend: number | null = null;
  readonly methods: string[][] = [];
  private closed = false;

  /** One HTTP request carrying `methods` left for the endpoint. */
  add(methods: readonly string[]): void {
    if (this.closed) return;
    if (this.beforeSend === null && methods.includes('sendTransaction')) this.beforeSend = this.requests;
    this.requests++;
    this.methods.push([...methods]);
  }

  close(): void {
    this.closed = true;
  }
}

const current = new AsyncLocalStorage<RequestCounter>();

/** The counter of the operation running now, if one is being counted. */
export function currentRequestCounter(): RequestCounter | undefined {
  return current.getStore();
}

/** Runs `operation`, counting the HTTP requests the RPC client sends on its behalf until it settles. */
export async function countRequests<T>(operation: () => Promise<T>): Promise<{ result: T; tally: RequestTally }> {
  const counter = new RequestCounter();
  try {
    const result = await current.run(counter, operation);
    return { result, tally: counter };
  } finally {
    counter.close();
  }
}
