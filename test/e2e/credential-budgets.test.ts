/**
 * A block's daily budget end to end (docs/credentials.md, "Daily budgets"), in the built service over loopback HTTP:
 * a root for `demo` and `pay` with 1 SOL a day (demo's own daily cap 1 SOL too); a child narrowed by `token narrow` to 0.1 SOL a day and
 * one destination; a grandchild narrowed through `sa-forge-signer/delegate` to sign_only for an hour. The
 * grandchild's second sign past 0.1 SOL in the day is refused naming the child's block with the figures; the child's
 * budget counts every key it signs with (a sign on `pay` after the grandchild's on `demo`); the root, under no
 * budget, still signs up to the key's own cap. The intents name the budgeted block in the ledger.
 * (Destinations outside the child's list, expiry and revocation are in credentials.test.ts.)
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { narrow } from '../../src/client/delegate';
import { stopChild, killOnExit } from '../support/children';
import { assertBuilt, BIN, listeningAddress, spawnBin, writeYaml } from '../support/cli';
import { payload, randomAddress, transferInstruction } from '../support/payloads';
import { makeWorld, worldConfigDocument, type World } from '../support/world';
import { cliOn, toolReport } from '../support/bearer-calls';

const SOL = 1_000_000_000;
const SHARED = randomAddress();
/** An address `pay` may pay and the child may not. */
const OTHER = randomAddress();
let w: World;
let configFile: string;
let service: ChildProcess | null = null;
let address: string;
let rootKeyFile: string;
const issued: { name: string; revocation_id: string; keys: string[] }[] = [];
const cred: Record<string, string> = {};
const ids: Record<string, string> = {};

function writeConfig(): void {
  writeYaml(
    configFile,
    worldConfigDocument(w, {
      serve: { listen: '127.0.0.1:0', metrics: null, credentials: { root_key_file: rootKeyFile, issued, revoked: [] } },
    }),
  );
}

const cli = cliOn(() => configFile);

/** A payload moving `lamports` from a key to `to` (SHARED: the one destination both keys and the child allow). */
function transfer(keyName: string, lamports: number, to = SHARED): Record<string, unknown> {
  const k = w.keys[keyName]!;
  return payload(k.pubkey, [transferInstruction(k.pubkey, to, lamports)], { summary: `pay ${lamports}` });
}

/** The report of a tools/call made with this credential (it must reach the engine: HTTP 200). */
const report = (credential: string, name: string, args: Record<string, unknown>) =>
  toolReport(address, credential, name, args);

beforeAll(async () => {
  assertBuilt(BIN.serve, BIN.signer);
  w = await makeWorld({
    keys: { demo: { daily_lamport_cap: SOL, transfer_to: [SHARED] }, pay: { transfer_to: [SHARED, OTHER] } },
  });
  configFile = path.join(w.dir, 'budgets.yaml');
  rootKeyFile = path.join(w.dir, 'credentials-root.key');
  writeConfig();
  const rootFile = path.join(w.dir, 'root.cred');
  const made = await cli([
    'token',
    'new',
    'planner',
    '--biscuit',
    '--keys',
    'demo,pay',
    '--per-day-lamports',
    String(SOL),
    '--out',
    rootFile,
  ]);
  ids.root = made.stdout;
  const rootPublicKey = /Root public key[^:]*: (ed25519\/[0-9a-f]{64})/.exec(made.stderr)?.[1] ?? '';
  cred.root = fs.readFileSync(rootFile, 'utf8').trim();
  issued.push({ name: 'planner', revocation_id: ids.root, keys: ['demo', 'pay'] });
  writeConfig();
  const childFile = path.join(w.dir, 'child.cred');
  ids.child = (
    await cli([
      'token',
      'narrow',
      '--from',
      rootFile,
      '--per-day-lamports',
      String(SOL / 10),
      '--destinations',
      SHARED,
      '--out',
      childFile,
    ])
  ).stdout;
  cred.child = fs.readFileSync(childFile, 'utf8').trim();
  const grand = narrow(cred.child, { rootPublicKey, mode: 'sign_only', ttlSeconds: 3600 });
  cred.grand = grand.credential;
  ids.grand = grand.revocationId;
  service = spawnBin(BIN.serve, ['--config', configFile]);
  killOnExit(service);
  address = await listeningAddress(service, 60_000);
}, 120_000);

/** What the ledger counts against the child's budget now. */
async function spentByChild(): Promise<number> {
  return (await w.ledger.blockUsage(ids.child!, Math.floor(Date.now() / 1000))).lamports;
}

