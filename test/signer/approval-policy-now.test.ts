/**
 * A tighter policy reaches a sign already waiting for its operators (docs/policy.md, "Reload"): a reload while a
 * sign waits removes its destination and lowers the daily cap; the approver is told, by `approvals list` and by the
 * engine's judgement the console shows, that the policy in force now refuses it; approving it sends nothing.
 */
import fs from 'node:fs';
import { address, getOffchainMessageEncoder } from '@solana/kit';
import path from 'node:path';
import YAML from 'yaml';
import { chainClientFor } from '../../src/rpc/for-cluster';
import { loadConfig } from '../../src/config/load';
import type { SignerConfig } from '../../src/config/types';
import { openEngine } from '../../src/signer';
import { silentLogger } from '../../src/signer/engine-deps';
import { createPolicyHolder, policyFor, type PolicyHolder } from '../../src/signer/policy';
import { reloadPolicy } from '../../src/signer/reload';
import type { SignerEngine } from '../../src/signer/types';
import { nowSeconds } from '../../src/util/time';
import { signAwaitingApproval } from '../support/async';
import { BIN, assertBuilt, run } from '../support/cli';
import { randomAddress } from '../support/payloads';
import { balanceOf, makeWorld, worldConfigDocument, type World } from '../support/world';

const SOL = 1_000_000_000;
const HALF = SOL / 2;

let world: World;
let file: string;
let doc: Record<string, unknown>;
let started: SignerConfig;
let holder: PolicyHolder;
let engine: SignerEngine;

beforeAll(async () => {
  assertBuilt(BIN.signer);
  world = await makeWorld({
    keys: { vault: { approval: 'confirm', approve_above_lamports: 1_000_000, daily_lamport_cap: 2 * SOL } },
    timings: { approval_timeout_ms: 60_000, confirm_deadline_ms: 30_000 },
  });
  doc = worldConfigDocument(world, {
    serve: { listen: '127.0.0.1:0', tokens: [{ name: 'agent', sha256: 'a'.repeat(64), keys: ['vault'] }] },
  });
  file = path.join(world.dir, 'config.yaml');
  fs.writeFileSync(file, YAML.stringify(doc));
  started = loadConfig({ file, env: {}, forServe: true });
  holder = createPolicyHolder(policyFor(started));
  engine = await openEngine(started, { ledger: world.ledger, policy: () => holder.current() });
}, 30_000);

afterAll(async () => {
  await engine.close();
  await world.close();
});

/** Writes the config with the vault key's entry changed, and reloads it into the running engine. */
async function reloadWithVault(change: Record<string, unknown>): Promise<void> {
  const keys = structuredClone(doc.keys) as Record<string, Record<string, unknown>>;
  keys.vault = { ...keys.vault, ...change };
  fs.writeFileSync(file, YAML.stringify({ ...doc, keys }));
  const reloaded = await reloadPolicy({
    load: () => loadConfig({ file, env: {}, forServe: true }),
    started,
    holder,
    chain: chainClientFor(started.cluster, started.timings),
    ledger: world.ledger,
    log: silentLogger,
  });
  expect(reloaded.status).toBe('applied');
}

test('an approval decided after a reload that removed its destination and lowered the cap sends nothing; the approver is warned', async () => {
  const vault = world.keys.vault!;
  const { id, done: waiting } = await signAwaitingApproval(engine, {
    payload: world.transfer('vault', HALF),
    principal: world.operator,
  });
  const before = await balanceOf(world, vault.pubkey);
  expect(await engine.policyNow((await world.ledger.getApproval(id))!)).toBeNull();

  // The operator removes the destination and lowers the daily cap to 0.1 SOL.
  await reloadWithVault({ transfer_to: [randomAddress()], daily_lamport_cap: SOL / 10 });

  // A fresh check of the same transfer is refused by the new policy.
  expect(await engine.check({ payload: world.transfer('vault', HALF), principal: world.operator })).toMatchObject({
    outcome: 'refused',
    reason: 'transfer_destination_not_allowed',
  });

  // The approver is told before deciding: in the console (the engine's judgement) and by `approvals list`.
  const record = (await world.ledger.getApproval(id))!;
  expect(await engine.policyNow(record)).toMatchObject({
    reason: 'destination_not_allowed',
    figures: { destination: vault.destination },
  });
  const listed = await run(BIN.signer, ['--config', file, 'approvals', 'list']);
  expect(listed.code).toBe(0);
  expect(listed.stdout).toContain(
    `WARNING: the policy in force now refuses this (destination_not_allowed): the simulation moves ${String(HALF)} lamports to ${vault.destination}`,
  );
  const asJson = await run(BIN.signer, ['--config', file, 'approvals', 'list', '--json']);
  expect(JSON.parse(asJson.stdout)).toMatchObject([{ id, policy_now: { reason: 'destination_not_allowed' } }]);

  // Approved all the same: judged by the stricter of the two policies, it is refused and nothing is sent.
  const sends = world.localnet.stats().sends;
  await world.ledger.decideApproval(id, 'approved', 'operator', nowSeconds());
  expect(await waiting).toMatchObject({
    outcome: 'refused',
    reason: 'transfer_destination_not_allowed',
    signature: null,
  });
  expect(world.localnet.stats().sends).toBe(sends);
  expect(await balanceOf(world, vault.pubkey)).toBe(before);
  const [view] = await engine.keyShow({ key: 'vault', principal: world.operator });
  expect(view).toMatchObject({ daily_lamport_cap: SOL / 10, spent_or_reserved_24h: 0 });
}, 60_000);

test('a cap lowered while the sign waits refuses the approved sign at the gate, under the new cap', async () => {
  // The destination is allowed again and the cap back at 2 SOL for the sign to wait under.
  await reloadWithVault({ daily_lamport_cap: 2 * SOL });
  const { id, done: waiting } = await signAwaitingApproval(engine, {
    payload: world.transfer('vault', HALF, 'second'),
    principal: world.operator,
  });
  // Lowered to 0.1 SOL, under the half SOL the sign would spend.
  await reloadWithVault({ daily_lamport_cap: SOL / 10 });
  expect(await engine.policyNow((await world.ledger.getApproval(id))!)).toMatchObject({ reason: 'per_day_cap' });
  await world.ledger.decideApproval(id, 'approved', 'operator', nowSeconds());
  expect(await waiting).toMatchObject({
    outcome: 'refused',
    failed_check: 'limits',
    reason: 'per_day_cap',
    figures: { cap: SOL / 10 },
    signature: null,
  });
}, 60_000);

test('a message waiting for approval is not signed once a reload turns sign_messages off', async () => {
  await reloadWithVault({ sign_messages: true });
  const signatory = world.keys.vault!.pubkey;
  const bytes = getOffchainMessageEncoder().encode({
    version: 1,
    content: 'authorise the bot for one hour',
    requiredSignatories: [{ address: address(signatory) }],
  });
  const { id, done: waiting } = await signAwaitingApproval(engine, {
    payload: {
      version: 'message',
      format: 'offchain',
      message: Buffer.from(bytes).toString('base64'),
      signer: signatory,
      summary: 'authorise the bot',
    },
    principal: world.operator,
  });
  await reloadWithVault({ sign_messages: false });
  await world.ledger.decideApproval(id, 'approved', 'operator', nowSeconds());
  expect(await waiting).toMatchObject({
    outcome: 'refused',
    reason: 'messages_not_allowed',
    signature: null,
  });
}, 60_000);
