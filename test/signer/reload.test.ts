/**
 * Reload in place (docs/policy.md, "Reload"), on a real chain and ledger: a config file read again by
 * reloadPolicy, the engine reading its policy through the holder the reload replaces.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { chainClientFor } from '../../src/rpc/for-cluster';
import { loadConfig } from '../../src/config/load';
import type { SignerConfig } from '../../src/config/types';
import { openEngine } from '../../src/signer';
import { silentLogger } from '../../src/signer/engine-deps';
import { createPolicyHolder, policyFor, type PolicyHolder } from '../../src/signer/policy';
import { reloadPolicy, type ReloadResult } from '../../src/signer/reload';
import type { SignerEngine, SignProgress } from '../../src/signer/types';
import { nowSeconds } from '../../src/util/time';
import { approvalId } from '../support/async';
import { randomAddress } from '../support/payloads';
import { balanceOf, makeWorld, worldConfigDocument, type World } from '../support/world';

const OLD_CAP = 100_000_000;
const NEW_CAP = 20_000_000;
/** Above approve_above_lamports (so it waits for an operator), under the old cap and over the new one. */
const BIG = 30_000_000;
const SMALL = 1_000_000;

let world: World;
let file: string;
let doc: Record<string, unknown>;
let started: SignerConfig;
let holder: PolicyHolder;
let engine: SignerEngine;

beforeAll(async () => {
  world = await makeWorld({
    keys: {
      alpha: { daily_lamport_cap: OLD_CAP },
      beta: { approval: 'confirm', approve_above_lamports: 2_000_000, daily_lamport_cap: OLD_CAP },
    },
    timings: { approval_timeout_ms: 30_000, confirm_deadline_ms: 30_000 },
    blockIntervalMs: 50,
  });
  doc = worldConfigDocument(world, {
    serve: { listen: '127.0.0.1:0', tokens: [{ name: 'agent', sha256: 'a'.repeat(64), keys: ['alpha', 'beta'] }] },
  });
  (doc.keys as Record<string, Record<string, unknown>>).beta!.approve_above_lamports = 2_000_000;
  file = path.join(world.dir, 'config.yaml');
  write(doc);
  started = load();
  holder = createPolicyHolder(policyFor(started));
  engine = await openEngine(started, { ledger: world.ledger, policy: () => holder.current() });
}, 30_000);

afterAll(async () => {
  await engine.close();
  await world.close();
});

function write(d: Record<string, unknown>): void {
  fs.writeFileSync(file, YAML.stringify(d));
}
function load(): SignerConfig {
  return loadConfig({ file, env: {}, forServe: true });
}
function reload(): Promise<ReloadResult> {
  return reloadPolicy({
    load,
    started,
    holder,
    chain: chainClientFor(started.cluster, started.timings),
    ledger: world.ledger,
    log: silentLogger,
  });
}
/** The config document with these keys' entries changed. */
function withKeys(change: Record<string, unknown>, names: string[] = ['alpha']): Record<string, unknown> {
  const keys = structuredClone(doc.keys) as Record<string, Record<string, unknown>>;
  for (const name of names) keys[name] = { ...keys[name], ...change };
  return { ...doc, keys };
}
const withAlpha = (change: Record<string, unknown>): Record<string, unknown> => withKeys(change);
function stage(events: readonly SignProgress[], wanted: SignProgress['stage']): Promise<void> {
  return new Promise((resolve) => {
    const tick = setInterval(() => {
      if (events.some((e) => e.stage === wanted)) {
        clearInterval(tick);
        resolve();
      }
    }, 5);
  });
}

