/**
 * `treasury.refill_due` end to end (docs/treasury.md): the engine's reconciliation pass on the embedded chain finds
 * a treasury account whose allowance is below `refill_below_percent` of the next period's plan and writes the event
 * to the outbox; the real deliverer posts it over loopback to a node:http receiver that verifies its Standard
 * Webhooks signature. Told once per account and UTC day: again in the same day (another pass, a new process with its
 * own memory) it is not written again; the next day it is; an account whose allowance fell unexplained is halted,
 * not refilled.
 */
import fs from 'node:fs';
import path from 'node:path';
import { hookId } from '../../src/config/load';
import { NOTIFY_EVENTS, type NotifyHook } from '../../src/config/types';
import { startDeliverer, type Deliverer } from '../../src/notify/deliverer';
import { createOutbox } from '../../src/notify/outbox';
import { readHookSecrets } from '../../src/notify/secrets';
import { silentLogger } from '../../src/signer/engine-deps';
import { chainClientFor } from '../../src/rpc/for-cluster';
import { createTreasuryReconciler } from '../../src/treasury/reconcile';
import { refillPeriod } from '../../src/treasury/refill-due';
import { nowSeconds } from '../../src/util/time';
import { until } from '../support/async';
import { randomAddress } from '../support/payloads';
import { setMint, setTokenAccount } from '../support/tokens';
import { newWebhookSecret, startReceiver, type Receiver } from '../support/webhook-receiver';
import { makeWorld, type World } from '../support/world';
import { tokenPolicy } from '../signer/policy/fixtures';

const M = 1_000_000n;
const MINT = randomAddress();
const OWNER = randomAddress();
const policy = tokenPolicy(MINT, { per_day: 5n * M });

let w: World;
let receiver: Receiver;
let deliverer: Deliverer;
let hooks: NotifyHook[];
/** Below half of the 5-token plan: a refill is due. */
let low: string;
/** Above half: none is. */
let high: string;

beforeAll(async () => {
  const secret = newWebhookSecret();
  receiver = await startReceiver(secret);
  hooks = [
    { id: hookId(receiver.url), url: receiver.url, events: [...NOTIFY_EVENTS], secret_file: null, format: 'standard' },
  ];
  w = await makeWorld({
    keys: { agent: { tokens: [policy] } },
    notify: {
      hooks,
      delivery: {
        timeout_ms: 10_000,
        max_attempts: 5,
        max_age_hours: 1,
        backoff_base_ms: 20,
        backoff_max_ms: 200,
        poll_ms: 20,
      },
    },
  });
  const secretFile = path.join(w.dir, 'webhook.secret');
  fs.writeFileSync(secretFile, `${secret}\n`, { mode: 0o600 });
  for (const h of hooks) h.secret_file = secretFile;
  deliverer = startDeliverer({
    ledger: w.ledger,
    delivery: w.config.notify!.delivery,
    hooks: () => ({ hooks, signers: readHookSecrets(hooks) }),
    log: silentLogger,
  });
  const agent = w.config.keys.find((k) => k.name === 'agent')!;
  setMint(w.localnet, MINT, { decimals: 6 });
  const delegated = (delegatedAmount: bigint, address?: string) =>
    setTokenAccount(w.localnet, {
      mint: MINT,
      owner: OWNER,
      amount: 100n * M,
      delegate: agent.pubkey,
      delegatedAmount,
      ...(address === undefined ? {} : { address }),
    });
  low = delegated(2n * M);
  high = delegated(4n * M);
  // Set on the engine's key in place: its process had no treasury at start, so no timer runs passes of its own.
  agent.treasury = { owner: OWNER, accounts: [low, high], refill_below_percent: 50 };
  // Kept for the last test: the high account falls with no sign of the signer's to explain it.
  fallHigh = () => delegated(1n * M, high);
});

let fallHigh: () => void;

afterAll(async () => {
  await deliverer.close();
  await w.close();
  await receiver.close();
});

afterEach(() => expect(receiver.rejected).toEqual([]));

const refillRows = async () =>
  (await w.ledger.listNotifications({ limit: 1000 })).filter((n) => n.event === 'treasury.refill_due');
const accountOf = (n: { body: string }): unknown => (JSON.parse(n.body) as { data: { account: unknown } }).data.account;
const refillsReceived = () => receiver.accepted.filter((r) => r.body.type === 'treasury.refill_due');

/** A reconciler as a freshly started process has it: nothing in memory, the same ledger (its baselines) and hooks. */
const freshProcess = (now: () => number) =>
  createTreasuryReconciler({
    keys: () => w.config.keys,
    chain: chainClientFor(w.config.cluster, w.config.timings),
    audit: w.ledger,
    baselines: w.ledger,
    halts: {
      halt: () => Promise.reject(new Error('no halt is expected from this pass')),
    },
    notify: createOutbox({ ledger: w.ledger, hooks, log: silentLogger }),
    now,
  });

describe('treasury.refill_due', () => {
  it('a pass finds the low allowance and the receiver gets one signed notification with the figures', async () => {
    const [pass] = await w.engine.reconcileTreasuries();
    expect(pass?.verdicts.map((v) => v.kind)).toEqual(['first_seen', 'first_seen']);
    await until(() => refillsReceived().length === 1, 'treasury.refill_due at the receiver');
    const [got] = refillsReceived();
    expect(got!.body).toMatchObject({
      type: 'treasury.refill_due',
      data: {
        key: 'agent',
        account: low,
        mint: MINT,
        decimals: 6,
        delegate: w.keys.agent!.pubkey,
        chain_allowance: '2000000',
        refill_below: '2500000',
        planned_allowance: '5000000',
        planned_by: 'tokens.per_day',
        period: refillPeriod(nowSeconds()),
      },
    });
    // The high account (4 of 5, above half) is not due.
    expect((await refillRows()).map(accountOf)).toEqual([low]);
  });

  it('is told once a day: another pass, and a new process with no memory of it, write nothing more', async () => {
    await w.engine.reconcileTreasuries();
    const [restarted] = await freshProcess(nowSeconds).reconcile();
    // It judges against the baselines the engine's passes left in the ledger.
    expect(restarted?.verdicts.map((v) => v.kind)).toEqual(['ok', 'ok']);
    expect(await refillRows()).toHaveLength(1);
  });

  it('is told again the next UTC day', async () => {
    const tomorrow = nowSeconds() + 86_400;
    await freshProcess(() => tomorrow).reconcile();
    const rows = await refillRows();
    expect(rows).toHaveLength(2);
    await until(() => refillsReceived().length === 2, 'the next day’s treasury.refill_due at the receiver');
    expect(refillsReceived()[1]!.body).toMatchObject({ data: { account: low, period: refillPeriod(tomorrow) } });
  });

  it('an account whose allowance fell unexplained is halted and told as a mismatch, not as a refill', async () => {
    fallHigh();
    const [pass] = await w.engine.reconcileTreasuries();
    expect(pass?.verdicts).toContainEqual({
      kind: 'mismatch',
      account: high,
      mint: MINT,
      expected: 4n * M,
      actual: 1n * M,
    });
    expect(await w.ledger.getHalt('agent')).toMatchObject({ by: 'signer (treasury reconciliation)' });
    await until(
      () => receiver.accepted.some((r) => r.body.type === 'treasury.mismatch'),
      'treasury.mismatch at the receiver',
    );
    expect((await refillRows()).map(accountOf)).toEqual([low, low]);
  });
});
