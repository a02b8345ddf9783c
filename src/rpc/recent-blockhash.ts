/**
 * The blockhash new transactions are built on, kept between signs so a sign does not spend a round trip fetching
 * one. A blockhash stays valid for 150 blocks (about 60 s at 400 ms a block); one fetched less than
 * `reuseForMs` ago is reused as is, one older than `refreshAfterMs` is replaced in the background, in the same
 * JSON-RPC batch as the next simulation (`refreshIfStale`, called in that batch's tick), so a busy signer never
 * waits for it. An idle one waits for a fresh one on its next sign.
 *
 * Reusing a blockhash never lets an expired one through: a sign simulates the exact signed transaction with its
 * blockhash as is, and the simulation refuses one the chain no longer knows (BlockhashNotFound); the flow then
 * fetches a fresh one (`fresh`) and signs again. What a blockhash reused for up to `reuseForMs` costs is that much
 * of the window a sign-only caller has to send it in.
 *
 * The same message built twice on one blockhash is the same transaction (one signature, run once by the chain):
 * `firstUse` tells a sign whether its message was already built on the held blockhash, so a repeated payload is
 * built on a fresh one instead, as it would have been when every sign fetched its own.
 */
import crypto from 'node:crypto';
import type { CallLimits, RpcClient } from './types';

export interface BlockhashLifetime {
  blockhash: string;
  lastValidBlockHeight: number;
}

export interface RecentBlockhashSettings {
  /** Older than this, the next simulation's batch fetches a newer one. */
  refreshAfterMs: number;
  /** Older than this, a sign waits for a fresh one instead of reusing it. */
  reuseForMs: number;
  now?: () => number;
}

/**
 * 2 s (five blocks) before a background refresh; reused for at most 10 s, a sixth of the blockhash's life at 400 ms
 * a block. A chain found to make blocks faster (the embedded chain can make one every few milliseconds) gets both
 * windows shortened to the same share of its blockhash's life: see `paceFrom`.
 */
export const RECENT_BLOCKHASH_DEFAULTS: RecentBlockhashSettings = Object.freeze({
  refreshAfterMs: 2_000,
  reuseForMs: 10_000,
});

/** Blocks a blockhash stays valid for after the block it names. */
const BLOCKHASH_LIFE_BLOCKS = 150;

export class RecentBlockhash {
  private held: { lifetime: BlockhashLifetime; at: number; built: Set<string> } | null = null;
  private fetching: Promise<BlockhashLifetime> | null = null;
  private readonly now: () => number;
  /** The reuse and refresh windows in force: the settings', or shorter on a chain seen making blocks faster. */
  private reuseForMs: number;
  private refreshAfterMs: number;
  /** The last fetch's time and last valid height, to measure how fast the chain makes blocks. */
  private lastSeen: { at: number; lastValidBlockHeight: number } | null = null;

  constructor(
    private readonly chain: Pick<RpcClient, 'getLatestBlockhash'>,
    private readonly settings: RecentBlockhashSettings = RECENT_BLOCKHASH_DEFAULTS,
  ) {
    this.now = settings.now ?? Date.now;
    this.reuseForMs = settings.reuseForMs;
    this.refreshAfterMs = settings.refreshAfterMs;
  }

  /** The held blockhash while it is young enough to reuse, else a fresh one (one fetch shared by every caller). */
  get(limits?: CallLimits): Promise<BlockhashLifetime> {
    const held = this.held;
    if (held !== null && this.now() - held.at < this.reuseForMs) return Promise.resolve(held.lifetime);
    return this.fetch(limits);
  }

  /** A blockhash fetched now, which later signs reuse. */
  fresh(limits?: CallLimits): Promise<BlockhashLifetime> {
    return this.fetch(limits, true);
  }

  /**
   * Starts fetching a newer blockhash when the held one is older than `refreshAfterMs`, without waiting for it.
   * Called in the tick a simulation is sent, the fetch rides in its batch. A failed refresh keeps the held one.
   * Returns the refresh started (it settles once it is done and never rejects), or null when none was needed.
   */
  refreshIfStale(): Promise<void> | null {
    const held = this.held;
    if (held === null || this.fetching !== null) return null;
    if (this.now() - held.at < this.refreshAfterMs) return null;
    return this.fetch().then(
      () => undefined,
      () => undefined,
    );
  }

  /**
   * Records that `message` is built on `blockhash` for a sign; false when it already was (the same transaction
   * again). Only the held blockhash keeps a record: a message on any other is not a repeat of a kept one.
   */
  firstUse(blockhash: string, message: Uint8Array): boolean {
    const held = this.held;
    if (held === null || held.lifetime.blockhash !== blockhash) return true;
    const digest = crypto.createHash('sha256').update(message).digest('base64');
    if (held.built.has(digest)) return false;
    held.built.add(digest);
    return true;
  }

  /** The chain no longer knows `blockhash`: never reuse it. */
  forget(blockhash: string): void {
    if (this.held?.lifetime.blockhash === blockhash) this.held = null;
  }

  private fetch(limits?: CallLimits, own = false): Promise<BlockhashLifetime> {
    if (this.fetching !== null && !own) return this.fetching;
    const asked = this.now();
    const fetching = this.chain.getLatestBlockhash(limits).then((lifetime) => {
      this.paceFrom(asked, lifetime.lastValidBlockHeight);
      // A slower fetch started earlier must not replace a newer blockhash.
      if (this.held === null || this.held.at <= asked) {
        const same = this.held?.lifetime.blockhash === lifetime.blockhash;
        this.held = { lifetime, at: asked, built: same && this.held !== null ? this.held.built : new Set() };
      }
      return lifetime;
    });
    if (!own) {
      this.fetching = fetching;
      const clear = (): void => {
        if (this.fetching === fetching) this.fetching = null;
      };
      fetching.then(clear, clear);
    }
    return fetching;
  }

  /**
   * Two fetches far enough apart tell how many milliseconds a block takes: the windows keep the same share of the
   * blockhash's life as the settings give it at 400 ms a block, so a blockhash is never reused near its end on a
   * fast chain (there a reused one could pass the simulation and expire before it lands). Never longer than set.
   */
  private paceFrom(at: number, lastValidBlockHeight: number): void {
    const seen = this.lastSeen;
    if (seen === null || at - seen.at >= 200 || lastValidBlockHeight < seen.lastValidBlockHeight)
      this.lastSeen = { at, lastValidBlockHeight };
    if (seen === null) return;
    const blocks = lastValidBlockHeight - seen.lastValidBlockHeight;
    const ms = at - seen.at;
    if (blocks <= 0 || ms < 200) return;
    const lifeMs = (ms / blocks) * BLOCKHASH_LIFE_BLOCKS;
    const share = (window: number) => Math.min(window, Math.floor((lifeMs * window) / (400 * BLOCKHASH_LIFE_BLOCKS)));
    this.reuseForMs = share(this.settings.reuseForMs);
    this.refreshAfterMs = share(this.settings.refreshAfterMs);
  }
}

const byClient = new WeakMap<RpcClient, RecentBlockhash>();

/** The recent blockhash of a chain client: one per client, so every engine on it shares it. */
export function recentBlockhashOf(chain: RpcClient): RecentBlockhash {
  let recent = byClient.get(chain);
  if (recent === undefined) {
    recent = new RecentBlockhash(chain);
    byClient.set(chain, recent);
  }
  return recent;
}
