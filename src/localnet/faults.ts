/**
 * Test-only faults: each one reproduces something a real cluster or RPC provider does to a signer.
 * Reachable in-process through `Localnet.faults`, and over JSON-RPC (`localnet_*`) only when the localnet
 * was started with `controls: true`.
 */
import type { LocalChain } from './embedded-chain';

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
  /** Turns every fault off. */
  clear(): void;
}

export class FaultState implements LocalnetFaults {
  frozen = false;
  private readonly failures: { method: string | null; remaining: number }[] = [];

  constructor(private readonly chain: LocalChain) {}

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

  failNext(n: number, method?: string): void {
    if (!Number.isInteger(n) || n < 0) throw new RangeError('failNext takes a whole number of calls');
    if (n > 0) this.failures.push({ method: method ?? null, remaining: n });
  }

  clear(): void {
    this.chain.setDropSends(false);
    this.chain.setStalled(false);
    this.frozen = false;
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
