/**
 * Signature subscriptions over the cluster's WebSocket endpoints (`signatureSubscribe`, the JSON-RPC pub-sub every
 * Solana node serves), on Node's own WebSocket client: one connection per endpoint, shared by every transaction
 * followed, opened when a subscription needs it, pinged while open and closed once it has carried no subscription
 * for a while. Each message is parsed once and handed to its waiter by id: a busy signer follows tens of
 * signatures at once, and a client that gives every message to every subscription (kit's @solana/rpc-subscriptions
 * parses each message once per listener) spends more CPU on that than on the rest of the sign.
 *
 * A subscription goes to the first endpoint in order that is not backing off; when a connection cannot be opened,
 * its subscription is not acknowledged in time, or an open one drops, the endpoint backs off (full jitter, doubling
 * with each failure in a row; failures of many subscriptions at once count once) and every subscription waiting on
 * it is made again once the backoff is over, on whichever endpoint is available then. A subscription made after the
 * status was reached gets no notice (a node sends none for what already happened); the confirmation loop's polls
 * cover that, as they cover a socket that is down.
 */
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

/** A ping on an open connection this often, so a provider or a proxy does not end it as idle (kit's interval). */
const PING_INTERVAL_MS = 5_000;
/** A connection that has carried no subscription this long is closed; the next subscription opens another. */
const IDLE_CLOSE_MS = 30_000;

interface Endpoint {
  name: string;
  url: string;
  connection: Connection | null;
  /** Failures since the endpoint last acknowledged a subscription. */
  failures: number;
  /** Epoch ms before which no subscription is tried here. */
  retryAt: number;
}

class SubscribeTimeout extends Error {}
class ConnectionLost extends Error {}

/** One subscription on a connection: its acknowledgement, then its one notification. */
interface Waiter {
  acknowledged(subscription: number): void;
  notified(): void;
  failed(e: Error): void;
}

/**
 * One WebSocket connection and the subscriptions it carries. Requests get ids of its own; a reply is matched to its
 * request by id, a notification to its subscription by the subscription's id. When the connection ends, every
 * waiter on it fails at once.
 */
class Connection {
  private readonly socket: WebSocket;
  private readonly opened: Promise<void>;
  private nextId = 1;
  /** Subscribe requests sent and not yet answered, by request id. */
  private readonly requests = new Map<number, Waiter>();
  /** Acknowledged subscriptions waiting for their notification, by subscription id. */
  private readonly subscriptions = new Map<number, Waiter>();
  private ended = false;
  private readonly ping: NodeJS.Timeout;
  private idleTimer: NodeJS.Timeout | null = null;

  constructor(
    url: string,
    private readonly onEnd: (connection: Connection) => void,
  ) {
    this.socket = new WebSocket(url);
    this.opened = new Promise<void>((resolve, reject) => {
      this.socket.addEventListener('open', () => resolve(), { once: true });
      this.socket.addEventListener('close', (e) => reject(new ConnectionLost(closedMessage(e))), { once: true });
    });
    // A failure to open is reported to the subscriptions waiting on it; nobody else awaits this promise.
    this.opened.catch(() => undefined);
    this.socket.addEventListener('message', (e) => this.received(e.data));
    // An error event is always followed by the close event, which ends the connection.
    this.socket.addEventListener('close', (e) => this.end(new ConnectionLost(closedMessage(e))));
    this.ping = setInterval(() => this.send({ jsonrpc: '2.0', method: 'ping' }), PING_INTERVAL_MS);
    this.ping.unref();
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /**
   * Subscribes to `signature`; `waiter` is told of the acknowledgement, the notification or the failure. The
   * function returned ends the subscription early (unsubscribing when it was acknowledged and not yet notified).
   */
  subscribe(signature: string, commitment: Commitment, waiter: Waiter): () => void {
    const id = this.nextId++;
    let subscription: number | null = null;
    let done = false;
    const finish = (): void => {
      done = true;
      this.requests.delete(id);
      if (subscription !== null) this.subscriptions.delete(subscription);
      this.idleCheck();
    };
    const own: Waiter = {
      acknowledged: (sub) => {
        subscription = sub;
        this.subscriptions.set(sub, own);
        waiter.acknowledged(sub);
      },
      notified: () => {
        // A node ends a signature subscription with its notification: nothing to unsubscribe.
        subscription = null;
        finish();
        waiter.notified();
      },
      failed: (e) => {
        finish();
        waiter.failed(e);
      },
    };
    this.requests.set(id, own);
    this.clearIdle();
    this.opened.then(
      () => {
        if (!done) this.send({ jsonrpc: '2.0', id, method: 'signatureSubscribe', params: [signature, { commitment }] });
      },
      (e: unknown) => {
        if (!done) own.failed(e instanceof Error ? e : new ConnectionLost(String(e)));
      },
    );
    return () => {
      if (done) return;
      const sub = subscription;
      finish();
      if (sub !== null) this.send({ jsonrpc: '2.0', id: this.nextId++, method: 'signatureUnsubscribe', params: [sub] });
    };
  }

  close(): void {
    this.end(new ConnectionLost('the subscriptions were closed'));
  }

  private send(message: unknown): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
  }

