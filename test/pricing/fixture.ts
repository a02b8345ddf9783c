/** The PriceUpdateV2 accounts that Pyth's own coder wrote (scripts/pyth-fixture/generate.cjs). */
import fs from 'node:fs';
import path from 'node:path';

export interface FixtureAccount {
  name: string;
  base64: string;
  fields: {
    write_authority: string;
    verification_level: { kind: 'Full' } | { kind: 'Partial'; num_signatures: number };
    feed_id: string;
    price: string;
    conf: string;
    exponent: number;
    publish_time: string;
    prev_publish_time: string;
    ema_price: string;
    ema_conf: string;
    posted_slot: string;
  };
}

export interface PythFixture {
  coder: string;
  receiver_program: string;
  push_oracle_program: string;
  discriminator_hex: string;
  accounts: FixtureAccount[];
  sponsored_feed_accounts: { feed: string; feed_id: string; shard: number; address: string }[];
}

export const PYTH_FIXTURE = JSON.parse(
  fs.readFileSync(path.join(__dirname, '../fixtures/pyth/price-update-v2.json'), 'utf8'),
) as PythFixture;

export const fixtureBytes = (a: FixtureAccount): Uint8Array => new Uint8Array(Buffer.from(a.base64, 'base64'));
