/**
 * Webhooks end to end inside one process: the real engine on the LiteSVM chain and a SQLite ledger writes each
 * event to the outbox, the real deliverer posts it over loopback to real node:http receivers, and each receiver
 * verifies the Standard Webhooks signature with the `standardwebhooks` package. Receivers go down, answer errors
 * and hang; the tests wait for events (rows, arrivals), never for a guessed time.
 */
import fs from 'node:fs';
import path from 'node:path';
import { hookId } from '../../src/config/load';
import { NOTIFY_EVENTS, type NotifyConfig, type NotifyDelivery } from '../../src/config/types';
import { Metrics } from '../../src/http/metrics';
import type { NotificationRecord } from '../../src/ledger/types';
import { startDeliverer, type Deliverer } from '../../src/notify/deliverer';
import { approvalDecided } from '../../src/notify/events';
import { createOutbox } from '../../src/notify/outbox';
import { readHookSecrets } from '../../src/notify/secrets';
import { silentLogger } from '../../src/signer/engine-deps';
import type { Principal, SignProgress } from '../../src/signer/types';
import { approvalId, finalEntry, until } from '../support/async';
import { newWebhookSecret, startReceiver, type Receiver } from '../support/webhook-receiver';
import { makeWorld, type World } from '../support/world';

const AGENT: Principal = { kind: 'token', name: 'agent', keys: ['wallet', 'capped'] };
const DELIVERY: NotifyDelivery = {
  timeout_ms: 60_000,
  max_attempts: 50,
  max_age_hours: 24,
  backoff_base_ms: 20,
  backoff_max_ms: 200,
  poll_ms: 20,
};

let w: World;
let standard: Receiver;
let slack: Receiver;
let secret: string;
let notify: NotifyConfig;
let deliverer: Deliverer;
let metrics: Metrics;

/** Starts the deliverer again with other delivery settings (the one running is closed first). */
async function deliverWith(over: Partial<NotifyDelivery>): Promise<void> {
  await deliverer.close();
  deliverer = startDeliverer({
    ledger: w.ledger,
    delivery: { ...DELIVERY, ...over },
    hooks: () => ({ hooks: notify.hooks, signers: readHookSecrets(notify.hooks) }),
    log: silentLogger,
    observer: metrics,
  });
}

const arrived = (r: Receiver, type: string, match: (d: Record<string, unknown>) => boolean = () => true) =>
  r.accepted.find((x) => x.body.type === type && match(x.body.data as Record<string, unknown>));

async function arrival(r: Receiver, type: string, match?: (d: Record<string, unknown>) => boolean) {
  await until(() => arrived(r, type, match) !== undefined, `${type} at the receiver`);
  return arrived(r, type, match)!;
}

async function rows(hook: string, pred: (n: NotificationRecord) => boolean = () => true) {
  return (await w.ledger.listNotifications({ limit: 1000 })).filter((n) => n.hook === hook && pred(n));
}

beforeAll(async () => {
  secret = newWebhookSecret();
  standard = await startReceiver(secret);
  slack = await startReceiver(secret);
  const hooks: NotifyConfig['hooks'] = [
    { id: hookId(standard.url), url: standard.url, events: [...NOTIFY_EVENTS], secret_file: null, format: 'standard' },
    { id: hookId(slack.url), url: slack.url, events: [...NOTIFY_EVENTS], secret_file: null, format: 'slack' },
  ];
  notify = { hooks, delivery: DELIVERY };
  w = await makeWorld({
    keys: {
      wallet: { class: 'wallet', approval: 'confirm', allow_unattended: true },
      capped: { daily_lamport_cap: 3_000_000 },
    },
    timings: { approval_timeout_ms: 60_000 },
    notify,
  });
  const secretFile = path.join(w.dir, 'webhook.secret');
  fs.writeFileSync(secretFile, `${secret}\n`, { mode: 0o600 });
  for (const h of hooks) h.secret_file = secretFile;
  metrics = new Metrics({
    defaultMetrics: false,
    outboxPending: async () => (await w.ledger.notificationCounts()).pending,
  });
  deliverer = startDeliverer({
    ledger: w.ledger,
    delivery: notify.delivery,
    hooks: () => ({ hooks, signers: readHookSecrets(hooks) }),
    log: silentLogger,
    observer: metrics,
  });
});

