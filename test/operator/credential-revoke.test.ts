/**
 * Revoking a credential from the console (docs/credentials.md, "Revoking"), against the real listener, ledger and
 * Biscuit library, in chromium with virtual passkeys: the admin revokes a narrowed block by its id with the form and
 * an issued root by name with the API, and the credential is refused at once in this process (`reason: "revoked"`)
 * and within the poll in another replica's set; an approver cannot, nor a request without the CSRF token.
 */
import pino from 'pino';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { biscuitLib } from '../../src/credentials/biscuit-lib';
import { credentialGate } from '../../src/credentials/gate';
import { narrowCredential, rootPublicKey } from '../../src/credentials/issue';
import { ledgerRevoked } from '../../src/credentials/ledger-revoked';
import type { CredentialGate } from '../../src/credentials/gate';
import {
  CHROMIUM,
  chromiumInstalled,
  enrollAndLogIn,
  makeConsoleWorld,
  open,
  operatorBrowser,
  screenshot,
  type ConsoleCredentialsWorld,
  type ConsoleWorld,
} from './support';

const run = chromiumInstalled() ? describe : describe.skip;
if (!chromiumInstalled())
  console.warn(
    `skipped: the console's revocation tests need Debian's chromium at ${CHROMIUM} (apt-get install chromium)`,
  );

interface Session {
  cookie: string;
  csrf: string;
}

async function sessionOf(context: BrowserContext, page: Page): Promise<Session> {
  const cookies = await context.cookies();
  const csrf = await page.locator('meta[name="csrf-token"]').getAttribute('content');
  return { cookie: cookies.map((c) => `${c.name}=${c.value}`).join('; '), csrf: csrf ?? '' };
}

/** The refusal reason and block of `credential` at the gate, or 'ok' when it verifies. */
function verdict(gate: CredentialGate, credential: string): string {
  const v = gate.verify(credential);
  if (v.ok) {
    v.credential.dispose();
    return 'ok';
  }
  return `${v.refusal.reason} at block ${String(v.refusal.block)}`;
}

run('revoking a credential from the console', () => {
  let browser: Browser;
  let cw: ConsoleWorld;
  let creds: ConsoleCredentialsWorld;
  let origin: string;
  let alice: { context: BrowserContext; page: Page };
  let bob: { context: BrowserContext; page: Page };

  const post = (path: string, body: unknown, s: Session | null) =>
    fetch(`${origin}${path}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Origin: origin,
        ...(s ? { Cookie: s.cookie, 'X-CSRF-Token': s.csrf } : {}),
      },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  });
  afterAll(async () => {
    await browser.close();
  });
  beforeEach(async () => {
    cw = await makeConsoleWorld({ credentials: true });
    creds = cw.credentials!;
    origin = cw.console.origin.origin;
    alice = await operatorBrowser(browser);
    await enrollAndLogIn(alice.page, await cw.enrollmentLink('alice'), origin);
    bob = await operatorBrowser(browser);
    await enrollAndLogIn(bob.page, await cw.enrollmentLink('bob'), origin);
  });
  afterEach(async () => {
    await alice.context.close();
    await bob.context.close();
    await cw.close();
  });

  it('an admin revokes a narrowed block with the form: it and what derives from it are refused at once here, and in another replica within its poll; the root still verifies', async () => {
    const lib = biscuitLib();
    const rootPublic = rootPublicKey(lib, creds.rootPrivateKey);
    const shopper = narrowCredential(lib, creds.planner.credential, rootPublic, { mode: 'sign_only' });
    const researcher = narrowCredential(lib, shopper.credential, rootPublic, { tools: ['check'] });
    // Another replica: its own set, read from the same ledger every 50 ms.
    const replica = ledgerRevoked({
      ledger: () => Promise.resolve(cw.world.ledger),
      pollMs: 50,
      logger: pino({ level: 'silent' }),
    });
    const replicaGate = credentialGate(creds.config, () => creds.config, replica);
    try {
      await creds.gate.ready();
      await replicaGate.ready();
      expect(verdict(creds.gate, shopper.credential)).toBe('ok');
      expect(verdict(replicaGate, researcher.credential)).toBe('ok');

      await open(alice.page, null);
      await alice.page
        .getByRole('combobox', { name: 'revocation id or issued root name to revoke' })
        .fill(shopper.revocationId);
      // What an operator pastes (maybe from an agent's words) is shown as text, never as markup.
      await alice.page.getByRole('textbox', { name: 'reason to revoke' }).fill('leaked <b>in a log</b>');
      await alice.page.getByRole('button', { name: 'Revoke' }).click();
      const row = alice.page.locator(`[data-revocation="${shopper.revocationId}"]`);
      await row.waitFor();
      expect(await row.innerText()).toContain('leaked <b>in a log</b>');
      expect(await row.innerText()).toContain('operator:alice');
      await screenshot(alice.page, 'admin-console-credential-revoked');

      // This process: at once, with no poll since (its set polls once an hour).
      expect(verdict(creds.gate, shopper.credential)).toBe('revoked at block 1');
      expect(verdict(creds.gate, researcher.credential)).toBe('revoked at block 1');
      expect(verdict(creds.gate, creds.planner.credential)).toBe('ok');
      // The other replica: once its poll has read the ledger.
      const deadline = Date.now() + 10_000;
      while (verdict(replicaGate, researcher.credential) === 'ok' && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      expect(verdict(replicaGate, researcher.credential)).toBe('revoked at block 1');

      const [entry] = await cw.world.ledger.tail(1);
      expect(entry).toMatchObject({
        command: 'revoke',
        key: '*',
        summary: 'leaked <b>in a log</b>',
        detail: `credential block ${shopper.revocationId} by operator:alice`,
      });
      expect(await cw.world.ledger.verify()).toMatchObject({ ok: true });
    } finally {
      replica.close();
    }
  });

  it('an approver cannot revoke, nor a request without the CSRF token; an admin revokes an issued root by name', async () => {
    await creds.gate.ready();
    // The approver's page offers no form, and the API refuses his session.
    await open(bob.page, null);
    await bob.page.locator('#credentials').waitFor();
    expect(await bob.page.locator('[data-revoke]').count()).toBe(0);
    const bobs = await sessionOf(bob.context, bob.page);
    const refused = await post('/api/credentials/revoke', { target: 'planner', reason: 'x' }, bobs);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: string }).error).toMatch(/only an operator with role admin/);
    const alices = await sessionOf(alice.context, alice.page);
    const noCsrf = await post('/api/credentials/revoke', { target: 'planner', reason: 'x' }, { ...alices, csrf: '' });
    expect(noCsrf.status).toBe(403);
    expect(await cw.world.ledger.listCredentialRevocations()).toEqual([]);
    expect(verdict(creds.gate, creds.planner.credential)).toBe('ok');

    // A name the config does not issue, and no reason: refused, nothing recorded.
    const unknown = await post('/api/credentials/revoke', { target: 'stranger', reason: 'x' }, alices);
    expect(unknown.status).toBe(404);
    const noReason = await post('/api/credentials/revoke', { target: 'planner', reason: ' ' }, alices);
    expect(noReason.status).toBe(400);
    expect(await cw.world.ledger.listCredentialRevocations()).toEqual([]);

    const revoked = await post('/api/credentials/revoke', { target: 'planner', reason: 'planner retired' }, alices);
    expect(revoked.status).toBe(200);
    expect(await revoked.json()).toMatchObject({
      revocation_id: creds.planner.revocationId,
      name: 'planner',
      by: 'operator:alice',
    });
    expect(verdict(creds.gate, creds.planner.credential)).toBe('revoked at block 0');
  });
});