afterAll(async () => {
  if (service) await stopChild(service, 'SIGTERM');
  await w.close();
});

test("the grandchild's second sign past the child's 0.1 SOL a day is refused naming the child's block", async () => {
  const first = await report(cred.grand!, 'sign', { payload: transfer('demo', 60_000_000), mode: 'sign_only' });
  expect(first).toMatchObject({ outcome: 'signed' });
  const second = await report(cred.grand!, 'sign', { payload: transfer('demo', 60_000_000), mode: 'sign_only' });
  expect(second).toMatchObject({ outcome: 'refused', reason: 'credential_budget', signature: null });
  const figures = second.figures as { block: number; revocation_id: string; spent: number; requested: number };
  expect(figures).toMatchObject({ block: 1, revocation_id: ids.child, cap: SOL / 10 });
  // The first sign's reservation (its transfer and fee), and this one's.
  expect(figures.spent).toBeGreaterThanOrEqual(60_000_000);
  expect(figures.requested).toBeGreaterThanOrEqual(60_000_000);
  expect(second.detail).toContain(`its block 1 (revocation id ${ids.child})`);

  // The intent names the child's block: its usage is the ledger's, by revocation id.
  const intent = (await w.ledger.tail(20)).find((e) => e.signature === first.signature && e.command === 'sign-intent');
  expect(intent?.budget_blocks).toEqual([ids.root, ids.child]);
  expect((await w.ledger.blockUsage(ids.child!, Math.floor(Date.now() / 1000))).lamports).toBe(figures.spent);
});

test("the child's budget counts every key: a sign on `pay` fits what the grandchild left, and no more", async () => {
  // check previews the budget on the block's usage now (the gate binds it): the agent learns before it signs.
  const over = await report(cred.child!, 'check', { payload: transfer('pay', 50_000_000) });
  expect(over).toMatchObject({ outcome: 'refused', reason: 'credential_budget', figures: { block: 1 } });
  expect(await report(cred.child!, 'check', { payload: transfer('pay', 30_000_000) })).toMatchObject({ outcome: 'ok' });
  const refused = await report(cred.child!, 'sign', { payload: transfer('pay', 50_000_000) });
  expect(refused).toMatchObject({ outcome: 'refused', reason: 'credential_budget', figures: { block: 1 } });
  const fits = await report(cred.child!, 'sign', { payload: transfer('pay', 30_000_000) });
  expect(fits).toMatchObject({ outcome: 'confirmed' });
  // key_show through the grandchild shows the child's budget (the grandchild's own block states none) and what is left.
  const shown = await report(cred.grand!, 'key_show', {});
  const [rootBudget, budget] = (shown as unknown as { credential: { budgets: Record<string, number | string>[] } })
    .credential.budgets;
  expect(rootBudget).toMatchObject({ block: 0, revocation_id: ids.root, per_day_lamports: SOL });
  expect(budget).toMatchObject({ block: 1, revocation_id: ids.child, per_day_lamports: SOL / 10 });
  expect(budget!.spent_or_reserved_24h).toBe(await spentByChild());
  expect(budget!.remaining_lamports).toBe(SOL / 10 - (budget!.spent_or_reserved_24h as number));
  expect(budget!.remaining_lamports).toBeLessThan(30_000_000);
  // Elsewhere than the child's one destination: the child's spend check, before any budget.
  const elsewhere = await report(cred.child!, 'check', { payload: transfer('pay', 1_000_000, OTHER) });
  expect(elsewhere).toMatchObject({ outcome: 'refused', reason: 'credential_limit' });
});

test("the root still signs up to the key's own daily cap, inside its own 1 SOL budget", async () => {
  // demo's cap is 1 SOL; the grandchild's sign_only reservation (0.06 SOL and its fee) counts against it too. The
  // root's budget counts the whole tree's signs on both keys (the child's 0.03 SOL on pay as well).
  const big = await report(cred.root!, 'sign', { payload: transfer('demo', 900_000_000) });
  expect(big).toMatchObject({ outcome: 'confirmed' });
  const past = await report(cred.root!, 'sign', { payload: transfer('demo', 50_000_000) });
  expect(past).toMatchObject({ outcome: 'refused', reason: 'per_day_cap' });
  const tree = (await w.ledger.blockUsage(ids.root!, Math.floor(Date.now() / 1000))).lamports;
  expect(tree).toBeGreaterThan(990_000_000);
  expect(tree).toBeLessThanOrEqual(SOL);
});
