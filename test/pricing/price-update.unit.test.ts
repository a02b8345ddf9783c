/**
 * The PriceUpdateV2 layout against Pyth's own coder: accounts that Anchor's coder encoded with the receiver's
 * published IDL decode to the fields that coder reads back, and encode back to the same bytes.
 */
import { createHash } from 'node:crypto';
import { address } from '@solana/kit';
import {
  decodePriceUpdateV2,
  encodePriceUpdateV2,
  PRICE_UPDATE_V2_DISCRIMINATOR,
  PRICE_UPDATE_V2_LEN,
  PYTH_RECEIVER_PROGRAM,
  type PriceUpdateV2,
} from '../../src/pricing/price-update';
import { fixtureBytes, PYTH_FIXTURE } from './fixture';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

test('the discriminator and program id are the ones the fixture generator took from Pyth and Anchor', () => {
  expect(hex(new Uint8Array(PRICE_UPDATE_V2_DISCRIMINATOR))).toBe(PYTH_FIXTURE.discriminator_hex);
  const rule = createHash('sha256').update('account:PriceUpdateV2').digest().subarray(0, 8);
  expect(hex(rule)).toBe(PYTH_FIXTURE.discriminator_hex);
  expect(PYTH_RECEIVER_PROGRAM).toBe(PYTH_FIXTURE.receiver_program);
});

describe.each(PYTH_FIXTURE.accounts.map((a) => [a.name, a] as const))('%s', (_name, account) => {
  const bytes = fixtureBytes(account);
  const f = account.fields;
  const expected: PriceUpdateV2 = {
    writeAuthority: address(f.write_authority),
    verificationLevel:
      f.verification_level.kind === 'Full'
        ? { __kind: 'Full' }
        : { __kind: 'Partial', numSignatures: f.verification_level.num_signatures },
    priceMessage: {
      feedId: f.feed_id,
      price: BigInt(f.price),
      conf: BigInt(f.conf),
      exponent: f.exponent,
      publishTime: BigInt(f.publish_time),
      prevPublishTime: BigInt(f.prev_publish_time),
      emaPrice: BigInt(f.ema_price),
      emaConf: BigInt(f.ema_conf),
    },
    postedSlot: BigInt(f.posted_slot),
  };

  test('decodes to the fields Pyth’s coder reads', () => {
    expect(bytes.length).toBe(PRICE_UPDATE_V2_LEN);
    expect(decodePriceUpdateV2(bytes)).toEqual({ ok: true, update: expected });
  });

  test('encodes back to the same bytes', () => {
    expect(hex(encodePriceUpdateV2(expected))).toBe(hex(bytes));
  });
});

test('a Full account without its unused last byte still decodes; one byte shorter does not', () => {
  const full = fixtureBytes(PYTH_FIXTURE.accounts.find((a) => a.fields.verification_level.kind === 'Full')!);
  expect(decodePriceUpdateV2(full.subarray(0, PRICE_UPDATE_V2_LEN - 1)).ok).toBe(true);
  expect(decodePriceUpdateV2(full.subarray(0, PRICE_UPDATE_V2_LEN - 2))).toEqual({
    ok: false,
    why: `its data is ${PRICE_UPDATE_V2_LEN - 2} bytes, shorter than a PriceUpdateV2`,
  });
});

test('another account type, empty data and an unknown verification level are reasons, not throws', () => {
  const bytes = fixtureBytes(PYTH_FIXTURE.accounts[0]!);
  const other = bytes.slice();
  other[0] = 0;
  expect(decodePriceUpdateV2(other)).toEqual({
    ok: false,
    why: 'its data does not start with the PriceUpdateV2 discriminator',
  });
  expect(decodePriceUpdateV2(new Uint8Array(0)).ok).toBe(false);
  const level = bytes.slice();
  level[8 + 32] = 7; // the verification level's variant index
  const r = decodePriceUpdateV2(level);
  expect(r.ok).toBe(false);
  if (!r.ok) expect(r.why).toMatch(/^its data does not decode as a PriceUpdateV2/);
});
