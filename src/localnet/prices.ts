/**
 * Prices on the embedded chain: a Pyth `PriceUpdateV2` account written in the receiver's exact layout and owned by
 * the receiver program, as Pyth's push oracle would leave it, so dollar caps can be tried and tested without a
 * real cluster. Its publish time is set against the chain's own Clock sysvar, so `age_s` is the age a price check
 * on this chain sees.
 */
import { address } from '@solana/kit';
import { encodePriceUpdateV2, PYTH_RECEIVER_PROGRAM, type VerificationLevel } from '../pricing/price-update';
import { parsePythDecimal, pythDecimal } from '../pricing/valuation';
import { normalizeFeedId } from '../util/feed-id';
import { decodeAddress } from '../util/base58';
import { RpcFault, type EmbeddedChain } from './embedded-chain';

/** Pyth's USD feeds for crypto assets carry 8 decimals. */
export const LOCAL_PRICE_EXPONENT = -8;
/** Any write authority will do: nothing on this chain checks it. */
const WRITE_AUTHORITY = address('11111111111111111111111111111111');
/** Enough lamports for the account to exist (a node reports an account with none as absent). */
const PRICE_ACCOUNT_LAMPORTS = 1_000_000;

export interface LocalPrice {
  account: string;
  /** 64 hex digits, `0x` optional. */
  feedId: string;
  /** Dollars as decimal strings, at most 8 decimals (`"150.25"`, `"0.05"`). */
  price: string;
  conf: string;
  /** Seconds between publication and the chain's clock; 0 by default. */
  ageS?: number;
  verification?: VerificationLevel;
  /** Another owner than the receiver program: what an impostor account looks like. */
  owner?: string;
}

export interface WrittenPrice {
  account: string;
  feed_id: string;
  price: string;
  conf: string;
  exponent: number;
  publish_time: number;
  clock_time: number;
}

export function writePrice(chain: EmbeddedChain, p: LocalPrice): WrittenPrice {
  if (!decodeAddress(p.account)) throw new RpcFault(-32602, 'Invalid param: account is not an address');
  const feedId = normalizeFeedId(p.feedId);
  if (feedId === null) throw new RpcFault(-32602, 'Invalid param: feed_id must be 64 hex digits');
  const price = parsePythDecimal(p.price, LOCAL_PRICE_EXPONENT);
  const conf = parsePythDecimal(p.conf, LOCAL_PRICE_EXPONENT);
  if (price === null || conf === null)
    throw new RpcFault(-32602, 'Invalid param: price and conf are dollars with at most 8 decimals, like "150.25"');
  const ageS = p.ageS ?? 0;
  if (!Number.isSafeInteger(ageS) || ageS < 0)
    throw new RpcFault(-32602, 'Invalid param: age_s must be a whole number');
  const clockTime = chain.clockTime;
  const publishTime = clockTime - BigInt(ageS);
  chain.setAccount(p.account, {
    lamports: PRICE_ACCOUNT_LAMPORTS,
    owner: p.owner ?? PYTH_RECEIVER_PROGRAM,
    data: encodePriceUpdateV2({
      writeAuthority: WRITE_AUTHORITY,
      verificationLevel: p.verification ?? { __kind: 'Full' },
      priceMessage: {
        feedId,
        price,
        conf,
        exponent: LOCAL_PRICE_EXPONENT,
        publishTime,
        prevPublishTime: publishTime - 1n,
        emaPrice: price,
        emaConf: conf,
      },
      postedSlot: BigInt(chain.slot),
    }),
  });
  return {
    account: p.account,
    feed_id: feedId,
    price: pythDecimal(price, LOCAL_PRICE_EXPONENT),
    conf: pythDecimal(conf, LOCAL_PRICE_EXPONENT),
    exponent: LOCAL_PRICE_EXPONENT,
    publish_time: Number(publishTime),
    clock_time: Number(clockTime),
  };
}

/**
 * Pyth's sponsored feeds are pushed every few seconds on a real cluster, so their prices never go stale by
 * themselves; the keeper does the same on the embedded default (`npm start`), so dollar caps work for as long as it
 * runs. A price written with age 0 is published again, at the same figures, whenever a block moved the chain's
 * clock; one written with an age stays as written, a feed that stopped (how a stale price is tried), until a price
 * with age 0 is written to its account again.
 */
export class PriceKeeper {
  private readonly live = new Map<string, LocalPrice>();
  private publishedAt: bigint | null = null;

  constructor(private readonly chain: EmbeddedChain) {}

  set(p: LocalPrice): WrittenPrice {
    const written = writePrice(this.chain, p);
    if ((p.ageS ?? 0) === 0) this.live.set(p.account, { ...p, ageS: 0 });
    else this.live.delete(p.account);
    return written;
  }

  /** After a block: every live price published again at the chain's clock, once per clock second. */
  refresh(): void {
    const clock = this.chain.clockTime;
    if (clock === this.publishedAt) return;
    this.publishedAt = clock;
    for (const p of this.live.values()) writePrice(this.chain, p);
  }
}
