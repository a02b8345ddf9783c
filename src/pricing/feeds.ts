/**
 * The Pyth feeds the signer knows by name. A feed id names a price stream on Pythnet, the same on every cluster; the
 * account that carries it on Solana is the operator's choice (`prices.feeds.*.account`): usually Pyth's sponsored
 * account for shard 0, which the push-oracle program keeps fresh.
 *
 * Ids: Pyth's price feed list (pyth.network/developers/price-feed-ids). Sponsored accounts: the program-derived
 * address of the push oracle `pythWSnswVUd12oZpeFP8e9CVaEqJg25g1Vtc2biRsT` with seeds [shard as u16 LE, feed id],
 * as the receiver SDK's getPriceFeedAccountForProgram derives them (test/pricing/feeds.unit.test.ts derives them
 * again and compares with the SDK's own output in test/fixtures/pyth).
 */
import { address, type Address } from '@solana/addresses';

/** The push-oracle program that owns no price itself but keeps the sponsored PriceUpdateV2 accounts updated. */
export const PYTH_PUSH_ORACLE_PROGRAM: Address = address('pythWSnswVUd12oZpeFP8e9CVaEqJg25g1Vtc2biRsT');

export interface KnownFeed {
  /** 64 lowercase hex digits, no `0x`. */
  feedId: string;
  /** The sponsored account on shard 0, derived from the push oracle and the feed id, so the same on every cluster. */
  sponsoredAccount: Address;
}

export const KNOWN_FEEDS = {
  'SOL/USD': {
    feedId: 'ef0d8b6fda2ceba41da15d4095d1da392a0d2f8ed0c6c7bc0f4cfac8c280b56d',
    sponsoredAccount: address('7UVimffxr9ow1uXYxsr4LHAcV58mLzhmwaeKvJ1pjLiE'),
  },
  'USDC/USD': {
    feedId: 'eaa020c61cc479712813461ce153894a96a6c00b21ed0cfc2798d1f9a9e9c94a',
    sponsoredAccount: address('Dpw1EAVrSB1ibxiDQyTAW6Zip3J4Btk2x4SgApQCeFbX'),
  },
} as const satisfies Record<string, KnownFeed>;

export type KnownFeedName = keyof typeof KNOWN_FEEDS;
