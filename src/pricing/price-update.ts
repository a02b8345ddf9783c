/**
 * Pyth's pull-oracle price account, `PriceUpdateV2`, as the Pyth Solana Receiver program writes it. The layout is
 * the `priceUpdateV2` account of the receiver's published IDL (`@pythnetwork/pyth-solana-receiver`, file
 * `idl/pyth_solana_receiver`, IDL version 0.2.1; Rust source `pyth_solana_receiver_sdk::price_update`):
 *
 *   8-byte Anchor discriminator, write_authority: Pubkey, verification_level: enum { Partial { num_signatures: u8 },
 *   Full }, price_message: PriceFeedMessage { feed_id: [u8; 32], price: i64, conf: u64, exponent: i32,
 *   publish_time: i64, prev_publish_time: i64, ema_price: i64, ema_conf: u64 }, posted_slot: u64
 *
 * Pyth's own decoder needs Anchor and a second Solana SDK (web3.js 1), so the layout is written here with Kit's
 * codecs, field for field; test/pricing/price-update.unit.test.ts decodes accounts that Anchor's coder encoded with
 * that IDL (test/fixtures/pyth, made by scripts/pyth-fixture/generate.cjs) and encodes them back byte for byte.
 */
import { address, getAddressCodec, type Address } from '@solana/addresses';
import {
  fixCodecSize,
  getBase16Codec,
  getDiscriminatedUnionCodec,
  getI32Codec,
  getI64Codec,
  getStructCodec,
  getU64Codec,
  getU8Codec,
  getUnitCodec,
  transformCodec,
  type ReadonlyUint8Array,
} from '@solana/codecs';

/** The Pyth Solana Receiver program: the same id on every SVM cluster Pyth serves. */
export const PYTH_RECEIVER_PROGRAM: Address = address('rec5EKMGg6MxZYaMdyBfgwp4d5rB9T1VQH5pJv5LtFJ');

/** Anchor's account discriminator: the first 8 bytes of sha256("account:PriceUpdateV2"). */
export const PRICE_UPDATE_V2_DISCRIMINATOR: ReadonlyUint8Array = new Uint8Array([
  0x22, 0xf1, 0x23, 0x63, 0x9d, 0x7e, 0xf4, 0xcd,
]);

/**
 * The size the receiver allocates (`PriceUpdateV2::LEN`): sized for the longer `Partial` variant, so a `Full`
 * account ends in one unused byte.
 */
export const PRICE_UPDATE_V2_LEN = 8 + 32 + 2 + 32 + 8 + 8 + 4 + 8 + 8 + 8 + 8 + 8;

/** How many Wormhole guardian signatures the receiver checked: `Full` is a guardian quorum. */
export type VerificationLevel = { __kind: 'Full' } | { __kind: 'Partial'; numSignatures: number };

export interface PriceFeedMessage {
  /** The feed id, 64 lowercase hex digits without `0x`. */
  feedId: string;
  /** The price is `price × 10^exponent` dollars; `conf` is the half-width of its confidence interval, same scale. */
  price: bigint;
  conf: bigint;
  exponent: number;
  /** Unix seconds at which Pythnet published this price. */
  publishTime: bigint;
  prevPublishTime: bigint;
  emaPrice: bigint;
  emaConf: bigint;
}

export interface PriceUpdateV2 {
  writeAuthority: Address;
  verificationLevel: VerificationLevel;
  priceMessage: PriceFeedMessage;
  postedSlot: bigint;
}

const feedIdCodec = transformCodec(
  fixCodecSize(getBase16Codec(), 32),
  (hex: string) => hex.toLowerCase(),
  (hex: string) => hex.toLowerCase(),
);

const priceFeedMessageCodec = getStructCodec([
  ['feedId', feedIdCodec],
  ['price', getI64Codec()],
  ['conf', getU64Codec()],
  ['exponent', getI32Codec()],
  ['publishTime', getI64Codec()],
  ['prevPublishTime', getI64Codec()],
  ['emaPrice', getI64Codec()],
  ['emaConf', getU64Codec()],
]);

/** Borsh enums: a u8 variant index, Partial = 0, Full = 1, in the IDL's order. */
const verificationLevelCodec = getDiscriminatedUnionCodec([
  ['Partial', getStructCodec([['numSignatures', getU8Codec()]])],
  ['Full', getUnitCodec()],
]);

/** The account after its discriminator. */
const bodyCodec = getStructCodec([
  ['writeAuthority', getAddressCodec()],
  ['verificationLevel', verificationLevelCodec],
  ['priceMessage', priceFeedMessageCodec],
  ['postedSlot', getU64Codec()],
]);

const DISCRIMINATOR_LEN = PRICE_UPDATE_V2_DISCRIMINATOR.length;

/** Why bytes are not a `PriceUpdateV2` account. */
export type PriceUpdateDecode = { ok: true; update: PriceUpdateV2 } | { ok: false; why: string };

/** Decode an account's data; anything that is not a whole `PriceUpdateV2` comes back as a reason, never a throw. */
export function decodePriceUpdateV2(data: ReadonlyUint8Array): PriceUpdateDecode {
  if (data.length < DISCRIMINATOR_LEN || !PRICE_UPDATE_V2_DISCRIMINATOR.every((b, i) => data[i] === b))
    return { ok: false, why: 'its data does not start with the PriceUpdateV2 discriminator' };
  const body = data.subarray(DISCRIMINATOR_LEN);
  const min = PRICE_UPDATE_V2_LEN - DISCRIMINATOR_LEN - 1; // a Full account without its unused byte
  if (body.length < min) return { ok: false, why: `its data is ${data.length} bytes, shorter than a PriceUpdateV2` };
  let update: PriceUpdateV2;
  try {
    [update] = bodyCodec.read(body, 0);
  } catch (e) {
    // The only input-dependent failure left is an unknown verification-level variant.
    return { ok: false, why: `its data does not decode as a PriceUpdateV2 (${(e as Error).message})` };
  }
  const level = update.verificationLevel;
  return {
    ok: true,
    update: {
      ...update,
      verificationLevel: level.__kind === 'Full' ? { __kind: 'Full' } : level,
    },
  };
}

/** The account's data as the receiver writes it: discriminator, fields, zero padding to `PRICE_UPDATE_V2_LEN`. */
export function encodePriceUpdateV2(update: PriceUpdateV2): Uint8Array {
  const out = new Uint8Array(PRICE_UPDATE_V2_LEN);
  out.set(PRICE_UPDATE_V2_DISCRIMINATOR, 0);
  out.set(bodyCodec.encode(update), DISCRIMINATOR_LEN);
  return out;
}
