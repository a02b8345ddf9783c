/**
 * Two replicas sharing one PostgreSQL ledger, each with its own deliverer, as two service processes would run: every
 * notification reaches the receiver once (each row is claimed by one replica), whichever replica wrote it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hookId } from '../../src/config/load';
import { NOTIFY_EVENTS, type NotifyConfig } from '../../src/config/types';
import { openLedger } from '../../src/ledger/open';
import type { Ledger } from '../../src/ledger/types';
import { startDeliverer, type Deliverer } from '../../src/notify/deliverer';
import { keyHalted } from '../../src/notify/events';
import { createOutbox } from '../../src/notify/outbox';
import { readHookSecrets } from '../../src/notify/secrets';
import { silentLogger } from '../../src/signer/engine-deps';
import { until } from '../support/async';
import { newWebhookSecret, startReceiver, type Receiver } from '../support/webhook-receiver';
import { createDatabase, dbUrl, dropDatabase } from '../ledger/pg';

let name: string;
let ledgers: Ledger[];
let receiver: Receiver;
let deliverers: Deliverer[] = [];
let dir: string;

beforeAll(async () => {
  name = await createDatabase();
  ledgers = [
    await openLedger({ store: 'postgres', url: dbUrl(name), pool_size: 4 }),
    await openLedger({ store: 'postgres', url: dbUrl(name), pool_size: 4 }),
  ];
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'notify-replicas-'));
});

afterAll(async () => {
  for (const d of deliverers) await d.close();
  for (const l of ledgers) await l.close();
  await receiver.close();
  await dropDatabase(name);
  fs.rmSync(dir, { recursive: true, force: true });
});

it('two replicas deliver every notification exactly once between them, whichever wrote it', async () => {
  const secret = newWebhookSecret();
  receiver = await startReceiver(secret);
  const secretFile = path.join(dir, 'secret');
  fs.writeFileSync(secretFile, secret, { mode: 0o600 });
  const notify: NotifyConfig = {
    hooks: [
      {
        id: hookId(receiver.url),
        url: receiver.url,
        events: [...NOTIFY_EVENTS],
        secret_file: secretFile,
        format: 'standard',
      },
    ],
    delivery: {
      timeout_ms: 10_000,
      max_attempts: 10,
      max_age_hours: 1,
      backoff_base_ms: 20,
      backoff_max_ms: 100,
      poll_ms: 10,
    },
  };
  const counts = [0, 0];
  const signers = readHookSecrets(notify.hooks);
  deliverers = ledgers.map((ledger, i) =>
    startDeliverer({
      ledger,
      delivery: notify.delivery,
      hooks: () => ({ hooks: notify.hooks, signers }),
      log: silentLogger,
      observer: { delivered: () => counts[i]!++, retrying: () => undefined, failed: () => undefined },
    }),
  );
  const outboxes = ledgers.map((ledger) => createOutbox({ ledger, hooks: notify.hooks, log: silentLogger }));
  const events = Array.from({ length: 40 }, (_, i) => ({
    key: `k${i}`,
    reason: `r${i}`,
    by: 'operator',
    ts: 1_800_000_000 + i,
  }));
  await Promise.all(events.map((h, i) => outboxes[i % 2]!.emit(keyHalted(h))));

  await until(async () => (await ledgers[0]!.notificationCounts()).delivered === 40, 'every notification delivered');
  expect(receiver.rejected).toEqual([]);
  const ids = receiver.accepted.map((r) => r.id);
  expect(ids).toHaveLength(40);
  expect(new Set(ids).size).toBe(40);
  // Counted once each result is durable, which the ledger's readers may see a moment before.
  await until(() => counts[0]! + counts[1]! === 40, 'every delivery counted');
  const keys = receiver.accepted.map((r) => (r.body.data as { key: string }).key).sort();
  expect(keys).toEqual(events.map((e) => e.key).sort());
});
