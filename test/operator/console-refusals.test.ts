/**
 * What the operator listener refuses, against the real listener (fetch) with real passkey assertions made in chromium
 * by a virtual authenticator: an assertion made for another approval, a replayed one, a session cookie without one,
 * a request without its CSRF token or from another Origin, an expired or reused enrollment link, an agent's bearer
 * token here and an operator's cookie on /mcp. After each, nothing is approved.
 */
import request from 'supertest';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { ApprovalRecord, ApprovalRequest } from '../../src/ledger/types';
import { createEnrollment } from '../../src/operator/enrollment';
import { enrollmentUrl } from '../../src/operator/origin';
import { nowSeconds } from '../../src/util/time';
import { TOKEN, makeApp, serveConfig } from '../http/support';
import { SYSTEM_PROGRAM } from '../../src/solana/programs';
import { randomAddress } from '../support/payloads';
import {
  ARTEFACTS,
  CHROMIUM,
  chromiumInstalled,
  enrollAndLogIn,
  makeConsoleWorld,
  OPERATORS,
  open,
  operatorBrowser,
  type ConsoleWorld,
} from './support';

const run = chromiumInstalled() ? describe : describe.skip;
if (!chromiumInstalled())
  console.warn(`skipped: the console's refusal tests need Debian's chromium at ${CHROMIUM} (apt-get install chromium)`);

interface Session {
  cookie: string;
  csrf: string;
}

/** The cookies and CSRF token of a logged-in page, as an attacker who stole them (or a script of ours) would send. */
async function sessionOf(context: BrowserContext, page: Page): Promise<Session> {
  const cookies = await context.cookies();
  const csrf = await page.locator('meta[name="csrf-token"]').getAttribute('content');
  return { cookie: cookies.map((c) => `${c.name}=${c.value}`).join('; '), csrf: csrf ?? '' };
}

/**
 * In the operator's page: asks for a ceremony's options at `path` (with `body`) and has the virtual authenticator
 * sign them. The code runs in the browser (a string: this project's types have no DOM).
 */
async function assertionAt(page: Page, path: string, body: unknown): Promise<{ nonce: string; response: unknown }> {
  const script = `(async () => {
    const webauthn = await import('/assets/webauthn/index.js');
    const csrf = document.querySelector('meta[name="csrf-token"]').getAttribute('content');
    const res = await fetch(${JSON.stringify(path)}, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
      body: ${JSON.stringify(JSON.stringify(body))},
    });
    const asked = await res.json();
    return { nonce: asked.nonce, response: await webauthn.startAuthentication({ optionsJSON: asked.options }) };
  })()`;
  return page.evaluate<{ nonce: string; response: unknown }>(script);
}

/** A decision's assertion, made in the operator's page. */
const assertionFor = (page: Page, id: string, decision: 'approved' | 'rejected') =>
  assertionAt(page, `/api/approvals/${encodeURIComponent(id)}/options`, { decision });

/** A resume's assertion, made in the operator's page. */
const resumeAssertionFor = (page: Page, key: string) =>
  assertionAt(page, `/api/keys/${encodeURIComponent(key)}/resume/options`, {});

