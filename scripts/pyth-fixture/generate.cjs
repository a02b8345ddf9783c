/**
 * Writes test/fixtures/pyth/price-update-v2.json: PriceUpdateV2 accounts encoded by Pyth's own coder (Anchor's
 * BorshAccountsCoder with the IDL that @pythnetwork/pyth-solana-receiver publishes) and the sponsored feed accounts
 * their SDK derives, so the signer's decoder (src/pricing/price-update.ts) is tested against bytes it did not make.
 *
 * Pyth's SDK brings a second Solana SDK (web3.js 1) and Anchor, so it is not a dependency of the signer; install it
 * apart and run this with that install on NODE_PATH:
 *   npm install --prefix /tmp/pyth-coder @pythnetwork/pyth-solana-receiver@0.14.0
 *   NODE_PATH=/tmp/pyth-coder/node_modules/@pythnetwork/pyth-solana-receiver/node_modules:/tmp/pyth-coder/node_modules \
 *     node scripts/pyth-fixture/generate.cjs > test/fixtures/pyth/price-update-v2.json
 */
const { BorshAccountsCoder, BN } = require('@coral-xyz/anchor');
const { PublicKey } = require('@solana/web3.js');
const { IDL } = require('@pythnetwork/pyth-solana-receiver/idl/pyth_solana_receiver');
const receiverPkg = require('@pythnetwork/pyth-solana-receiver/package.json');
const {
  DEFAULT_RECEIVER_PROGRAM_ID,
  DEFAULT_PUSH_ORACLE_PROGRAM_ID,
} = require('@pythnetwork/pyth-solana-receiver/address');

/**
 * The sponsored feed account of `feedId` on `shard`: the seeds of the SDK's getPriceFeedAccountForProgram
 * (PythSolanaReceiver.cjs), which cannot be loaded here because its module pulls in jito-ts and a web3.js that no
 * longer resolves under Node 24+.
 */
function priceFeedAccount(shard, feedId) {
  const shardSeed = Buffer.alloc(2);
  shardSeed.writeUint16LE(shard, 0);
  return PublicKey.findProgramAddressSync([shardSeed, Buffer.from(feedId, 'hex')], DEFAULT_PUSH_ORACLE_PROGRAM_ID)[0];
}

const SOL_USD = 'ef0d8b6fda2ceba41da15d4095d1da392a0d2f8ed0c6c7bc0f4cfac8c280b56d';
const USDC_USD = 'eaa020c61cc479712813461ce153894a96a6c00b21ed0cfc2798d1f9a9e9c94a';
// The receiver allocates PriceUpdateV2::LEN bytes (sized for the longer Partial variant), so a Full account ends in
// one unused byte; the fixtures keep the on-chain size.
const ACCOUNT_LEN = 8 + 32 + 2 + 32 + 8 + 8 + 4 + 8 + 8 + 8 + 8 + 8;

const coder = new BorshAccountsCoder(IDL);
const writeAuthority = new PublicKey('6W3LBzFmXKFJaN4RT3uh8rJ4sYCF8cjVmgVbfh4nw2Sj');

const cases = [
  {
    name: 'SOL/USD, Full, 150.25 ± 0.05',
    verification: { full: {} },
    feed: SOL_USD,
    price: '15025000000',
    conf: '5000000',
    exponent: -8,
    publishTime: '1765000000',
    prevPublishTime: '1764999999',
    emaPrice: '15000000000',
    emaConf: '6000000',
    postedSlot: '312345678',
  },
  {
    name: 'USDC/USD, Partial with 5 signatures, 0.99995 ± 0.00012',
    verification: { partial: { numSignatures: 5 } },
    feed: USDC_USD,
    price: '99995000',
    conf: '12000',
    exponent: -8,
    publishTime: '1765000042',
    prevPublishTime: '1765000041',
    emaPrice: '99990000',
    emaConf: '15000',
    postedSlot: '312345700',
  },
  {
    name: 'extremes: negative price, positive exponent, u64 max confidence',
    verification: { full: {} },
    feed: SOL_USD,
    price: '-9223372036854775808',
    conf: '18446744073709551615',
    exponent: 3,
    publishTime: '-1',
    prevPublishTime: '9223372036854775807',
    emaPrice: '9223372036854775807',
    emaConf: '0',
    postedSlot: '18446744073709551615',
  },
];

async function main() {
  const accounts = [];
  for (const c of cases) {
    const encoded = await coder.encode('priceUpdateV2', {
      writeAuthority,
      verificationLevel: c.verification,
      priceMessage: {
        feedId: [...Buffer.from(c.feed, 'hex')],
        price: new BN(c.price),
        conf: new BN(c.conf),
        exponent: c.exponent,
        publishTime: new BN(c.publishTime),
        prevPublishTime: new BN(c.prevPublishTime),
        emaPrice: new BN(c.emaPrice),
        emaConf: new BN(c.emaConf),
      },
      postedSlot: new BN(c.postedSlot),
    });
    const data = Buffer.alloc(ACCOUNT_LEN);
    encoded.copy(data);
    // The coder reads back what it wrote, so the fields below are what the bytes mean to Pyth's own decoder.
    const back = coder.decode('priceUpdateV2', data);
    accounts.push({
      name: c.name,
      base64: data.toString('base64'),
      fields: {
        write_authority: back.writeAuthority.toBase58(),
        verification_level:
          'full' in back.verificationLevel
            ? { kind: 'Full' }
            : { kind: 'Partial', num_signatures: back.verificationLevel.partial.numSignatures },
        feed_id: Buffer.from(back.priceMessage.feedId).toString('hex'),
        price: back.priceMessage.price.toString(),
        conf: back.priceMessage.conf.toString(),
        exponent: back.priceMessage.exponent,
        publish_time: back.priceMessage.publishTime.toString(),
        prev_publish_time: back.priceMessage.prevPublishTime.toString(),
        ema_price: back.priceMessage.emaPrice.toString(),
        ema_conf: back.priceMessage.emaConf.toString(),
        posted_slot: back.postedSlot.toString(),
      },
    });
  }
  const sponsored = [
    { feed: 'SOL/USD', feed_id: SOL_USD },
    { feed: 'USDC/USD', feed_id: USDC_USD },
  ].map((f) => ({ ...f, shard: 0, address: priceFeedAccount(0, f.feed_id).toBase58() }));
  const out = {
    generated_by: 'scripts/pyth-fixture/generate.cjs',
    coder: `@coral-xyz/anchor BorshAccountsCoder with the IDL of @pythnetwork/pyth-solana-receiver ${receiverPkg.version}`,
    receiver_program: DEFAULT_RECEIVER_PROGRAM_ID.toBase58(),
    push_oracle_program: DEFAULT_PUSH_ORACLE_PROGRAM_ID.toBase58(),
    discriminator_hex: BorshAccountsCoder.accountDiscriminator('priceUpdateV2').toString('hex'),
    accounts,
    sponsored_feed_accounts: sponsored,
  };
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
