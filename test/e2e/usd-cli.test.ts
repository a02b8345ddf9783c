/**
 * Dollar caps in the operator CLI, run as the operator runs it (the built CLI, a real process) against the embedded
 * chain with SOL priced through its Pyth account and the ledger the signs were written to: `key show` prints the
 * caps, the dollars recorded in 24 h and what is left beside the lamports; `policy replay` judges a tighter
 * `usd.per_day` at the dollars each sign recorded (not at today's price); `policy test` counts the recorded day too.
 */
import path from 'node:path';
import { BIN, assertBuilt, run, writeYaml } from '../support/cli';
import { makeWorld, worldConfigDocument, type World } from '../support/world';
import { SOL_FEED, SOL_PRICES, setSolPrice } from '../support/prices';

const FEE = 5000;
/** 0.04 SOL out of the key, fee included: $4.00 at $100. */
const FOUR_DOLLARS = 40_000_000 - FEE;
/** 0.01 SOL: $1.00 at $100. */
const ONE_DOLLAR = 10_000_000 - FEE;

let w: World;

/** A config file for the CLI: the world's, with SOL's price feed and alpha's dollar caps `usd`. */
function configWith(name: string, usd: Record<string, string | null>): string {
  const doc = worldConfigDocument(w, {
    prices: { feeds: [{ asset: 'SOL', account: SOL_FEED.sponsoredAccount, feed_id: SOL_FEED.feedId }] },
  });
  const keys = doc.keys as Record<string, Record<string, unknown>>;
  keys.alpha = { ...keys.alpha, usd: { per_tx: null, per_day: null, approve_above: null, ...usd } };
  const file = path.join(w.dir, name);
  writeYaml(file, doc);
  return file;
}

beforeAll(async () => {
  assertBuilt(BIN.signer);
  w = await makeWorld({
    keys: { alpha: { usd: { per_tx: null, per_day: 10_000_000n, approve_above: null } } },
    prices: SOL_PRICES,
  });
  setSolPrice(w.localnet, '100');
  for (const n of [1, 2]) {
    const r = await w.engine.sign({
      payload: w.transfer('alpha', FOUR_DOLLARS, `four dollars ${String(n)}`),
      principal: w.operator,
    });
    expect(r).toMatchObject({ outcome: 'confirmed', usd_value: '4.00' });
  }
  // Today's price is twice the one the signs recorded: nothing below may count them at it.
  setSolPrice(w.localnet, '200');
}, 60_000);

afterAll(async () => {
  await w.close();
});

test('key show prints the dollar caps, the $8.00 recorded in 24 h and the $2.00 left, beside the lamports', async () => {
  const config = configWith('current.yaml', { per_day: '10.00' });
  const text = await run(BIN.signer, ['--config', config, 'key', 'show', 'alpha']);
  expect(text.stderr).toBe('');
  expect(text.code).toBe(0);
  expect(text.stdout).toMatch(
    /^daily cap: \d+ lamports \([\d.]+ SOL\); spent or reserved in 24 h: 80000000 lamports \(0\.08 SOL\); left: \d+ lamports/m,
  );
  expect(text.stdout).toMatch(
    /^usd caps: per_tx none, per_day \$10\.00, approve_above none; signed or reserved in 24 h: \$8\.00 \(as recorded at each sign\); left today: \$2\.00$/m,
  );
  const json = await run(BIN.signer, ['--config', config, 'key', 'show', 'alpha', '--json']);
  expect(JSON.parse(json.stdout)).toMatchObject({
    spent_or_reserved_24h: 80_000_000,
    usd: {
      per_tx: null,
      per_day: '10.00',
      approve_above: null,
      spent_or_reserved_24h: '8.00',
      remaining_daily: '2.00',
    },
    usage_error: null,
  });
});

test('key show of a key without dollar caps says so', async () => {
  const doc = worldConfigDocument(w);
  const file = path.join(w.dir, 'plain.yaml');
  writeYaml(file, doc);
  const r = await run(BIN.signer, ['--config', file, 'key', 'show', 'alpha']);
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^usd caps: none$/m);
});

describe('policy replay', () => {
  test('under the running $10 a day both $4 signs are allowed, each shown at its recorded $4.00', async () => {
    const r = await run(BIN.signer, ['--config', configWith('ten.yaml', { per_day: '10.00' }), 'policy', 'replay']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const rows = r.stdout.split('\n').filter((l) => / alpha /.test(l));
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toMatch(/confirmed\s+\$4\.00\s+allowed$/);
  });

  test('a tighter $5 a day would have refused the second sign at the recorded $4, not at today’s doubled price', async () => {
    const r = await run(BIN.signer, ['--config', configWith('five.yaml', { per_day: '5.00' }), 'policy', 'replay']);
    expect(r.code).toBe(1);
    const rows = r.stdout.split('\n').filter((l) => / alpha /.test(l));
    expect(rows[0]).toMatch(/confirmed\s+\$4\.00\s+allowed$/);
    expect(rows[1]).toMatch(
      /confirmed\s+\$4\.00\s+REFUSED limits \(usd_per_day_cap\): daily dollar cap: \$4\.00 spent or reserved in 24 h, plus \$4\.00 for this transaction \(as recorded when it was signed\), exceeds \$5\.00$/,
    );
    expect(r.stdout).toMatch(/: 1 would be refused$/m);
    // Re-priced at today's $200 each sign would be $8 and even $7 a day would refuse the first; recorded, it passes.
    const seven = await run(BIN.signer, [
      '--config',
      configWith('seven.yaml', { per_day: '7.00' }),
      'policy',
      'replay',
      '--json',
    ]);
    const json = JSON.parse(seven.stdout) as { usd_value: string | null; refusal: { reason: string } | null }[];
    expect(json.map((x) => [x.usd_value, x.refusal?.reason ?? 'allowed'])).toEqual([
      ['4.00', 'allowed'],
      ['4.00', 'usd_per_day_cap'],
    ]);
  });
});

test('policy test counts the day at its recorded dollars: $1 more passes under $10, is refused under $5', async () => {
  setSolPrice(w.localnet, '100');
  const cases = path.join(w.dir, 'cases.yaml');
  writeYaml(cases, {
    cases: [{ name: 'one dollar', key: 'alpha', payload: w.transfer('alpha', ONE_DOLLAR, 'one dollar'), expect: 'ok' }],
  });
  const ten = await run(BIN.signer, [
    '--config',
    configWith('test-ten.yaml', { per_day: '10.00' }),
    'policy',
    'test',
    cases,
  ]);
  expect(ten.stderr).toBe('');
  expect(ten.stdout).toMatch(/^one dollar\s+alpha\s+ok\s+ok\s+same$/m);
  expect(ten.code).toBe(0);
  const five = await run(BIN.signer, [
    '--config',
    configWith('test-five.yaml', { per_day: '5.00' }),
    'policy',
    'test',
    cases,
    '--json',
  ]);
  expect(five.code).toBe(1);
  const [row] = JSON.parse(five.stdout) as { got: unknown; detail: string }[];
  expect(row).toMatchObject({ got: { outcome: 'refused', failed_check: 'limits', reason: 'usd_per_day_cap' } });
  expect(row?.detail).toMatch(/\$8\.00 spent or reserved in 24 h, plus \$1\.00 for this transaction/);
});