run('operator listener refusals', () => {
  let browser: Browser;
  let cw: ConsoleWorld;
  let origin: string;
  let alice: { context: BrowserContext; page: Page };
  let session: Session;

  const pending = async (extra: Partial<ApprovalRequest> = {}): Promise<ApprovalRecord> =>
    cw.world.ledger.createApproval({
      key: 'vault',
      summary: 'buy a ship',
      payload_hash: 'cd'.repeat(32),
      balance_change: -1_000_000,
      fee: 5_000,
      compute_units: 150,
      requested_by: 'token:agent',
      ts: nowSeconds(),
      expires_at: nowSeconds() + 300,
      ...extra,
    });
  const post = (path: string, body: unknown, s: Session | null, headers: Record<string, string> = {}) =>
    fetch(`${origin}${path}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Origin: origin,
        ...(s ? { Cookie: s.cookie, 'X-CSRF-Token': s.csrf } : {}),
        ...headers,
      },
      body: JSON.stringify(body),
    });
  const statusOf = async (id: string) => (await cw.world.ledger.getApproval(id))?.status;

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  });
  afterAll(async () => {
    await browser.close();
  });
  beforeEach(async () => {
    cw = await makeConsoleWorld();
    origin = cw.console.origin.origin;
    alice = await operatorBrowser(browser);
    await enrollAndLogIn(alice.page, await cw.enrollmentLink('alice'), origin);
    session = await sessionOf(alice.context, alice.page);
  });
  afterEach(async () => {
    await alice.context.close();
    await cw.close();
  });

  it('an assertion made for another approval decides neither', async () => {
    const a = await pending();
    const b = await pending();
    const forA = await assertionFor(alice.page, a.id, 'approved');
    const forB = await assertionFor(alice.page, b.id, 'approved');
    // A's assertion with B's nonce: the challenge it signed is not B's.
    const crossed = await post(
      `/api/approvals/${b.id}/decide`,
      { decision: 'approved', nonce: forB.nonce, response: forA.response },
      session,
    );
    expect(crossed.status).toBe(403);
    expect(((await crossed.json()) as { error: string }).error).toMatch(/does not verify/);
    // A's assertion with its own nonce, sent to B: the nonce was given for A.
    const moved = await post(
      `/api/approvals/${b.id}/decide`,
      { decision: 'approved', nonce: forA.nonce, response: forA.response },
      session,
    );
    expect(moved.status).toBe(403);
    // The approve assertion sent as a reject: the decision is part of the challenge.
    const flipped = await post(
      `/api/approvals/${a.id}/decide`,
      { decision: 'rejected', nonce: forA.nonce, response: forA.response },
      session,
    );
    expect(flipped.status).toBe(403);
    expect([await statusOf(a.id), await statusOf(b.id)]).toEqual(['pending', 'pending']);
  });

  it('a replayed assertion is refused: used once, it decides nothing more, here or on another approval', async () => {
    const a = await pending();
    const signed = await assertionFor(alice.page, a.id, 'rejected');
    const first = await post(`/api/approvals/${a.id}/decide`, { decision: 'rejected', ...signed }, session);
    expect(first.status).toBe(200);
    expect(await statusOf(a.id)).toBe('rejected');
    const again = await post(`/api/approvals/${a.id}/decide`, { decision: 'rejected', ...signed }, session);
    expect(again.status).toBe(403);
    expect(((await again.json()) as { error: string }).error).toMatch(/nonce is used already/);
    const b = await pending();
    const fresh = await assertionFor(alice.page, b.id, 'rejected');
    const replayed = await post(
      `/api/approvals/${b.id}/decide`,
      { decision: 'rejected', nonce: fresh.nonce, response: signed.response },
      session,
    );
    expect(replayed.status).toBe(403);
    expect(await statusOf(b.id)).toBe('pending');
  });

  it("an operator who is not one of the key's approvers cannot vote, even with a good assertion", async () => {
    const a = await cw.world.ledger.createApproval({
      key: 'fleet',
      summary: 'refit',
      payload_hash: 'ef'.repeat(32),
      balance_change: -1_000_000,
      fee: 5_000,
      compute_units: 150,
      requested_by: 'token:agent',
      ts: nowSeconds(),
      expires_at: nowSeconds() + 300,
      approvers: ['bob'],
    });
    const signed = await assertionFor(alice.page, a.id, 'approved');
    const vote = await post(`/api/approvals/${a.id}/decide`, { decision: 'approved', ...signed }, session);
    expect(vote.status).toBe(403);
    expect(((await vote.json()) as { error: string }).error).toMatch(/"alice" is not an approver/);
    expect(await cw.world.ledger.getApproval(a.id)).toMatchObject({ status: 'pending', votes: [] });
  });

  it('a session cookie alone cannot decide: without a passkey assertion nothing is approved', async () => {
    const a = await pending();
    const asked = await post(`/api/approvals/${a.id}/options`, { decision: 'approved' }, session);
    expect(asked.status).toBe(200);
    const { nonce } = (await asked.json()) as { nonce: string };
    const none = await post(`/api/approvals/${a.id}/decide`, { decision: 'approved', nonce }, session);
    expect(none.status).toBe(400);
    const forged = await post(
      `/api/approvals/${a.id}/decide`,
      { decision: 'approved', nonce, response: { id: 'made-up', rawId: 'made-up', type: 'public-key', response: {} } },
      session,
    );
    expect(forged.status).toBe(403);
    expect(await statusOf(a.id)).toBe('pending');
  });

  it('a session cookie alone cannot lift a halt, nor an assertion made for another key; the right one can', async () => {
    await cw.world.ledger.halt({ key: 'vault', reason: 'incident', by: 'operator', ts: nowSeconds() });
    const halted = async () => (await cw.world.ledger.getHalt('vault')) !== null;
    expect((await post('/api/keys/vault/resume', {}, session)).status).toBe(400);
    const forged = { id: 'made-up', rawId: 'made-up', type: 'public-key', response: {} };
    const { nonce } = await resumeAssertionFor(alice.page, 'vault');
    expect((await post('/api/keys/vault/resume', { nonce, response: forged }, session)).status).toBe(403);
    const other = await resumeAssertionFor(alice.page, 'fleet');
    expect((await post('/api/keys/vault/resume', other, session)).status).toBe(403);
    expect(await halted()).toBe(true);
    const right = await resumeAssertionFor(alice.page, 'vault');
    const lifted = await post('/api/keys/vault/resume', right, session);
    expect(lifted.status).toBe(200);
    expect(await lifted.json()).toMatchObject({ key: 'vault', resumed: true });
    expect(await halted()).toBe(false);
    // Used once, the same assertion lifts nothing again.
    await cw.world.ledger.halt({ key: 'vault', reason: 'again', by: 'operator', ts: nowSeconds() });
    expect((await post('/api/keys/vault/resume', right, session)).status).toBe(403);
    expect(await halted()).toBe(true);
  });

  it('a state change without its CSRF token, or from another Origin, is refused before it runs', async () => {
    const a = await pending();
    const signed = await assertionFor(alice.page, a.id, 'approved');
    const noToken = await post(
      `/api/approvals/${a.id}/decide`,
      { decision: 'approved', ...signed },
      { cookie: session.cookie, csrf: '' },
    );
    expect(noToken.status).toBe(403);
    expect(((await noToken.json()) as { error: string }).error).toMatch(/CSRF token/);
    const wrongToken = await post(
      `/api/approvals/${a.id}/decide`,
      { decision: 'approved', ...signed },
      { cookie: session.cookie, csrf: 'x' },
    );
    expect(wrongToken.status).toBe(403);
    const elsewhere = await post(`/api/approvals/${a.id}/decide`, { decision: 'approved', ...signed }, session, {
      Origin: 'http://evil.example',
    });
    expect(elsewhere.status).toBe(403);
    expect(((await elsewhere.json()) as { error: string }).error).toMatch(
      /origin "http:\/\/evil.example" is not allowed/,
    );
    // Another port of an allowed host is another origin (SameSite cookies would still travel there).
    const halt = await post('/api/keys/vault/halt', { reason: 'x' }, session, { Origin: 'http://localhost:1' });
    expect(halt.status).toBe(403);
    expect(await statusOf(a.id)).toBe('pending');
    expect(await cw.world.ledger.getHalt('vault')).toBeNull();
    // The same assertion, sent properly, still decides: the refusals above consumed nothing.
    expect((await post(`/api/approvals/${a.id}/decide`, { decision: 'approved', ...signed }, session)).status).toBe(
      200,
    );
  });

  it("an agent's bearer token opens nothing on the operator listener", async () => {
    const a = await pending();
    const page = await fetch(`${origin}/`, { headers: { Authorization: `Bearer ${TOKEN}` }, redirect: 'manual' });
    expect(page.status).toBe(401);
    const api = await post(`/api/approvals/${a.id}/options`, { decision: 'approved' }, null, {
      Authorization: `Bearer ${TOKEN}`,
    });
    expect(api.status).toBe(401);
    const withCookie = await post(`/api/approvals/${a.id}/options`, { decision: 'approved' }, session, {
      Authorization: `Bearer ${TOKEN}`,
    });
    expect(withCookie.status).toBe(401);
    expect(await statusOf(a.id)).toBe('pending');
  });

  it('the pending poll tells a signed-in operator only ids and vote counts, and nobody else anything', async () => {
    const a = await pending();
    const res = await fetch(`${origin}/api/pending`, { headers: { Cookie: session.cookie } });
    expect(res.status).toBe(200);
    const listed = (await res.json()) as unknown[];
    expect(listed).toContainEqual({ id: a.id, votes: 0 });
    for (const item of listed) expect(Object.keys(item as object).sort()).toEqual(['id', 'votes']);
    expect((await fetch(`${origin}/api/pending`)).status).toBe(401);
    const bearer = await fetch(`${origin}/api/pending`, {
      headers: { Cookie: session.cookie, Authorization: `Bearer ${TOKEN}` },
    });
    expect(bearer.status).toBe(401);
  });

  it('a pending approval the policy in force now would refuse shows the approver why on its card', async () => {
    const stranger = randomAddress();
    const refusedNow = await pending({
      payload_hash: 'ef'.repeat(32),
      destinations: [{ address: stranger, lamports: 1_000_000, created: false, owner: SYSTEM_PROGRAM }],
    });
    const fine = await pending();
    await alice.page.goto(`${origin}/`);
    const warning = alice.page.locator(`[data-approval="${refusedNow.id}"] .policy-now`);
    await warning.waitFor();
    expect(await warning.textContent()).toMatch(
      new RegExp(`The policy in force now refuses this\\s*\\(destination_not_allowed\\):.*${stranger}`),
    );
    expect(await alice.page.locator(`[data-approval="${fine.id}"] .policy-now`).count()).toBe(0);
    await alice.page.screenshot({ path: `${ARTEFACTS}/console-policy-now.png`, fullPage: true });
  });

  it("an operator's session cookie opens nothing on /mcp", async () => {
    const mcp = makeApp({ config: serveConfig({}, cw.world.config), engine: cw.world.engine });
    const res = await request(mcp)
      .post('/mcp')
      .set('Cookie', session.cookie)
      .set('X-CSRF-Token', session.csrf)
      .set('Content-Type', 'application/json')
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    expect(res.status).toBe(401);
  });

  it('an enrollment link works once and never after it expired', async () => {
    const used = await cw.enrollmentLink('bob');
    const bob = await operatorBrowser(browser);
    await enrollAndLogIn(bob.page, used, origin);
    const again = await operatorBrowser(browser);
    await open(again.page, used);
    await again.page.getByRole('button', { name: 'Register a passkey' }).click();
    await again.page.getByText(/unknown, used already or expired/).waitFor();
    const { token } = await createEnrollment(cw.world.ledger, 'bob', 1_000, nowSeconds() - 60);
    await open(again.page, enrollmentUrl(cw.console.origin, token));
    await again.page.getByRole('button', { name: 'Register a passkey' }).click();
    await again.page.getByText(/unknown, used already or expired/).waitFor();
    expect((await cw.world.ledger.listPasskeys('bob')).length).toBe(1);
    await bob.context.close();
    await again.context.close();
  });

  it('revoking an operator ends their live session at the next request', async () => {
    const a = await pending();
    expect((await post(`/api/approvals/${a.id}/options`, { decision: 'approved' }, session)).status).toBe(200);
    expect(await cw.world.ledger.revokeOperator('alice', nowSeconds())).toEqual({ passkeys: 1, sessions: 1 });
    expect((await post(`/api/approvals/${a.id}/options`, { decision: 'approved' }, session)).status).toBe(401);
    // The open page's next look at the pending list is refused and it goes to the login page by itself; a reload of
    // ours meanwhile would race that navigation, so the test waits for it, then loads / again.
    await alice.page.waitForURL(`${origin}/login`);
    await alice.page.goto(`${origin}/`);
    await alice.page.waitForURL(`${origin}/login`);
  });

  /** What a saved copy of the session cookie opens now: the pending list (200) or nothing (401). */
  const replay = async (saved: Session) =>
    (await fetch(`${origin}/api/pending`, { headers: { Cookie: saved.cookie } })).status;

  it('logging out ends the session: a saved copy of its cookie opens nothing afterwards, nor can it halt', async () => {
    const saved = session;
    expect(await replay(saved)).toBe(200);
    const out = await post('/api/logout', {}, session);
    expect(out.status).toBe(200);
    expect(await replay(saved)).toBe(401);
    const halt = await post('/api/keys/vault/halt', { reason: 'with a stolen cookie' }, saved);
    expect(halt.status).toBe(401);
    expect(await cw.world.ledger.getHalt('vault')).toBeNull();
  });

  it('logging out in one browser leaves the same operator logged in in another', async () => {
    const other = await operatorBrowser(browser);
    // alice's passkey lives in her first browser's authenticator: the second one enrolls a passkey of its own.
    await enrollAndLogIn(other.page, await cw.enrollmentLink('alice'), origin);
    const second = await sessionOf(other.context, other.page);
    expect((await post('/api/logout', {}, session)).status).toBe(200);
    expect(await replay(session)).toBe(401);
    expect(await replay(second)).toBe(200);
    await other.context.close();
  });

  it('a saved cookie opens nothing after `operator revoke`', async () => {
    const saved = session;
    await cw.world.ledger.revokeOperator('alice', nowSeconds());
    expect(await replay(saved)).toBe(401);
    // Enrolled again (reinstated), alice logs in anew; the old cookie still opens nothing.
    const again = await operatorBrowser(browser);
    await enrollAndLogIn(again.page, await cw.enrollmentLink('alice'), origin);
    expect(await replay(await sessionOf(again.context, again.page))).toBe(200);
    expect(await replay(saved)).toBe(401);
    await again.context.close();
  });

  it('removing the operator by reload ends their session, and it stays ended when the name is configured again', async () => {
    const saved = session;
    cw.setOperators(OPERATORS.filter((o) => o.name !== 'alice'));
    expect(await replay(saved)).toBe(401);
    cw.setOperators(OPERATORS);
    expect(await replay(saved)).toBe(401);
  });

  it('an enrollment cannot finish for an operator a reload removed after the options were fetched: nothing is stored', async () => {
    const link = await cw.enrollmentLink('bob');
    const token = new URL(link).hash.slice(1);
    const bob = await operatorBrowser(browser);
    await open(bob.page, link);
    // The page's own calls, split where the reload comes: the options and the authenticator's answer first.
    const registration = await bob.page.evaluate<unknown>(`(async () => {
      const webauthn = await import('/assets/webauthn/index.js');
      const csrf = document.querySelector('meta[name="csrf-token"]').getAttribute('content');
      const res = await fetch('/api/enroll/options', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
        body: JSON.stringify({ token: ${JSON.stringify(token)} }),
      });
      return webauthn.startRegistration({ optionsJSON: await res.json() });
    })()`);
    cw.setOperators(OPERATORS.filter((o) => o.name !== 'bob'));
    const verified = await bob.page.evaluate<{ status: number; body: unknown }>(`(async () => {
      const csrf = document.querySelector('meta[name="csrf-token"]').getAttribute('content');
      const res = await fetch('/api/enroll/verify', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
        body: JSON.stringify({ token: ${JSON.stringify(token)}, response: ${JSON.stringify(registration)} }),
      });
      return { status: res.status, body: await res.json() };
    })()`);
    expect(verified.status).toBe(403);
    expect(verified.body).toMatchObject({
      reason: 'operator_not_configured',
      error: expect.stringMatching(/operator bob is no longer in the config/) as unknown,
    });
    expect(await cw.world.ledger.listPasskeys('bob')).toEqual([]);
    await bob.context.close();
  });
});
