/**
 * Whether a price account read may value a spend: the one place that decides it. A price counts only when it is
 * the configured feed, written by the Pyth receiver program, verified by a guardian quorum (unless the operator
 * allows partial), fresh on the cluster's own clock read in the same request, and narrow enough. Anything else
 * is a refusal with its figures, so an agent (or an attacker who controls an account) cannot make a spend look
 * cheaper than it is.
 *
 * This judges evidence, not a key's policy: whether an oracle read is a fact the dollar caps may use. It stays in
 * pricing/ (below signer/), beside the reads it checks; a price that fails is a dollar value the flow could not
 * establish (the `usd` fact is then a refusal), and the policy core refuses a key with dollar caps on it
 * (policy/rules/usd-caps.ts), never judging the spend as free. usd-spend.ts and price-reads.ts do the same.
 */
import type { Address } from '@solana/addresses';
import type { ReadonlyUint8Array } from '@solana/codecs';
import type { PriceBounds, PriceSource } from '../config/sections/prices';
import { refusal, type Refusal } from '../signer/refusals';
import { decodePriceUpdateV2, PYTH_RECEIVER_PROGRAM, type VerificationLevel } from './price-update';
import { pythDecimal, type UsdPrice } from './valuation';

export type { PriceBounds, PriceSource };

/** The account as the RPC node returned it in the simulation's batch, or null when it does not exist. */
export interface PriceAccountRead {
  owner: Address;
  data: ReadonlyUint8Array;
}

/** A price that passed, with what the ledger records of it. */
export interface CheckedPrice extends UsdPrice {
  account: Address;
  feedId: string;
  publishTime: bigint;
  /** The cluster's clock when read, and the price's age on it (0 when published after that clock). */
  clockTime: bigint;
  ageS: bigint;
  verification: VerificationLevel;
}

export type PriceCheck = { ok: true; price: CheckedPrice } | { ok: false; refusal: Refusal };

const showLevel = (v: VerificationLevel): string =>
  v.__kind === 'Full' ? 'Full' : `Partial (${v.numSignatures} signatures)`;

/** Seconds, for a figure: exact while they fit, which any clock or publish time does. */
const seconds = (s: bigint): number => Number(s);

/**
 * Judge `read` (the source's account) against the source and bounds at `clockTime`, the cluster's
 * `Clock.unix_timestamp` from the same batch of reads.
 */
export function checkPrice(
  source: PriceSource,
  bounds: PriceBounds,
  read: PriceAccountRead | null,
  clockTime: bigint,
): PriceCheck {
  const where = `${source.label} price account ${source.account}`;
  const base = { price_account: source.account, feed_id: source.feedId };
  if (read === null)
    return refuse(
      refusal(
        'price_unavailable',
        `the ${where} does not exist on this cluster; the operator should check \`prices.feeds\` (the account, and that the cluster is the one the feed is posted on)`,
        base,
      ),
    );
  if (read.owner !== PYTH_RECEIVER_PROGRAM)
    return refuse(
      refusal(
        'price_unverified',
        `the ${where} is owned by ${read.owner}, not the Pyth receiver program ${PYTH_RECEIVER_PROGRAM}; only the receiver's accounts carry verified prices`,
        { ...base, owner: read.owner },
      ),
    );
  const decoded = decodePriceUpdateV2(read.data);
  if (!decoded.ok)
    return refuse(
      refusal('price_unavailable', `the ${where} is not a price: ${decoded.why}`, { ...base, owner: read.owner }),
    );
  const { verificationLevel, priceMessage: m } = decoded.update;
  if (m.feedId !== source.feedId)
    return refuse(
      refusal(
        'price_unverified',
        `the ${where} carries feed ${m.feedId}, not ${source.feedId}; the operator should check \`prices.feeds\``,
        { ...base, account_feed_id: m.feedId },
      ),
    );
  if (verificationLevel.__kind !== 'Full' && !bounds.allowPartial)
    return refuse(
      refusal(
        'price_unverified',
        `the ${where} was verified ${showLevel(verificationLevel)}, not by a full guardian quorum; the operator may allow it with \`prices.allow_partial_verification\``,
        { ...base, verification: showLevel(verificationLevel) },
      ),
    );
  if (m.price <= 0n)
    return refuse(
      refusal(
        'price_unavailable',
        `the ${where} carries a price of ${pythDecimal(m.price, m.exponent)}, which cannot value a spend`,
        base,
      ),
    );
  const age = clockTime - m.publishTime;
  if (age > BigInt(bounds.maxAgeS))
    return refuse(
      refusal(
        'price_stale',
        `the ${where} was published ${age} s before the cluster's clock, more than the ${bounds.maxAgeS} s \`prices.max_age_s\` allows`,
        {
          price_account: source.account,
          publish_time: seconds(m.publishTime),
          clock_time: seconds(clockTime),
          age_s: seconds(age),
          max_age_s: bounds.maxAgeS,
        },
      ),
    );
  // conf / price > max_bps / 10_000, without division.
  if (m.conf * 10_000n > BigInt(bounds.maxConfidenceBps) * m.price) {
    const bps = (m.conf * 10_000n + m.price - 1n) / m.price;
    return refuse(
      refusal(
        'price_uncertain',
        `the ${where} is ${pythDecimal(m.price, m.exponent)} ± ${pythDecimal(m.conf, m.exponent)} dollars, an interval of ${bps} bps, wider than the ${bounds.maxConfidenceBps} bps \`prices.max_confidence_bps\` allows`,
        {
          price_account: source.account,
          price: pythDecimal(m.price, m.exponent),
          confidence: pythDecimal(m.conf, m.exponent),
          confidence_bps: Number(bps),
          max_confidence_bps: bounds.maxConfidenceBps,
        },
      ),
    );
  }
  return {
    ok: true,
    price: {
      account: source.account,
      feedId: m.feedId,
      price: m.price,
      conf: m.conf,
      exponent: m.exponent,
      publishTime: m.publishTime,
      clockTime,
      ageS: age > 0n ? age : 0n,
      verification: verificationLevel,
    },
  };
}

const refuse = (r: Refusal): PriceCheck => ({ ok: false, refusal: r });
