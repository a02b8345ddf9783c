/**
 * `sa-forge-signer localnet price set ASSET PRICE [--conf DOLLARS] [--age SECONDS] [--account ADDRESS]
 * [--feed-id HEX]`: on the embedded chain of a running `npm start`, a Pyth PriceUpdateV2 account for ASSET (`SOL`
 * or a mint) at PRICE dollars, owned by the Pyth receiver program and published AGE seconds before the chain's
 * clock (src/localnet/prices.ts). The account and feed id come from the config's `prices.feeds`, else from
 * Pyth's sponsored SOL/USD feed for SOL; stdout is the `prices` lines to put in the config, stderr what was set.
 */
import YAML from 'yaml';
import type { SignerConfig } from '../config/types';
import { KNOWN_FEEDS } from '../pricing/feeds';
import { SignerError, errorMessage } from '../util/errors';
import { isRecord } from '../util/is-record';
import { parseArgs } from './args';
import { ownOptionsOf, usageOf } from './commands';
import { chainHint, err, out } from './context';

/** The usage line and the options are the command table's (commands.ts). */
const USAGE = usageOf('localnet price set');

interface Target {
  account: string;
  feedId: string;
}

/** Where ASSET's price goes: the config's feed, a default for SOL, or what the options name. */
function target(cfg: SignerConfig, asset: string, account: string | undefined, feedId: string | undefined): Target {
  const configured = cfg.prices?.feeds.get(asset);
  const known = asset === 'SOL' ? KNOWN_FEEDS['SOL/USD'] : null;
  const resolved = {
    account: account ?? configured?.account ?? known?.sponsoredAccount,
    feedId: feedId ?? configured?.feedId ?? known?.feedId,
  };
  if (resolved.account === undefined || resolved.feedId === undefined)
    throw new SignerError(
      'request_invalid',
      `no price account for ${asset}: add {asset: ${asset}, account, feed_id} under prices.feeds, or pass --account and --feed-id`,
    );
  return { account: resolved.account, feedId: resolved.feedId };
}

const SECONDS = /^\d{1,9}$/;

export async function localnetPrice(cfg: SignerConfig, argv: readonly string[]): Promise<number> {
  const args = parseArgs(argv, ownOptionsOf('localnet price set'));
  const [verb, asset, price, ...extra] = args.positional;
  if (verb !== 'set' || asset === undefined || price === undefined || extra.length > 0)
    throw new SignerError('request_invalid', USAGE);
  if (cfg.cluster.name !== 'local')
    throw new SignerError(
      'request_invalid',
      `localnet price works on the embedded chain only; this config's cluster is ${cfg.cluster.name}`,
    );
  const opt = (name: string): string | undefined => args.options.get(name) as string | undefined;
  const age = opt('age') ?? '0';
  if (!SECONDS.test(age)) throw new SignerError('request_invalid', `--age takes whole seconds, not ${age}`);
  const { account, feedId } = target(cfg, asset, opt('account'), opt('feed-id'));

  let reply: unknown;
  try {
    const res = await fetch(cfg.cluster.rpc_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'localnet_setPrice',
        params: [{ account, feed_id: feedId, price, conf: opt('conf') ?? '0', age_s: Number(age) }],
      }),
    });
    reply = await res.json();
  } catch (e) {
    throw new SignerError('rpc', `localnet price failed: ${errorMessage(e)}; ${chainHint(cfg)}`, { cause: e });
  }
  if (!isRecord(reply) || isRecord(reply['error']) || !isRecord(reply['result'])) {
    const why = isRecord(reply) && isRecord(reply['error']) ? String(reply['error']['message']) : 'no result';
    throw new SignerError('request_invalid', `localnet price: the chain refused it: ${why}`);
  }
  const r = reply['result'];
  err(
    `${asset} priced at ${String(r['price'])} ± ${String(r['conf'])} dollars in ${account} (feed ${feedId}), published at ${String(r['publish_time'])}, the chain's clock ${String(r['clock_time'])}`,
  );
  err(
    `the lines below under prices in ${cfg.source ?? 'the config'} let usd caps use it (then: sa-forge-signer reload)`,
  );
  out(YAML.stringify({ prices: { feeds: [{ asset, account, feed_id: feedId }] } }));
  return 0;
}
