/**
 * The `notify:` webhooks as loadConfig resolves them: defaults, the hook's id (never its URL), and each refusal
 * naming the hook entry and what to change. The secret file itself is read by the service at start
 * (test/e2e/webhooks-service.test.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hookId, loadConfig } from '../../src/config/load';
import { NOTIFY_DELIVERY_DEFAULTS, NOTIFY_EVENTS } from '../../src/config/types';
import { isSignerError } from '../../src/util/errors';

const A = '4Nd1mYwJ3d8q4t1nUQ8e3YqKkX2n1Fbq9xHk2wz3h5Qv';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cfg-notify-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function load(notify: string, env: NodeJS.ProcessEnv = {}) {
  const file = path.join(dir, 'c.yaml');
  fs.writeFileSync(file, `keys:\n  play:\n    class: session\n    pubkey: ${A}\n${notify}`);
  return loadConfig({ file, env });
}

function refusal(notify: string): string {
  try {
    load(notify);
  } catch (e) {
    expect(isSignerError(e) && e.code).toBe('config_invalid');
    return (e as Error).message;
  }
  throw new Error('the config loaded');
}

describe('notify config', () => {
  it('has no hooks and the default delivery bounds when absent', () => {
    expect(load('').notify).toEqual({ hooks: [], delivery: NOTIFY_DELIVERY_DEFAULTS });
  });

  it('resolves a hook: every event by default, format standard, the secret file against the config folder', () => {
    const url = 'https://ops.example.com/hooks/signer?team=1';
    const cfg = load(`notify:\n  - url: ${url}\n    secret_file: secrets/hook\n`, { SIGNER_NOTIFY_TIMEOUT_MS: '2500' });
    expect(cfg.notify?.hooks).toEqual([
      {
        id: hookId(url),
        url,
        events: [...NOTIFY_EVENTS],
        secret_file: path.join(dir, 'secrets/hook'),
        format: 'standard',
      },
    ]);
    expect(cfg.notify?.delivery.timeout_ms).toBe(2500);
    // The id names the host and a hash, never the path or query, which may be a secret (a Slack URL's is).
    expect(hookId(url)).toMatch(/^ops\.example\.com~[0-9a-f]{8}$/);
    expect(hookId(url)).not.toBe(hookId('https://ops.example.com/hooks/other'));
  });

  it('takes a slack hook without a secret, with the events it lists', () => {
    const cfg = load('notify:\n  - url: http://127.0.0.1:9/x\n    format: slack\n    events: [key.halted]\n');
    expect(cfg.notify?.hooks[0]).toMatchObject({ format: 'slack', secret_file: null, events: ['key.halted'] });
  });

  it.each([
    ['ftp://example.com/x', 'notify[0].url: a webhook is an http:// or https:// URL, not ftp://'],
    ['example.com/x', 'notify[0].url: not a URL; a webhook is an http:// or https:// URL'],
    ['https://user:pw@example.com/x', 'notify[0].url: credentials in the URL are not allowed'],
  ])('refuses the URL %s, saying http(s) only', (url, message) => {
    expect(refusal(`notify:\n  - url: ${url}\n    secret_file: s\n`)).toContain(message);
  });

  it('refuses an unknown event, listing the known ones', () => {
    expect(refusal('notify:\n  - url: https://a.example/x\n    secret_file: s\n    events: [key.hatled]\n')).toContain(
      `notify[0].events: unknown event "key.hatled"; use any of ${NOTIFY_EVENTS.join(', ')}`,
    );
  });

  it('refuses a standard hook without a secret file, and the same URL twice', () => {
    const url = 'https://a.example/x';
    expect(refusal(`notify:\n  - url: ${url}\n`)).toContain(
      `notify[0] (${hookId(url)}).secret_file: a standard webhook needs its signing secret`,
    );
    expect(refusal(`notify:\n  - url: ${url}\n    secret_file: s\n  - url: ${url}\n    secret_file: s\n`)).toContain(
      `the hook ${hookId(url)} is listed twice`,
    );
  });

  it('refuses a key the hook schema does not have, and a format it does not know', () => {
    expect(refusal('notify:\n  - url: https://a.example/x\n    secret: whsec_x\n')).toMatch(
      /notify\[0\]\.secret: unknown key/,
    );
    expect(refusal('notify:\n  - url: https://a.example/x\n    format: teams\n')).toMatch(/notify\[0\]\.format/);
  });
});
