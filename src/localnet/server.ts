/**
 * A Solana JSON-RPC endpoint over LiteSVM for tests, benchmarks and `sa-forge-signer localnet`.
 *
 * litesvm is a devDependency: load this module only with `await import('../localnet')`, never a static import,
 * so a production image without litesvm still starts.
 */
import { decodeAddress } from '../util/base58';
import { SignerError } from '../util/errors';
import { EmbeddedChain } from './embedded-chain';
import { FaultState, type LocalnetFaults } from './faults';
import { listenJsonRpc } from './http-server';
import { PriceKeeper, writePrice, type LocalPrice, type WrittenPrice } from './prices';
import { LocalnetRpc } from './rpc-methods';
import { createSignaturePubsub, type PubsubStats } from './signature-pubsub';

export type { LocalnetFaults } from './faults';
export type { PubsubStats } from './signature-pubsub';
export type { LocalPrice, WrittenPrice } from './prices';

/** sha256("sa-forge-signer localnet genesis") in base58: fixed, so a config can pin it. */
export const DEFAULT_LOCALNET_GENESIS_HASH = '2GqPixpG6FHjoQ7UZaZR7ZSUkdrWLtwPTDw5aiMa4up5';

export interface LocalnetOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** How often a block is produced; 0 = only by advanceBlocks. Default 400. */
  blockIntervalMs?: number;
  /** Blocks after landing until a transaction is `confirmed`. Default 1. */
  confirmAfterBlocks?: number;
  /** Blocks after landing until a transaction is `finalized`. Default 2, or confirmAfterBlocks when that is more. */
  finalizeAfterBlocks?: number;
  genesisHash?: string;
  fund?: { address: string; lamports: number }[];
  /** Expose the fault controls as `localnet_*` JSON-RPC methods (for tests that run the localnet in another process). */
  controls?: boolean;
  /**
   * Keep prices fresh as Pyth's sponsored feeds are kept (prices.ts PriceKeeper), starting with these: given (even
   * empty), every price later written with age 0 is published again as the clock moves; absent, a price is written
   * once and ages with the chain's clock (tests that need a price to stay put).
   */
  livePrices?: LocalPrice[];
}

export interface Localnet {
  url: string;
  /** The WebSocket endpoint (signatureSubscribe): the same host and port as `url`, as on a node. */
  wsUrl: string;
  genesisHash: string;
  blockHeight(): number;
  advanceBlocks(n: number): void;
  airdrop(address: string, lamports: number): void;
  setAccount(address: string, acc: { lamports: number; owner: string; data?: Uint8Array; executable?: boolean }): void;
  /** Writes a Pyth PriceUpdateV2 account (src/localnet/prices.ts), as `localnet_setPrice` does. */
  setPrice(price: LocalPrice): WrittenPrice;
  /** The Clock sysvar's unix_timestamp: the chain's time, which follows the host's at each block. */
  clockTime(): bigint;
  faults: LocalnetFaults;
  stats(): { sends: number; landed: number; calls: Record<string, number>; pubsub: PubsubStats };
  close(): Promise<void>;
}

export async function startLocalnet(opts: LocalnetOptions = {}): Promise<Localnet> {
  const confirmAfterBlocks = blocks(opts.confirmAfterBlocks ?? 1, 'confirmAfterBlocks');
  const finalizeAfterBlocks = blocks(
    opts.finalizeAfterBlocks ?? Math.max(2, confirmAfterBlocks),
    'finalizeAfterBlocks',
  );
  if (finalizeAfterBlocks < confirmAfterBlocks) {
    throw new SignerError(
      'config_invalid',
      'localnet: finalizeAfterBlocks must not be smaller than confirmAfterBlocks',
    );
  }
  const blockIntervalMs = blocks(opts.blockIntervalMs ?? 400, 'blockIntervalMs');
  const genesisHash = opts.genesisHash ?? DEFAULT_LOCALNET_GENESIS_HASH;
  if (!decodeAddress(genesisHash))
    throw new SignerError('config_invalid', 'localnet: genesisHash must be a base58 32-byte hash');

  const chain = new EmbeddedChain({ confirmAfterBlocks, finalizeAfterBlocks });
  const faults = new FaultState(chain);
  const pubsub = createSignaturePubsub(chain, faults);
  faults.attachPubsub(pubsub);
  for (const { address, lamports } of opts.fund ?? []) fund(chain, address, lamports);
  const keeper = opts.livePrices === undefined ? null : new PriceKeeper(chain);
  for (const p of opts.livePrices ?? []) keeper?.set(p);
  const setPrice = (p: LocalPrice): WrittenPrice => (keeper ? keeper.set(p) : writePrice(chain, p));

  const stats = () => ({
    sends: chain.sends,
    landed: chain.landedCount,
    calls: { ...rpc.calls },
    pubsub: pubsub.stats(),
  });
  const rpc = new LocalnetRpc(
    chain,
    faults,
    genesisHash,
    { advanceBlocks: (n) => chain.advanceBlocks(n), stats, setPrice },
    opts.controls === true,
  );
  const server = await listenJsonRpc(
    (method, params) => rpc.call(method, params),
    opts.host ?? '127.0.0.1',
    opts.port ?? 0,
    (req, socket, head) => pubsub.upgrade(req, socket, head),
  );

  const timer =
    blockIntervalMs > 0
      ? setInterval(() => {
          if (!faults.frozen) chain.advanceBlocks(1);
          keeper?.refresh();
        }, blockIntervalMs)
      : null;
  timer?.unref();

  return {
    url: server.url,
    wsUrl: server.url.replace(/^http/, 'ws'),
    genesisHash,
    blockHeight: () => chain.blockHeight,
    advanceBlocks: (n) => chain.advanceBlocks(blocks(n, 'advanceBlocks')),
    airdrop: (address, lamports) => fund(chain, address, lamports),
    setAccount: (address, acc) => {
      if (!decodeAddress(address)) throw new SignerError('request_invalid', `localnet: ${address} is not an address`);
      chain.setAccount(address, acc);
    },
    setPrice,
    clockTime: () => chain.clockTime,
    faults,
    stats,
    close: async () => {
      if (timer) clearInterval(timer);
      pubsub.close();
      await server.close();
    },
  };
}

function fund(chain: EmbeddedChain, address: string, lamports: number): void {
  if (!decodeAddress(address))
    throw new SignerError('config_invalid', `localnet: cannot fund ${address}: not a base58 address`);
  if (!Number.isSafeInteger(lamports) || lamports <= 0) {
    throw new SignerError(
      'config_invalid',
      `localnet: cannot fund ${address}: lamports must be a positive whole number`,
    );
  }
  try {
    chain.airdrop(address, lamports);
  } catch (e) {
    throw new SignerError('config_invalid', `localnet: cannot fund ${address}: ${(e as Error).message}`);
  }
}

function blocks(n: number, name: string): number {
  if (!Number.isSafeInteger(n) || n < 0)
    throw new SignerError('config_invalid', `localnet: ${name} must be a whole number ≥ 0`);
  return n;
}
