/**
 * `prices` is part of the policy a reload replaces (docs/policy.md, "Reload"): on a real chain and ledger, a reload
 * that moves SOL's feed to another account, or tightens max_age_s, is applied and named in its answer, and the next
 * check is valued at the new account's price and judged by the new bound; one that leaves a key's `usd` caps without
 * a price is refused and changes nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { loadConfig } from '../../src/config/load';
import type { SignerConfig } from '../../src/config/types';
import { KNOWN_FEEDS } from '../../src/pricing/feeds';
import { chainClientFor } from '../../src/rpc/for-cluster';
import { openEngine } from '../../src/signer';
import { silentLogger } from '../../src/signer/engine-deps';
import { createPolicyHolder, policyFor, type PolicyHolder } from '../../src/signer/policy';
import { reloadPolicy, type ReloadResult } from '../../src/signer/reload';
import type { SignerEngine } from '../../src/signer/types';
import { randomAddress } from '../support/payloads';
import { makeWorld, worldConfigDocument, type World } from '../support/world';
import { SOL_PRICES } from '../support/prices';

const SOL = KNOWN_FEEDS['SOL/USD'];
/** Another account carrying SOL's feed, at another price: where the reload moves the feed. */
const OTHER = randomAddress();
/** 0.1 SOL out of the key, fee included: $15.00 at $150, $30.00 at $300. */
const TENTH = 100_000_000 - 5000;

let world: World;
let file: string;
let started: SignerConfig;
let holder: PolicyHolder;
let engine: SignerEngine | undefined;

const feeds = (account: string) => [{ asset: 'SOL', account, feed_id: SOL.feedId }];
function configDoc(prices: Record<string, unknown>): Record<string, unknown> {
  const doc = worldConfigDocument(world, {
    prices,
    serve: { listen: '127.0.0.1:0', tokens: [{ name: 'agent', sha256: 'a'.repeat(64), keys: ['alpha'] }] },
  });
  const keys = doc.keys as Record<string, Record<string, unknown>>;
  keys.alpha = { ...keys.alpha, usd: { per_day: '100.00' } };
  return doc;
}
const write = (doc: Record<string, unknown>) => fs.writeFileSync(file, YAML.stringify(doc));
const load = () => loadConfig({ file, env: {}, forServe: true });
const reload = (): Promise<ReloadResult> =>
  reloadPolicy({
    load,
    started,
    holder,
    chain: chainClientFor(started.cluster, started.timings),
    ledger: world.ledger,
    log: silentLogger,
  });
const check = () => engine!.check({ payload: world.transfer('alpha', TENTH), principal: world.operator });

beforeAll(async () => {
  world = await makeWorld({ keys: { alpha: {} }, prices: SOL_PRICES });
  file = path.join(world.dir, 'config.yaml');
  write(configDoc({ feeds: feeds(SOL.sponsoredAccount) }));
  started = load();
  holder = createPolicyHolder(policyFor(started));
  engine = await openEngine(started, { ledger: world.ledger, policy: () => holder.current() });
  world.localnet.setPrice({ account: SOL.sponsoredAccount, feedId: SOL.feedId, price: '150', conf: '0' });
  world.localnet.setPrice({ account: OTHER, feedId: SOL.feedId, price: '300', conf: '0' });
}, 30_000);

afterAll(async () => {
  await engine?.close();
  await world.close();
});

test("a reload moves SOL's feed to another account: applied, named, and the next check is valued there", async () => {
  expect(await check()).toMatchObject({ outcome: 'ok', usd_value: '15.00' });
  const before = holder.current().hash;
  write(configDoc({ feeds: feeds(OTHER) }));
  const r = await reload();
  expect(r.status).toBe('applied');
  expect(r.changes).toEqual([`prices.feeds.SOL account ${SOL.sponsoredAccount} → ${OTHER}`]);
  expect(r.new_hash).not.toBe(before);
  expect(await check()).toMatchObject({ outcome: 'ok', usd_value: '30.00' });
  // The reload is in the audit log with what it changed.
  const [entry] = await world.ledger.tail(1);
  expect(entry).toMatchObject({ command: 'reload', summary: r.changes.join('; ') });
});

test('a reload tightens max_age_s: a price the old bound took is refused price_stale by the new one', async () => {
  world.localnet.setPrice({ account: OTHER, feedId: SOL.feedId, price: '300', conf: '0', ageS: 10 });
  expect(await check()).toMatchObject({ outcome: 'ok', usd_value: '30.00' });
  write(configDoc({ max_age_s: 5, feeds: feeds(OTHER) }));
  const r = await reload();
  expect(r.status).toBe('applied');
  expect(r.changes).toEqual(['prices.max_age_s 60 → 5']);
  expect(await check()).toMatchObject({ outcome: 'refused', reason: 'price_stale', figures: { max_age_s: 5 } });
});

test("a reload that leaves a key's usd caps without a price is refused and changes nothing", async () => {
  const running = holder.current().hash;
  write(configDoc({ max_age_s: 5, feeds: [] }));
  const r = await reload();
  expect(r.status).toBe('refused');
  expect(r.message).toMatch(/keys\.alpha\.usd: no price for SOL/);
  expect(holder.current().hash).toBe(running);
  expect(holder.current().prices?.feeds.get('SOL')?.account).toBe(OTHER);
});
