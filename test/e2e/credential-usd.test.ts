/**
 * A credential's dollar limits end to end (docs/credentials.md, "Daily budgets"), in the built service over loopback
 * HTTP on the embedded chain, SOL priced at $150 through the localnet's Pyth account. The key `demo` has no dollar
 * caps of its own: the child's limits make the signer value its signs. A child narrowed by `token narrow` to
 * $16.00 a transaction and $20.00 a day: a $16.50 transfer is refused by its per-transaction check; a $15.00 sign
 * passes and its intent records its dollars against the child's block; the $6.00 sign that would pass the budget is
 * refused naming the block with figures, the $5.00 one that reaches it exactly passes; key_show shows the budget
 * spent; with the price stale the child is refused rather than let through unpriced, while the root still signs.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { stopChild, killOnExit } from '../support/children';
import { assertBuilt, BIN, listeningAddress, run, spawnBin, writeYaml } from '../support/cli';
import { payload, randomAddress, transferInstruction } from '../support/payloads';
import { makeWorld, worldConfigDocument, type World } from '../support/world';
import { cliOn, toolReport } from '../support/bearer-calls';
import { SOL_FEED, setSolPrice } from '../support/prices';

const FEE = 5000;
/** Lamports out of the key (fee included) worth `dollars` at $150 a SOL. */
const worth = (dollars: number): number => Math.round((dollars / 150) * 1_000_000_000) - FEE;
const SHARED = randomAddress();
let w: World;
let configFile: string;
let service: ChildProcess | null = null;
let address: string;
const cred: Record<string, string> = {};
const ids: Record<string, string> = {};

const cli = cliOn(() => configFile);

const transfer = (lamports: number) => {
  const k = w.keys.demo!;
  return payload(k.pubkey, [transferInstruction(k.pubkey, SHARED, lamports)], { summary: `pay ${lamports}` });
};

/** The report of a tools/call made with this credential (it must reach the engine: HTTP 200). */
const report = (credential: string, name: string, args: Record<string, unknown>) =>
  toolReport(address, credential, name, args);

beforeAll(async () => {
  assertBuilt(BIN.serve, BIN.signer);
  w = await makeWorld({ keys: { demo: { daily_lamport_cap: 10_000_000_000, transfer_to: [SHARED] } } });
  configFile = path.join(w.dir, 'usd.yaml');
  const rootKeyFile = path.join(w.dir, 'credentials-root.key');
  const issued: { name: string; revocation_id: string; keys: string[] }[] = [];
  const writeConfig = () =>
    writeYaml(
      configFile,
      worldConfigDocument(w, {
        prices: {
          max_age_s: 60,
          max_confidence_bps: 100,
          allow_partial_verification: false,
          feeds: [{ asset: 'SOL', account: SOL_FEED.sponsoredAccount, feed_id: SOL_FEED.feedId }],
        },
        serve: {
          listen: '127.0.0.1:0',
          metrics: null,
          credentials: { root_key_file: rootKeyFile, issued, revoked: [] },
        },
      }),
    );
  writeConfig();
  const rootFile = path.join(w.dir, 'root.cred');
  ids.root = (await cli(['token', 'new', 'planner', '--biscuit', '--keys', 'demo', '--out', rootFile])).stdout;
  cred.root = fs.readFileSync(rootFile, 'utf8').trim();
  issued.push({ name: 'planner', revocation_id: ids.root, keys: ['demo'] });
  writeConfig();
  // Dollars are written with cents; a bare float with more decimals is refused with the form to use.
  const childFile = path.join(w.dir, 'child.cred');
  const bad = await run(BIN.signer, [
    '--config',
    configFile,
    'token',
    'narrow',
    '--from',
    rootFile,
    '--per-day-usd',
    '20.005',
    '--out',
    childFile,
  ]);
  expect(bad.code).not.toBe(0);
  expect(bad.stderr).toMatch(/per-day USD: "20\.005" is not a dollar amount/);
  ids.child = (
    await cli([
      'token',
      'narrow',
      '--from',
      rootFile,
      '--per-tx-usd',
      '16.00',
      '--per-day-usd',
      '20.00',
      '--out',
      childFile,
    ])
  ).stdout;
  cred.child = fs.readFileSync(childFile, 'utf8').trim();
  setSolPrice(w.localnet, '150');
  service = spawnBin(BIN.serve, ['--config', configFile]);
  killOnExit(service);
  address = await listeningAddress(service, 60_000);
}, 120_000);

afterAll(async () => {
  if (service) await stopChild(service, 'SIGTERM');
  await w.close();
});

test('a child narrowed to $20 a day refuses the sign that would pass it, naming its block with the figures', async () => {
  // Per transaction first: $16.50 is more than the child's $16.00.
  const big = await report(cred.child!, 'sign', { payload: transfer(worth(16.5)) });
  expect(big).toMatchObject({ outcome: 'refused', reason: 'credential_limit', signature: null });
  expect(big.figures).toMatchObject({ usd_requested: '16.50' });
  expect(big.detail).toContain('usd_micros_out');

  const first = await report(cred.child!, 'sign', { payload: transfer(worth(15)) });
  expect(first).toMatchObject({ outcome: 'confirmed', usd_value: '15.00' });
  const intent = (await w.ledger.tail(20)).find((e) => e.signature === first.signature && e.command === 'sign-intent');
  expect(intent).toMatchObject({ budget_blocks: [ids.child], usd_micros: '15000000' });

  const over = await report(cred.child!, 'sign', { payload: transfer(worth(6)) });
  expect(over).toMatchObject({ outcome: 'refused', reason: 'credential_usd_budget', signature: null });
  expect(over.figures).toEqual({
    block: 1,
    revocation_id: ids.child,
    usd_spent: '15.00',
    usd_requested: '6.00',
    usd_cap: '20.00',
  });
  expect(over.detail).toContain(`its block 1 (revocation id ${ids.child}) allows $20.00 in 24 h`);

  const exact = await report(cred.child!, 'sign', { payload: transfer(worth(5)) });
  expect(exact).toMatchObject({ outcome: 'confirmed', usd_value: '5.00' });

  const shown = await report(cred.child!, 'key_show', {});
  const view = (shown as unknown as { credential: { per_tx_usd: string; budgets: Record<string, unknown>[] } })
    .credential;
  expect(view.per_tx_usd).toBe('16.00');
  expect(view.budgets).toEqual([
    {
      block: 1,
      revocation_id: ids.child,
      per_day_lamports: null,
      spent_or_reserved_24h: worth(15) + FEE + worth(5) + FEE,
      remaining_lamports: null,
      per_day_usd: '20.00',
      spent_or_reserved_usd_24h: '20.00',
      remaining_usd: '0.00',
    },
  ]);
});

test('with no usable price the child is refused, never let through unpriced; the root still signs', async () => {
  setSolPrice(w.localnet, '150', 3600);
  const stale = await report(cred.child!, 'check', { payload: transfer(1_000) });
  expect(stale).toMatchObject({ outcome: 'refused', reason: 'credential_unpriced', figures: { block: 1 } });
  expect(stale.detail).toMatch(/could not be valued/);
  const root = await report(cred.root!, 'sign', { payload: transfer(1_000) });
  expect(root).toMatchObject({ outcome: 'confirmed' });
});
