/**
 * Test-only faults: each one reproduces something a real cluster or RPC provider does to a signer.
 * Reachable in-process through `Localnet.faults`, and over JSON-RPC (`localnet_*`) only when the localnet
 * was started with `controls: true`.
 */
import type { EmbeddedChain } from './embedded-chain';
import type { PubsubFaults, SignaturePubsub } from './signature-pubsub';

export interface LocalnetFaults {
  /** sendTransaction still answers the signature, but the transaction never lands (a dropped packet). */
  dropSends(on: boolean): void;
  /** Every blockhash issued so far becomes invalid: simulations report BlockhashNotFound, sends never land. */
  expireAllBlockhashes(): void;
  /** The block timer stops (a stalled cluster); advanceBlocks still moves the height by hand. */
  freezeHeight(on: boolean): void;
  /** Statuses stay `processed` and getTransaction finds nothing; heights keep moving. */
  stallConfirmations(on: boolean): void;
  /** The next n calls (of `method`, or of any method) answer JSON-RPC -32603 Internal error. */
  failNext(n: number, method?: string): void;
  /** The WebSocket endpoint is unreachable: open connections end without a close handshake, upgrades are refused. */
  cutSockets(on: boolean): void;
  /** Subscriptions are taken, but a signature reaching their commitment sends no notification (a lost message). */
  dropNotifications(on: boolean): void;
  /** At the next block, every signature subscribed to is notified as landed, though its status has not reached it. */
  falseNotifications(on: boolean): void;
  /** The WebSocket server restarts: every connection is closed (1012) with its subscriptions; new ones are taken. */
  restartWebSocket(): void;
  /** Turns every fault off. */
  clear(): void;
}

export class FaultState implements LocalnetFaults, PubsubFaults {
  frozen = false;
  socketsCut = false;
  notificationsDropped = false;
  notificationsFalse = false;
  private readonly failures: { method: string | null; remaining: number }[] = [];
  private pubsub: SignaturePubsub | null = null;

  constructor(private readonly chain: EmbeddedChain) {}

  dropSends(on: boolean): void {
    this.chain.setDropSends(on);
  }

  expireAllBlockhashes(): void {
    this.chain.expireAllBlockhashes();
  }

  freezeHeight(on: boolean): void {
    this.frozen = on;
  }

  stallConfirmations(on: boolean): void {
    this.chain.setStalled(on);
  }

  /** The WebSocket endpoint the socket faults act on. */
  attachPubsub(pubsub: SignaturePubsub): void {
    this.pubsub = pubsub;
  }

  cutSockets(on: boolean): void {
    this.socketsCut = on;
    if (on) this.pubsub?.cut();
  }

  dropNotifications(on: boolean): void {
    this.notificationsDropped = on;
  }

  falseNotifications(on: boolean): void {
    this.notificationsFalse = on;
  }

  restartWebSocket(): void {
    this.pubsub?.restart();
  }

  failNext(n: number, method?: string): void {
    if (!Number.isInteger(n) || n < 0) throw new RangeError('failNext takes a whole number of calls');
    if (n > 0) this.failures.push({ method: method ?? null, remaining: n });
  }

  clear(): void {
    this.chain.setDropSends(false);
    this.chain.setStalled(false);
    this.frozen = false;
    this.socketsCut = false;
    this.notificationsDropped = false;
    this.notificationsFalse = false;
    this.failures.length = 0;
  }

  /** Whether this call of `method` must fail; a failure aimed at the method is used before a general one. */
  takeFailure(method: string): boolean {
    const i = this.failures.findIndex((f) => f.method === method);
    const j = i >= 0 ? i : this.failures.findIndex((f) => f.method === null);
    const entry = this.failures[j];
    if (!entry) return false;
    if (--entry.remaining === 0) this.failures.splice(j, 1);
    return true;
  }
}