afterAll(async () => {
  await deliverer.close();
  await w.close();
  await standard.close();
  await slack.close();
});

afterEach(() => {
  expect(standard.rejected).toEqual([]);
  expect(slack.rejected).toEqual([]);
});

describe('webhooks', () => {
  it("tells of an approval requested and decided, signed, with the signer's figures and the agent's words marked", async () => {
    const events: SignProgress[] = [];
    const summary = 'pay the guild <!channel> & <https://evil.example|click>';
    const signing = w.engine.sign({
      payload: w.transfer('wallet', 1_500_000, summary),
      principal: AGENT,
      onProgress: (e) => events.push(e),
    });
    const id = await approvalId(events);
    const requested = await arrival(standard, 'approval.requested', (d) => d.approval_id === id);
    const data = requested.body.data as Record<string, unknown>;
    expect(data).toMatchObject({
      key: 'wallet',
      approval_id: id,
      status: 'pending',
      required: 1,
      approvers: null,
      approved_by: [],
      requested_by: 'token:agent',
      summary: { text: summary, written_by: 'token:agent', verified: false },
    });
    expect(data.balance_change_lamports).toBeLessThanOrEqual(-1_500_000);
    expect(data.fee_lamports).toBeGreaterThan(0);
    expect(typeof data.expires_at).toBe('string');
    // The webhook-id is the outbox row's id: a receiver deduplicates a notification delivered twice by it.
    const [row] = await rows(hookId(standard.url), (n) => n.event === 'approval.requested' && n.body.includes(id));
    expect(requested.id).toBe(row!.id);
    expect(requested.raw).not.toContain('whsec_');

    await w.ledger.decideApproval(id, 'approved', 'operator', Math.floor(Date.now() / 1000));
    const report = await signing;
    expect(report.outcome).toBe('confirmed');
    const decided = await arrival(standard, 'approval.decided', (d) => d.approval_id === id);
    expect(decided.body.data).toMatchObject({
      key: 'wallet',
      status: 'approved',
      decided_by: 'operator',
      approved_by: ['operator'],
    });
    // The CLI or console that decided tells of it too, from another process: the hook still gets it once.
    const record = await w.ledger.getApproval(id);
    await createOutbox({ ledger: w.ledger, hooks: notify.hooks, log: silentLogger }).emit(approvalDecided(record!));
    const told = await rows(hookId(standard.url), (n) => n.event === 'approval.decided' && n.body.includes(id));
    expect(told).toHaveLength(1);
    expect(told[0]!.id).toBe(decided.id);
  });

  it('tells of a request whose sign went away as decided: abandoned, by the signer', async () => {
    const events: SignProgress[] = [];
    const caller = new AbortController();
    const signing = w.engine.sign({
      payload: w.transfer('wallet', 1_100_000, 'the caller will leave'),
      principal: AGENT,
      signal: caller.signal,
      onProgress: (e) => events.push(e),
    });
    const id = await approvalId(events);
    await arrival(standard, 'approval.requested', (d) => d.approval_id === id);
    caller.abort();
    expect((await signing).outcome).toBe('refused');
    const decided = await arrival(standard, 'approval.decided', (d) => d.approval_id === id);
    expect(decided.body.data).toMatchObject({ status: 'abandoned', approved_by: [] });
  });

  it('tells of a sign refused by a cap, with the cap that refused and what the transaction would have cost', async () => {
    const report = await w.engine.sign({ payload: w.transfer('capped', 5_000_000, 'too much'), principal: AGENT });
    expect(report).toMatchObject({ outcome: 'refused', failed_check: 'limits', reason: 'per_day_cap' });
    const refused = await arrival(standard, 'sign.refused_by_cap', (d) => d.payload_hash === report.payload_hash);
    expect(refused.body.data).toMatchObject({
      key: 'capped',
      failed_check: 'limits',
      reason: report.reason,
      figures: report.figures,
      detail: report.detail,
      balance_change_lamports: report.balance_change,
      requested_by: 'token:agent',
      summary: { text: 'too much', written_by: 'token:agent', verified: false },
    });
  });

  it('tells of a halt (its reason marked as its writer’s words) and of the resume', async () => {
    await w.engine.halt({ key: 'capped', reason: 'looks wrong\u001b[2J', principal: AGENT });
    const halted = await arrival(standard, 'key.halted', (d) => d.key === 'capped');
    expect(halted.body.data).toMatchObject({
      key: 'capped',
      halted_by: 'token:agent',
      reason: { text: 'looks wrong\\x1b[2J', written_by: 'token:agent', verified: false },
    });
    expect(await w.engine.resume('capped')).toBe(true);
    const resumed = await arrival(standard, 'key.resumed', (d) => d.key === 'capped');
    expect(resumed.body.data).toMatchObject({ key: 'capped', resumed_by: 'operator' });
  });

  it('a Slack hook gets {text} only: the event in a few lines, markup in the agent’s words escaped, signed all the same', async () => {
    const texts = () => slack.accepted.map((r) => r.body);
    await until(
      () => texts().some((b) => String(b.text).startsWith('*Approval requested* for key `wallet`')),
      'the approval request in Slack',
    );
    for (const b of texts()) expect(Object.keys(b)).toEqual(['text']);
    const request = texts().find((b) => String(b.text).startsWith('*Approval requested*'))!;
    const text = String(request.text);
    expect(text).toMatch(/sa-forge-signer approvals approve [0-9a-z]{8}/);
    expect(text).toContain('fee: 5000 lamports');
    expect(text).toContain(
      'summary (written by token:agent, not verified): "pay the guild &lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;"',
    );
    expect(text).not.toMatch(/<!channel>|<https:/);
    await until(
      () => texts().some((b) => String(b.text).startsWith('*Key `capped` resumed* by operator')),
      'the resume in Slack',
    );
  });

  it("a receiver that hangs never slows a sign: the sign's final entry exists while the receiver still holds the request", async () => {
    standard.setMode({ kind: 'hang' });
    const events: SignProgress[] = [];
    const signing = w.engine.sign({
      payload: w.transfer('wallet', 1_200_000, 'while the receiver hangs'),
      principal: AGENT,
      onProgress: (e) => events.push(e),
    });
    const id = await approvalId(events);
    await until(() => standard.holding() >= 1, 'the receiver holding the approval request');
    await w.ledger.decideApproval(id, 'approved', 'operator', Math.floor(Date.now() / 1000));
    const report = await signing;
    expect(report.outcome).toBe('confirmed');
    const final = await finalEntry(w.ledger, report.signature!);
    expect(final.outcome).toBe('confirmed');
    // The sign is over and recorded, and the notification it caused is still held, undelivered.
    expect(standard.holding()).toBeGreaterThanOrEqual(1);
    const held = await rows(hookId(standard.url), (n) => n.event === 'approval.requested' && n.body.includes(id));
    expect(held.map((n) => n.status)).toEqual(['pending']);
    standard.release();
    await arrival(standard, 'approval.decided', (d) => d.approval_id === id);
    expect(arrived(standard, 'approval.requested', (d) => d.approval_id === id)).toBeDefined();
  });

  it('cuts off an attempt the receiver does not answer within timeout_ms, and delivers it on a later attempt', async () => {
    await deliverWith({ timeout_ms: 300 });
    try {
      standard.setMode({ kind: 'hang' });
      const before = standard.arrivals;
      await w.engine.halt({ key: 'capped', reason: 'cut-off test', principal: AGENT });
      const hook = hookId(standard.url);
      await until(
        async () =>
          (await rows(hook, (n) => n.event === 'key.halted' && n.attempts >= 1)).some((n) =>
            n.body.includes('cut-off test'),
          ),
        'a timed-out attempt recorded',
      );
      const [timedOut] = await rows(hook, (n) => n.body.includes('cut-off test'));
      expect(timedOut).toMatchObject({ status: 'pending', last_error: 'no answer within 300 ms' });
      expect(standard.arrivals).toBeGreaterThan(before);
      standard.setMode({ kind: 'ok' });
      const halted = await arrival(standard, 'key.halted', (d) => JSON.stringify(d.reason).includes('cut-off test'));
      expect(halted.id).toBe(timedOut!.id);
      await until(async () => (await rows(hook, (n) => n.id === timedOut!.id))[0]?.status === 'delivered', 'delivered');
    } finally {
      standard.release();
      await w.engine.resume('capped');
      await deliverWith({});
    }
  });

  it('the receiver down for a while then back gets every event', async () => {
    const hook = hookId(standard.url);
    const since = Date.now();
    await standard.down();
    await w.engine.halt({ key: 'capped', reason: 'while down', principal: AGENT });
    await w.engine.resume('capped');
    // Another key than the earlier refusal's: refusals are notified at most once a minute per key.
    const over = await w.engine.sign({
      payload: w.transfer('wallet', 11_000_000_000, 'over the cap while down'),
      principal: AGENT,
    });
    expect(over).toMatchObject({ outcome: 'refused', failed_check: 'limits' });
    const fresh = () => rows(hook, (n) => n.created_at >= since);
    // Each was tried and refused (the port is closed), and waits for its retry.
    await until(async () => {
      const r = await fresh();
      return r.length === 3 && r.every((n) => n.attempts >= 1 && n.status === 'pending');
    }, 'three notifications tried while the receiver is down');
    expect((await fresh()).map((n) => n.last_error)).toEqual([
      expect.stringMatching(/ECONNREFUSED|fetch failed/),
      expect.stringMatching(/ECONNREFUSED|fetch failed/),
      expect.stringMatching(/ECONNREFUSED|fetch failed/),
    ]);
    await standard.up();
    await until(
      async () => (await fresh()).every((n) => n.status === 'delivered'),
      'every notification delivered once the receiver is back',
    );
    const ids = (await fresh()).map((n) => n.id).sort();
    expect(ids.every((id) => standard.accepted.some((a) => a.id === id))).toBe(true);
    expect(arrived(standard, 'key.halted', (d) => JSON.stringify(d.reason).includes('while down'))).toBeDefined();
    expect(
      arrived(standard, 'sign.refused_by_cap', (d) => JSON.stringify(d.summary).includes('while down')),
    ).toBeDefined();
  });

  it('marks a notification failed after max_attempts, visible in the ledger and in the metrics', async () => {
    const hook = hookId(standard.url);
    // What earlier tests left in flight (a resume sent as the deliverer was swapped) is delivered first.
    await until(async () => (await rows(hook, (n) => n.status === 'pending')).length === 0, 'a quiet outbox');
    await deliverWith({ max_attempts: 3 });
    try {
      standard.setMode({ kind: 'status', status: 503 });
      await w.engine.halt({ key: 'capped', reason: 'given up', principal: AGENT });
      await until(
        async () => (await w.ledger.listNotifications({ limit: 50, status: 'failed' })).some((n) => n.hook === hook),
        'a failed notification',
      );
      const [failed] = (await w.ledger.listNotifications({ limit: 50, status: 'failed' })).filter(
        (n) => n.hook === hook,
      );
      expect(failed).toMatchObject({ event: 'key.halted', attempts: 3, last_error: 'HTTP 503' });
      // Counted once the ledger has the result durably, which a reader of the ledger may see a moment before.
      const failedLine = `signer_notifications_total{hook="${hook}",result="failed"} 1`;
      await until(async () => (await metrics.registry.metrics()).includes(failedLine), 'the failure counted');
      const text = await metrics.registry.metrics();
      expect(text).toMatch(
        new RegExp(`signer_notifications_total\\{hook="${hook.replace(/[.]/g, '\\.')}",result="retrying"\\} [1-9]`),
      );
      expect(text).toMatch(/signer_notifications_pending \d+/);
    } finally {
      standard.setMode({ kind: 'ok' });
      await w.engine.resume('capped');
      await deliverWith({});
    }
  });

  it('leaves a hook it does not have to the replicas that do, and marks it failed once it is max_age_hours old', async () => {
    const now = Date.now();
    const row = (id: string, created: number) => ({
      id,
      hook: 'elsewhere.example~00000000',
      event: 'key.halted',
      key: 'capped',
      body: '{}',
      created_at: created,
      next_at: created,
    });
    await w.ledger.enqueueNotifications([row('msg_elsewhere_new', now), row('msg_elsewhere_old', now - 25 * 3600_000)]);
    const byId = async (id: string) => (await w.ledger.listNotifications({ limit: 1000 })).find((n) => n.id === id)!;
    await until(async () => (await byId('msg_elsewhere_old')).status === 'failed', 'the old row given up');
    expect(await byId('msg_elsewhere_old')).toMatchObject({
      attempts: 0,
      last_error: 'no running service has this hook configured',
    });
    await until(async () => (await byId('msg_elsewhere_new')).next_at > now, 'the new row handed back');
    expect(await byId('msg_elsewhere_new')).toMatchObject({ status: 'pending', attempts: 0 });
  });
});
