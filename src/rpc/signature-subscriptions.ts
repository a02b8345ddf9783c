/**
 * Signature subscriptions over the cluster's WebSocket endpoints, with kit's @solana/rpc-subscriptions: one
 * connection per endpoint, shared by every transaction followed (kit pools subscriptions on a channel and closes it
 * when the last one ends), kept alive by kit's pings. A subscription goes to the first endpoint in order that is
 * not backing off; when a connection cannot be opened, its subscription is not acknowledged in time, or an open one
 * drops, the endpoint backs off (full jitter, doubling with each failure in a row; failures of many subscriptions
 * at once count once) and every subscription waiting on it is made again once the backoff is over, on whichever
 * endpoint is available then. A subscription made after the status was reached gets no notice (a node sends none
 * for what already happened); the confirmation loop's polls cover that, as they cover a socket that is down.
 */
import type { Signature } from '@solana/keys';
import { createSolanaRpcSubscriptions } from '@solana/rpc-subscriptions';
import { fullJitterDelay, type BackoffSettings } from './backoff';
import { describeEndpoint } from './json-rpc-transport';
import type { NoticeEndpointEvent, SignatureNotices } from './notice-types';
import type { Commitment } from './types';
import { errorMessage } from '../util/errors';

export interface SignatureSubscriptionSettings {
  /** WebSocket endpoints in order of preference. */
  urls: readonly string[];
  commitment: Commitment;
  /** How long a subscription may wait for its acknowledgement (the connection included) before the endpoint fails. */
  subscribeTimeoutMs: number;
  backoff: BackoffSettings;
  random?: () => number;
  onEndpoint?: (event: NoticeEndpointEvent) => void;
}

/** Subscriptions one connection carries: all of them (kit's default of 100 would open a second connection). */
const SUBSCRIPTIONS_PER_CONNECTION = Number.MAX_SAFE_INTEGER;

interface Endpoint {
  name: string;
  subscriptions: ReturnType<typeof createSolanaRpcSubscriptions>;
  /** Failures since the endpoint last acknowledged a subscription. */
  failures: number;
  /** Epoch ms before which no subscription is tried here. */
  retryAt: number;
}

class SubscribeTimeout extends Error {}

export function createSignatureSubscriptions(settings: SignatureSubscriptionSettings): SignatureNotices {
  const random = settings.random ?? Math.random;
  const closing = new AbortController();
  const endpoints: Endpoint[] = settings.urls.map((url) => ({
    name: safeName(url),
    subscriptions: createSolanaRpcSubscriptions(url as `ws://${string}`, {
      maxSubscriptionsPerChannel: SUBSCRIPTIONS_PER_CONNECTION,
      minChannels: 1,
    }),
    failures: 0,
    retryAt: 0,
  }));

  const failed = (ep: Endpoint, e: unknown): void => {
    const now = Date.now();
    // Every subscription on a dropped connection fails at once: that is one failure of the endpoint.
    if (ep.retryAt > now) return;
    ep.failures++;
    ep.retryAt = now + fullJitterDelay(ep.failures - 1, settings.backoff, random);
    if (ep.failures === 1) settings.onEndpoint?.({ endpoint: ep.name, state: 'down', detail: errorMessage(e) });
  };
  const answered = (ep: Endpoint): void => {
    if (ep.failures > 0) settings.onEndpoint?.({ endpoint: ep.name, state: 'up', detail: null });
    ep.failures = 0;
    ep.retryAt = 0;
  };

  /** The first endpoint not backing off, waiting for the first backoff to end when all are; null once aborted. */
  async function available(signal: AbortSignal): Promise<Endpoint | null> {
    while (!signal.aborted) {
      const now = Date.now();
      const ready = endpoints.find((ep) => ep.retryAt <= now);
      if (ready) return ready;
      const next = Math.min(...endpoints.map((ep) => ep.retryAt));
      await pause(next - now, signal);
    }
    return null;
  }

  /** One subscription on `ep`: true on its notice, false when `signal` ended it; throws when the endpoint failed. */
  async function subscribeOnce(ep: Endpoint, signature: string, signal: AbortSignal): Promise<boolean> {
    const attempt = new AbortController();
    const stop = (): void => attempt.abort(signal.reason);
    signal.addEventListener('abort', stop, { once: true });
    const timer = setTimeout(
      () => attempt.abort(new SubscribeTimeout('no acknowledgement in time')),
      settings.subscribeTimeoutMs,
    );
    try {
      const notices = await ep.subscriptions
        .signatureNotifications(signature as Signature, { commitment: settings.commitment })
        .subscribe({ abortSignal: attempt.signal });
      clearTimeout(timer);
      answered(ep);
      // The first notification is the one a signature subscription sends; a done iterator means it was aborted.
      const first = await notices[Symbol.asyncIterator]().next();
      return first.done !== true;
    } catch (e) {
      if (signal.aborted) return false;
      throw attempt.signal.reason instanceof SubscribeTimeout ? attempt.signal.reason : e;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', stop);
      attempt.abort();
    }
  }

  return {
    async landed(signature, signal) {
      const both = AbortSignal.any([signal, closing.signal]);
      for (;;) {
        const ep = await available(both);
        if (ep === null) return false;
        try {
          return await subscribeOnce(ep, signature, both);
        } catch (e) {
          if (both.aborted) return false;
          failed(ep, e);
        }
      }
    },
    close() {
      closing.abort();
    },
  };
}

function safeName(url: string): string {
  try {
    return describeEndpoint(new URL(url));
  } catch {
    return 'a WebSocket endpoint';
  }
}

/** Waits `ms`, or less when `signal` aborts first. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal.addEventListener('abort', done, { once: true });
  });
}
