/**
 * Webhooks with real processes: the built service (`sa-forge-signer-serve --config`) delivers from the ledger's
 * outbox to a node:http receiver on loopback that verifies each Standard Webhooks signature; the operator CLI writes
 * halt and resume events to the same outbox. A notification the service could not deliver before it stopped is
 * delivered by the next start. A hook whose secret file is missing or malformed, or whose URL is not http(s),
 * refuses the start and says which hook and why.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { hookId } from '../../src/config/load';
import { newToken, tokenSha256 } from '../../src/http/bearer-tokens';
import { openLedger } from '../../src/ledger/open';
import type { Ledger, NotificationRecord } from '../../src/ledger/types';
import type { NotificationView } from '../../src/notify/view';
import { until } from '../support/async';
import { killOnExit, stopChild } from '../support/children';
import { BIN, assertBuilt, run, spawnBin, waitForOutput, writeYaml } from '../support/cli';
import { newWebhookSecret, startReceiver, type Receiver } from '../support/webhook-receiver';
import { makeWorld, worldConfigDocument, type World } from '../support/world';
import { headersFor, rpc } from '../http/support';

let w: World;
let receiver: Receiver;
let secret: string;
let secretFile: string;
let ledger: Ledger;
const token = newToken();

/** The service's config: the world's keys, ledger and chain, one bearer token, and the given webhooks. */
function writeConfig(name: string, notify: unknown[]): string {
  const file = path.join(w.dir, name);
  writeYaml(
    file,
    worldConfigDocument(w, {
      state_dir: path.join(w.dir, 'serve-state'),
      serve: {
        listen: '127.0.0.1:0',
        metrics: null,
        tokens: [{ name: 'agent', sha256: tokenSha256(token), keys: ['alpha'] }],
      },
      notify,
      notify_delivery: { timeout_ms: 5_000, backoff_base_ms: 50, backoff_max_ms: 300, poll_ms: 50 },
    }),
  );
  return file;
}

async function startService(config: string): Promise<{ child: ChildProcess; stderr: () => string }> {
  const child = spawnBin(BIN.serve, ['--config', config]);
  killOnExit(child);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  await waitForOutput(child, /serving on/);
  return { child, stderr: () => stderr };
}

const cli = (config: string, args: string[]) => run(BIN.signer, ['--config', config, ...args]);

async function rowsOf(event: string): Promise<NotificationRecord[]> {
  return (await ledger.listNotifications({ limit: 100 })).filter((n) => n.event === event);
}

beforeAll(async () => {
  assertBuilt(BIN.serve, BIN.signer);
  w = await makeWorld({ keys: { alpha: {} } });
  secret = newWebhookSecret();
  secretFile = path.join(w.dir, 'webhook.secret');
  fs.writeFileSync(secretFile, `${secret}\n`, { mode: 0o600 });
  receiver = await startReceiver(secret);
  ledger = await openLedger(w.config.ledger);
});

afterAll(async () => {
  await ledger.close();
  await receiver.close();
  await w.close();
});