  private received(data: unknown): void {
    if (typeof data !== 'string') return;
    let message: unknown;
    try {
      message = JSON.parse(data);
    } catch {
      return;
    }
    if (typeof message !== 'object' || message === null) return;
    const m = message as { id?: unknown; result?: unknown; error?: unknown; method?: unknown; params?: unknown };
    if (typeof m.id === 'number') {
      const waiter = this.requests.get(m.id);
      if (waiter === undefined) return;
      this.requests.delete(m.id);
      if (typeof m.result === 'number') waiter.acknowledged(m.result);
      else waiter.failed(new Error(`the endpoint refused the subscription: ${describeRpcError(m.error)}`));
      return;
    }
    if (m.method === 'signatureNotification') {
      const sub = (m.params as { subscription?: unknown } | undefined)?.subscription;
      if (typeof sub === 'number') this.subscriptions.get(sub)?.notified();
    }
  }

  private end(e: Error): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.ping);
    this.clearIdle();
    const waiting = [...this.requests.values(), ...this.subscriptions.values()];
    this.requests.clear();
    this.subscriptions.clear();
    for (const w of waiting) w.failed(e);
    if (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING)
      this.socket.close();
    this.onEnd(this);
  }

  private idleCheck(): void {
    if (this.ended || this.requests.size > 0 || this.subscriptions.size > 0 || this.idleTimer !== null) return;
    this.idleTimer = setTimeout(() => this.end(new ConnectionLost('idle')), IDLE_CLOSE_MS);
    this.idleTimer.unref();
  }

  private clearIdle(): void {
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }
}

function closedMessage(e: CloseEvent): string {
  return `the WebSocket connection closed (code ${e.code})`;
}

function describeRpcError(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message.slice(0, 200) : 'no reason given';
}

export function createSignatureSubscriptions(settings: SignatureSubscriptionSettings): SignatureNotices {
  const random = settings.random ?? Math.random;
  const closing = new AbortController();
  const endpoints: Endpoint[] = settings.urls.map((url) => ({
    name: safeName(url),
    url,
    connection: null,
    failures: 0,
    retryAt: 0,
  }));

  /** The endpoint's open (or opening) connection, a new one when it has none. */
  const connectionOf = (ep: Endpoint): Connection => {
    if (ep.connection === null || ep.connection.isEnded) {
      ep.connection = new Connection(ep.url, (c) => {
        if (ep.connection === c) ep.connection = null;
      });
    }
    return ep.connection;
  };

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
  function subscribeOnce(ep: Endpoint, signature: string, signal: AbortSignal): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      let cancel = (): void => {};
      const settle = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', stop);
      };
      const stop = (): void => {
        settle();
        cancel();
        resolve(false);
      };
      if (signal.aborted) {
        resolve(false);
        return;
      }
      let connection: Connection;
      try {
        connection = connectionOf(ep);
      } catch (e) {
        // A URL the WebSocket client refuses: the endpoint fails as one that cannot be reached.
        reject(e instanceof Error ? e : new Error(String(e)));
        return;
      }
      cancel = connection.subscribe(signature, settings.commitment, {
        acknowledged: () => {
          clearTimeout(timer);
          answered(ep);
        },
        notified: () => {
          settle();
          resolve(true);
        },
        failed: (e) => {
          settle();
          reject(e);
        },
      });
      // Declared after the waiter's callbacks that clear it: none of them can run before this (they run later).
      const timer = setTimeout(() => {
        settle();
        cancel();
        reject(new SubscribeTimeout('no acknowledgement in time'));
      }, settings.subscribeTimeoutMs);
      signal.addEventListener('abort', stop, { once: true });
    });
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
      for (const ep of endpoints) ep.connection?.close();
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
