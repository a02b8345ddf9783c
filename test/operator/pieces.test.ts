/**
 * The console's pure pieces: the decision challenge binds every figure shown, the decision and the nonce; pages
 * escape whatever they show; the console's origin and its cookies follow serve.operator; the session secret comes
 * from its file or, generated once, from the ledger every replica shares; `audit verify`'s verdict is kept for a
 * while and walked again in the background.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import type { ApprovalRecord, Ledger } from '../../src/ledger/types';
import { openLedger } from '../../src/ledger/open';
import { AuditVerdicts } from '../../src/operator/audit-verdict';
import { challengeText, decisionChallenge } from '../../src/operator/challenge';
import { signInput } from '../ledger/helpers';
import { html, untrusted } from '../../src/operator/html';
import { consoleOrigin, enrollmentUrl } from '../../src/operator/origin';
import { cookieName } from '../../src/operator/session';
import { loadSessionSecret } from '../../src/operator/session-secret';

const approval: ApprovalRecord = {
  id: 'abcd1234',
  key: 'vault',
  summary: 'agent text',
  payload_hash: 'ab'.repeat(32),
  balance_change: -1_005_000,
  fee: 5_000,
  compute_units: 150,
  tokens: [{ mint: 'Mint1', decimals: 6, change: '-5', credits: [{ owner: 'Owner1', amount: '5' }] }],
  programs: ['11111111111111111111111111111111'],
  destinations: [{ address: 'Dest1', lamports: 1_000_000 }],
  fee_payer: 'Payer1',
  requested_by: 'token:agent',
  ts: 1,
  expires_at: 100,
  status: 'pending',
  decided_by: null,
  decided_at: null,
  message: null,
  message_description: null,
  required: 1,
  approvers: null,
  waiter: null,
  votes: [],
};

describe('decision challenge', () => {
  const base = challengeText(decisionChallenge(approval, 'approved', 'n1'));

  it('is 32 bytes, stable for the same approval, decision and nonce, and ignores the agent’s summary', () => {
    expect(decisionChallenge(approval, 'approved', 'n1')).toHaveLength(32);
    expect(challengeText(decisionChallenge({ ...approval, summary: 'other words' }, 'approved', 'n1'))).toBe(base);
  });

  it.each<[string, Partial<ApprovalRecord>]>([
    ['another approval', { id: 'zzzz9999' }],
    ['another key', { key: 'other' }],
    ['another payload', { payload_hash: 'cd'.repeat(32) }],
    ['another SOL change', { balance_change: -2_005_000 }],
    ['another fee', { fee: 6_000 }],
    ['another fee payer', { fee_payer: 'Payer2' }],
    ['another token amount', { tokens: [{ mint: 'Mint1', decimals: 6, change: '-6', credits: [] }] }],
    ['another destination', { destinations: [{ address: 'Dest2', lamports: 1_000_000 }] }],
    ['another program', { programs: ['Prog2'] }],
    ['another dollar value', { usd_value: '4.01' }],
    ['another expiry', { expires_at: 101 }],
  ])('changes with %s', (_what, change) => {
    expect(challengeText(decisionChallenge({ ...approval, ...change }, 'approved', 'n1'))).not.toBe(base);
  });

  it('changes with the decision and with the nonce', () => {
    expect(challengeText(decisionChallenge(approval, 'rejected', 'n1'))).not.toBe(base);
    expect(challengeText(decisionChallenge(approval, 'approved', 'n2'))).not.toBe(base);
  });
});

describe('html', () => {
  it('escapes every value, and shows an agent’s control and invisible characters as visible escapes', () => {
    expect(html`<p title="${'"><script>'}">${'<b>&'}</p>`.text).toBe(
      '<p title="&quot;&gt;&lt;script&gt;">&lt;b&gt;&amp;</p>',
    );
    expect(untrusted('hi\u202e<img src=x>\n\x1b[2J').text).toBe('hi\\u202e&lt;img src=x&gt;\\n\\x1b[2J');
    expect(untrusted('x'.repeat(600), 10).text).toBe(`${'x'.repeat(10)}… (590 more characters)`);
  });
});

describe('console origin', () => {
  it('is http://localhost:PORT by default, cookies not Secure; https behind TLS, cookies Secure and __Host-', () => {
    const local = consoleOrigin({ public_url: null }, 8788);
    expect(local).toEqual({
      origin: 'http://localhost:8788',
      rpId: 'localhost',
      secure: false,
      authority: 'localhost:8788',
    });
    expect(enrollmentUrl(local, 'tok')).toBe('http://localhost:8788/enroll#tok');
    const tls = consoleOrigin({ public_url: 'https://console.example.com' }, 8788);
    expect(tls).toEqual({
      origin: 'https://console.example.com',
      rpId: 'console.example.com',
      secure: true,
      authority: 'console.example.com:443',
    });
    expect(cookieName('console.session', false)).toBe('console.session');
    expect(cookieName('console.session', true)).toBe('__Host-console.session');
  });
});

describe('session secret', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'console-secret-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads the file (one trailing newline dropped) and refuses a short one without showing it', async () => {
    const file = path.join(dir, 'secret');
    const noLedger = () => Promise.reject(new Error('not used'));
    fs.writeFileSync(file, `${'s'.repeat(40)}\n`);
    expect(await loadSessionSecret(file, noLedger)).toBe('s'.repeat(40));
    fs.writeFileSync(file, 'short-secret');
    const refused = loadSessionSecret(file, noLedger);
    await expect(refused).rejects.toMatchObject({ code: 'config_invalid' });
    await expect(refused).rejects.not.toThrow(/short-secret/);
  });

  it('without a file: generated once, and every handle on the ledger (every replica) gets the same', async () => {
    const cfg = { store: 'sqlite' as const, path: path.join(dir, 'ledger.sqlite') };
    const a = await openLedger(cfg);
    const b = await openLedger(cfg);
    try {
      const first = await loadSessionSecret(null, () => Promise.resolve(a));
      expect(first.length).toBeGreaterThanOrEqual(32);
      expect(await loadSessionSecret(null, () => Promise.resolve(b))).toBe(first);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe("the console's audit verdict", () => {
  let dir: string;
  let file: string;
  let ledger: Ledger;
  /** The real ledger, counting the walks over its chain. */
  let counted: Ledger;
  let walks: number;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'console-verdict-'));
    file = path.join(dir, 'ledger.sqlite');
    ledger = await openLedger({ store: 'sqlite', path: file });
    walks = 0;
    counted = new Proxy(ledger, {
      get(target, prop, receiver) {
        if (prop === 'verify')
          return () => {
            walks++;
            return target.verify();
          };
        const value: unknown = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    for (let i = 0; i < 3; i++) await ledger.append(signInput({ summary: `entry ${String(i)}` }));
  });
  afterEach(async () => {
    await ledger.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('walks the chain once for every page within its age, once more in the background after, never twice at once', async () => {
    const verdicts = new AuditVerdicts(pino({ level: 'silent' }), 60);
    const [a, b] = await Promise.all([verdicts.current(counted, 1000), verdicts.current(counted, 1000)]);
    expect(walks).toBe(1);
    expect(a).toEqual({ result: { ok: true, entries: 3 }, checkedAt: 1000 });
    expect(b).toBe(a);
    expect(await verdicts.current(counted, 1059)).toBe(a);
    expect(walks).toBe(1);

    // Older than its age: the page gets the last verdict at once, and a walk starts for the next page.
    await ledger.append(signInput({ summary: 'entry 3' }));
    expect(await verdicts.current(counted, 1060)).toBe(a);
    expect(walks).toBe(1 + 1);
    expect(await verdicts.current(counted, 1061)).toBe(a); // the walk still runs: no second one
    const fresh = await waitForVerdict(verdicts, counted, 1061, (v) => v !== a);
    expect(fresh).toEqual({ result: { ok: true, entries: 4 }, checkedAt: 1060 });
    expect(walks).toBe(2);
  });

  it('shows a chain changed behind the ledger as broken at the first page after its age', async () => {
    const verdicts = new AuditVerdicts(pino({ level: 'silent' }), 60);
    expect((await verdicts.current(counted, 1000)).result.ok).toBe(true);
    const db = new Database(file);
    db.prepare('UPDATE entries SET summary = ? WHERE seq = 2').run('rewritten');
    db.close();
    expect((await verdicts.current(counted, 1030)).result.ok).toBe(true);
    await verdicts.current(counted, 1060);
    const broken = await waitForVerdict(verdicts, counted, 1060, (v) => !v.result.ok);
    expect(broken.result).toMatchObject({ ok: false, line: 2 });
  });
});

/** Asks for the verdict until `done` holds: the background walk settles on its own schedule. */
async function waitForVerdict(
  verdicts: AuditVerdicts,
  ledger: Ledger,
  now: number,
  done: (v: Awaited<ReturnType<AuditVerdicts['current']>>) => boolean,
): Promise<Awaited<ReturnType<AuditVerdicts['current']>>> {
  for (;;) {
    const v = await verdicts.current(ledger, now);
    if (done(v)) return v;
    await new Promise((r) => setImmediate(r));
  }
}
