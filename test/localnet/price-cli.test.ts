/**
 * `sa-forge-signer localnet price set` as a developer runs it (the built binary, a config on `cluster: local`, the
 * embedded chain serving over loopback): the account lands in Pyth's layout with the age asked for on the chain's
 * clock, and stdout is the `prices` lines the config needs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSolanaRpc, getBase64Encoder } from '@solana/kit';
import YAML from 'yaml';
import { startLocalnet, type Localnet } from '../../src/localnet/server';
import { KNOWN_FEEDS } from '../../src/pricing/feeds';
import { decodePriceUpdateV2, PYTH_RECEIVER_PROGRAM } from '../../src/pricing/price-update';
import { assertBuilt, BIN, run } from '../support/cli';

const SOL = KNOWN_FEEDS['SOL/USD'];
let net: Localnet;
let dir: string;
let config: string;

beforeAll(async () => {
  assertBuilt(BIN.signer);
  net = await startLocalnet({ blockIntervalMs: 0 });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'price-cli-'));
  config = path.join(dir, 'signer.yaml');
  fs.writeFileSync(config, `cluster: local\nrpc_url: ${net.url}\nstate_dir: ${dir}/state\nkey_dir: ${dir}/keys\n`);
});
afterAll(async () => {
  await net.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('prices SOL at Pyth’s sponsored SOL/USD account, aged on the chain’s clock, and prints the config lines', async () => {
  const r = await run(BIN.signer, [
    '--config',
    config,
    'localnet',
    'price',
    'set',
    'SOL',
    '150.25',
    '--conf',
    '0.05',
    '--age',
    '10',
  ]);
  expect({ code: r.code, stderr: r.stderr }).toEqual({
    code: 0,
    stderr: expect.stringContaining('SOL priced at 150.25 ± 0.05') as string,
  });
  expect(YAML.parse(r.stdout)).toEqual({
    prices: { feeds: [{ asset: 'SOL', account: SOL.sponsoredAccount, feed_id: SOL.feedId }] },
  });
  const { value } = await createSolanaRpc(net.url).getAccountInfo(SOL.sponsoredAccount, { encoding: 'base64' }).send();
  expect(value?.owner).toBe(PYTH_RECEIVER_PROGRAM);
  const decoded = decodePriceUpdateV2(getBase64Encoder().encode(value!.data[0]));
  expect(decoded.ok && decoded.update.priceMessage).toMatchObject({
    price: 15_025_000_000n,
    conf: 5_000_000n,
    exponent: -8,
    publishTime: net.clockTime() - 10n,
  });
});

test('an asset with no configured or known feed is refused, naming what to add', async () => {
  const mint = '4Nd1mYwJ3d8q4t1nUQ8e3YqKkX2n1Fbq9xHk2wz3h5Qv';
  const r = await run(BIN.signer, ['--config', config, 'localnet', 'price', 'set', mint, '1.00']);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(`no price account for ${mint}: add {asset: ${mint}, account, feed_id} under prices.feeds`);
});