test('a sign being confirmed finishes under the old policy; an approval decided after the reload meets the new cap, and so does the next sign', async () => {
  const operator = world.operator;
  // Two keys, because a sign holds its key's lock until it ends: B on beta, A on alpha.
  // B: waits for an operator.
  const bEvents: SignProgress[] = [];
  const b = engine.sign({
    payload: world.transfer('beta', BIG),
    principal: operator,
    onProgress: (p) => bEvents.push(p),
  });
  const id = await approvalId(bEvents);
  // A: sent, and held in confirmation (the chain reports it processed only) until B is sent too; blocks of 50 ms
  // leave its blockhash valid for 7.5 s meanwhile.
  world.localnet.faults.stallConfirmations(true);
  const aEvents: SignProgress[] = [];
  const a = engine.sign({
    payload: world.transfer('alpha', BIG),
    principal: operator,
    onProgress: (p) => aEvents.push(p),
  });
  await stage(aEvents, 'sent');

  const oldHash = holder.current().hash;
  write(withKeys({ daily_lamport_cap: NEW_CAP }, ['alpha', 'beta']));
  const applied = await reload();
  expect(applied).toMatchObject({ status: 'applied', old_hash: oldHash });
  expect(applied.new_hash).not.toBe(oldHash);
  expect(applied.changes).toEqual([
    `keys.alpha.daily_lamport_cap ${String(OLD_CAP)} → ${String(NEW_CAP)}`,
    `keys.beta.daily_lamport_cap ${String(OLD_CAP)} → ${String(NEW_CAP)}`,
  ]);

  // A (30 M) was sent under the old cap and finishes under it. B is approved after the reload: what the operator
  // approves is judged by the stricter of the policy it began under and the one in force now, and 30 M is over
  // the new cap, so nothing is sent.
  // A is rebroadcast while it waits, so the chain's send count says nothing of B: B's key's balance does.
  const betaBefore = await balanceOf(world, world.keys.beta!.pubkey);
  await world.ledger.decideApproval(id, 'approved', 'operator', nowSeconds());
  const bReport = await b;
  expect(bReport).toMatchObject({
    outcome: 'refused',
    failed_check: 'limits',
    reason: 'per_day_cap',
    signature: null,
    figures: { cap: NEW_CAP, requested: BIG + 5_000 },
  });
  world.localnet.faults.clear();
  expect((await a).outcome).toBe('confirmed');
  expect(await balanceOf(world, world.keys.beta!.pubkey)).toBe(betaBefore);

  // C begins after the reload: alpha's new cap (20 M) is already spent by A.
  const c = await engine.sign({ payload: world.transfer('alpha', SMALL), principal: operator });
  expect(c).toMatchObject({
    outcome: 'refused',
    failed_check: 'limits',
    reason: 'per_day_cap',
    figures: { cap: NEW_CAP },
  });

  // The audit log holds the reload, with both hashes.
  const entries = await world.ledger.tail(50);
  const entry = entries.find((e) => e.command === 'reload');
  expect(entry).toMatchObject({ key: '*', outcome: 'reloaded' });
  expect(entry!.detail).toContain(`policy ${oldHash} → ${applied.new_hash!}`);
  expect(entry!.summary).toContain('keys.alpha.daily_lamport_cap');
  doc = withKeys({ daily_lamport_cap: NEW_CAP }, ['alpha', 'beta']);
}, 60_000);

test('a reload that changes a list names the items added and removed in its audit entry, at most four a side', async () => {
  const [before] = (doc.keys as Record<string, { transfer_to: string[] }>).alpha!.transfer_to;
  const added = Array.from({ length: 6 }, () => randomAddress());
  write(withAlpha({ transfer_to: added }));
  const applied = await reload();
  expect(applied.status).toBe('applied');
  const change = `keys.alpha.transfer_to added 6: ${added.slice(0, 4).join(', ')} and 2 more; removed 1: ${before!}`;
  expect(applied.changes).toEqual([change]);
  const entry = (await world.ledger.tail(50)).find(
    (e) => e.command === 'reload' && e.detail?.includes(`→ ${applied.new_hash!}`) === true,
  );
  expect(entry).toMatchObject({ key: '*', outcome: 'reloaded', summary: change });
  doc = withAlpha({ transfer_to: added });
}, 30_000);

describe('an invalid reload changes nothing and says why', () => {
  const refusedWith = async (d: Record<string, unknown>, reason: RegExp): Promise<void> => {
    const before = holder.current();
    const reloads = (await world.ledger.tail(200)).filter((e) => e.command === 'reload').length;
    write(d);
    const result = await reload();
    expect(result.status).toBe('refused');
    expect(result.message).toMatch(/^reload refused, nothing changed: /);
    expect(result.message).toMatch(reason);
    expect(holder.current()).toBe(before);
    expect((await world.ledger.tail(200)).filter((e) => e.command === 'reload')).toHaveLength(reloads);
    write(doc);
  };

  test('a typo in a key', async () => {
    await refusedWith(withAlpha({ daily_lamport_capp: 5 }), /keys\.alpha\.daily_lamport_capp: unknown key/);
  });

  test('a key whose key file does not exist', async () => {
    const keys = { ...(doc.keys as Record<string, unknown>), beta: { class: 'session', pubkey: randomAddress() } };
    await refusedWith({ ...doc, keys }, /key "beta": .*key file/i);
  });

  test('a mint that does not exist on the chain', async () => {
    const mint = randomAddress();
    await refusedWith(
      withAlpha({ tokens: [{ mint, program: 'spl-token', per_day: 1000 }] }),
      new RegExp(`keys\\.alpha\\.tokens\\[0\\]\\.mint: no account ${mint} on the chain`),
    );
  });

  test('a setting only a restart may change', async () => {
    await refusedWith(
      { ...doc, serve: { ...(doc.serve as object), listen: '127.0.0.1:1' } },
      /serve\.listen needs a restart/,
    );
  });

  test('a config that is the one running is unchanged, not recorded', async () => {
    const result = await reload();
    expect(result).toMatchObject({ status: 'unchanged', new_hash: holder.current().hash });
  });
});