describe('webhooks from the service', () => {
  it('a notification left undelivered when the service stopped is delivered by the next start, signed', async () => {
    const config = writeConfig('config.yaml', [{ url: receiver.url, secret_file: secretFile }]);
    await receiver.down();
    const first = await startService(config);
    try {
      const halt = await cli(config, ['halt', 'alpha', '--reason', 'restart test']);
      expect(halt.code).toBe(0);
      // The service tried it (the receiver's port is closed) and keeps it for a retry.
      await until(async () => (await rowsOf('key.halted')).some((n) => n.attempts >= 1), 'a refused attempt');
    } finally {
      await stopChild(first.child, 'SIGTERM');
    }
    const [row] = await rowsOf('key.halted');
    expect(row).toMatchObject({ status: 'pending', hook: hookId(receiver.url), claimed_by: null });

    const listed = await cli(config, ['notify', 'list', '--json']);
    expect(listed.code).toBe(0);
    const state = JSON.parse(listed.stdout) as { counts: { pending: number }; notifications: NotificationView[] };
    expect(state.counts.pending).toBe(1);
    expect(state.notifications[0]).toMatchObject({ id: row!.id, event: 'key.halted', key: 'alpha', status: 'pending' });
    expect(state.notifications[0]!.last_error).toMatch(/ECONNREFUSED|fetch failed/);

    await receiver.up();
    const second = await startService(config);
    try {
      await until(() => receiver.accepted.some((r) => r.id === row!.id), 'the halt delivered after the restart');
      const got = receiver.accepted.find((r) => r.id === row!.id)!;
      expect(got.body).toMatchObject({
        type: 'key.halted',
        data: { key: 'alpha', halted_by: 'operator', reason: { text: 'restart test', verified: false } },
      });
      await until(async () => (await rowsOf('key.halted'))[0]?.status === 'delivered', 'the row marked delivered');

      // A resume from the CLI reaches the hook through the running service too.
      expect((await cli(config, ['resume', 'alpha'])).code).toBe(0);
      await until(() => receiver.accepted.some((r) => r.body.type === 'key.resumed'), 'the resume delivered');
      expect(receiver.rejected).toEqual([]);
      const text = await cli(config, ['notify', 'list']);
      expect(text.stdout).toMatch(/key\.resumed {2}key alpha {2}to 127\.0\.0\.1:\d+~[0-9a-f]{8} {2}delivered/);
    } finally {
      await stopChild(second.child, 'SIGTERM');
    }
    // Neither the signing secret nor the bearer token reaches a log line or a body.
    for (const text of [first.stderr(), second.stderr(), ...receiver.accepted.map((r) => r.raw)]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(secret.slice('whsec_'.length));
      expect(text).not.toContain(token);
    }
  });

  it.each([
    ['a missing secret file', () => ({ url: receiver.url, secret_file: path.join(w.dir, 'nope') }), /does not exist/],
    [
      'a secret not in the whsec_ form',
      () => {
        const bad = path.join(w.dir, 'bad.secret');
        fs.writeFileSync(bad, 'hunter2\n', { mode: 0o600 });
        return { url: receiver.url, secret_file: bad };
      },
      /is not a Standard Webhooks secret: it must be whsec_ followed by base64/,
    ],
    [
      'a secret too short',
      () => {
        const bad = path.join(w.dir, 'short.secret');
        fs.writeFileSync(bad, 'whsec_c2hvcnQ=\n', { mode: 0o600 });
        return { url: receiver.url, secret_file: bad };
      },
      /decodes to 5 bytes; use 24 to 64 random bytes/,
    ],
  ])('refuses to start with %s, naming the hook and why', async (_what, hook, why) => {
    const config = writeConfig('bad.yaml', [hook()]);
    const res = await run(BIN.serve, ['--config', config]);
    expect(res.code).toBe(1);
    const id = hookId(receiver.url).replace(/[.]/g, '\\.');
    expect(res.stderr).toMatch(new RegExp(`notify\\[0\\] \\(${id}\\): secret_file `));
    expect(res.stderr).toMatch(why);
    expect(res.stderr).not.toContain('hunter2');
  });

  it('a reload adds a hook that the service then tells, signed; one whose secret cannot be read is refused; a reload removes it', async () => {
    const config = writeConfig('reload-hooks.yaml', []);
    const service = await startService(config);
    const port = /serving on 127\.0\.0\.1:(\d+)/.exec(service.stderr())![1]!;
    /** halt or resume through the service's own MCP tools, so the service's own outbox writes the event. */
    const tool = async (name: 'halt', args: Record<string, unknown>): Promise<void> => {
      const body = rpc('tools/call', { name, arguments: args });
      const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
        method: 'POST',
        headers: { ...headersFor(body), Authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
    };
    try {
      const id = hookId(receiver.url);
      const missing = path.join(w.dir, 'missing.secret');
      writeConfig('reload-hooks.yaml', [{ url: receiver.url, secret_file: missing }]);
      const refused = await cli(config, ['reload']);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toMatch(
        /reload refused, nothing changed: notify\[0\] \(.+\): secret_file .* does not exist/,
      );

      writeConfig('reload-hooks.yaml', [{ url: receiver.url, secret_file: secretFile, events: ['key.halted'] }]);
      const added = await cli(config, ['reload']);
      expect(added.code).toBe(0);
      expect(added.stdout).toContain(`applied: +hook ${id}\n`);
      await tool('halt', { key: 'alpha', reason: 'after the reload' });
      await until(
        () => receiver.accepted.some((r) => JSON.stringify(r.body).includes('after the reload')),
        'the halt told to the hook added by the reload',
      );
      expect(receiver.rejected).toEqual([]);
      expect((await cli(config, ['resume', 'alpha'])).code).toBe(0);

      writeConfig('reload-hooks.yaml', []);
      const removed = await cli(config, ['reload']);
      expect(removed.stdout).toContain(`applied: -hook ${id}\n`);
      const before = (await rowsOf('key.halted')).length;
      await tool('halt', { key: 'alpha', reason: 'after the removal' });
      // The halt is recorded, and no notification is written for a hook the policy no longer has.
      await until(async () => (await ledger.getHalt('alpha')) !== null, 'the second halt recorded');
      expect((await rowsOf('key.halted')).length).toBe(before);
      expect((await cli(config, ['resume', 'alpha'])).code).toBe(0);
      for (const text of [service.stderr(), added.stdout, removed.stdout]) expect(text).not.toContain(receiver.url);
    } finally {
      await stopChild(service.child, 'SIGTERM');
    }
  });

  it('refuses to start with a webhook URL that is not http(s), and says so', async () => {
    const config = writeConfig('bad-url.yaml', [{ url: 'ftp://127.0.0.1/hook', secret_file: secretFile }]);
    const res = await run(BIN.serve, ['--config', config]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('notify[0].url: a webhook is an http:// or https:// URL, not ftp://');
  });
});
