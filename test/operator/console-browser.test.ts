/**
 * The operator console in a real browser: Debian's chromium (playwright-core) with a virtual WebAuthn authenticator
 * per operator. Two operators enroll with one-time links and log in with their passkeys; a sign of a `confirm` key
 * waits; the console shows what the signer computed above the agent's words; one operator approves with the passkey
 * and the transaction confirms on the embedded chain; another sign is rejected and refused. Screenshots go to
 * .tmp/console/ (docs/console/ keeps copies).
 */
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import type { Report } from '../../src/signer/report';
import type { SignProgress } from '../../src/signer/types';
import { approvalId } from '../support/async';
import {
  chromiumInstalled,
  CHROMIUM,
  enrollAndLogIn,
  makeConsoleWorld,
  open,
  operatorBrowser,
  screenshot,
  type ConsoleWorld,
} from './support';
import { setSolPrice } from '../support/prices';

const run = chromiumInstalled() ? describe : describe.skip;
if (!chromiumInstalled())
  console.warn(`skipped: the console's browser tests need Debian's chromium at ${CHROMIUM} (apt-get install chromium)`);

/**
 * Waits until the page shows approval `id` by itself (the page polls and renders anew, no reload by hand) with its
 * script ready, and returns its card.
 */
async function cardShown(page: Page, id: string, text?: string): Promise<Locator> {
  const card = page.locator(`[data-approval="${id}"]`);
  await (text === undefined ? card : card.getByText(text)).waitFor();
  await page.locator('body[data-ready="true"]').waitFor();
  return card;
}

/** Starts a sign of `key` that waits for an operator: its approval's id, and its report to come. */
async function waitingSign(
  cw: ConsoleWorld,
  key: string,
  lamports: number,
  summary: string,
): Promise<{ id: string; report: Promise<Report> }> {
  const events: SignProgress[] = [];
  const report = cw.world.engine.sign({
    payload: cw.world.transfer(key, lamports, summary),
    principal: cw.world.operator,
    onProgress: (p) => events.push(p),
  });
  return { id: await approvalId(events), report };
}

/** Waits until the tab's title is `title` (the page's CSP allows no string evaluation: a function runs there). */
async function titleBecomes(page: Page, title: string): Promise<void> {
  await page.waitForFunction(
    (t) => (globalThis as unknown as { document: { title: string } }).document.title === t,
    title,
  );
}

run('operator console in chromium', () => {
  let browser: Browser;
  let cw: ConsoleWorld;

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  });
  afterAll(async () => {
    await browser.close();
  });
  beforeEach(async () => {
    cw = await makeConsoleWorld();
  });
  afterEach(async () => {
    await cw.close();
  });

  it('two operators enroll and log in; one approves a pending sign with the passkey and it confirms; a reject refuses; a 2-of-3 key needs two', async () => {
    const origin = cw.console.origin.origin;
    const alice = await operatorBrowser(browser);
    const bob = await operatorBrowser(browser);
    await enrollAndLogIn(alice.page, await cw.enrollmentLink('alice'), origin, '');
    await enrollAndLogIn(bob.page, await cw.enrollmentLink('bob'), origin);
    expect((await cw.world.ledger.listPasskeys()).map((p) => p.operator)).toEqual(['alice', 'bob']);
    await alice.page.getByText('No sign is waiting for an operator.').waitFor();

    // A sign of the confirm key waits for an operator.
    const summary = 'Pay the shipyard <script>alert(1)</script>\u202e 0.0015 SOL';
    const { id, report: signing } = await waitingSign(cw, 'vault', 1_500_000, summary);

    // The open page shows it by itself.
    const card = await cardShown(alice.page, id);
    const text = await card.innerText();
    // The signer's figures: the key's SOL change (transfer + fee), the destination, the program, fee and fee payer.
    expect(text).toContain('-1505000 lamports (-0.001505 SOL)');
    expect(text).toContain(`${cw.world.keys.vault!.destination}: +1500000 lamports (0.0015 SOL)`);
    expect(text).toContain('11111111111111111111111111111111');
    expect(text).toContain('5000 lamports (0.000005 SOL)');
    expect(text).toContain(cw.world.keys.vault!.pubkey);
    expect(text).toMatch(/\d+ s left/);
    // The agent's words come after the figures, escaped (a tag is text, the bidi override a visible escape).
    expect(text.indexOf("The agent's own words")).toBeGreaterThan(text.indexOf('SOL change of the key'));
    expect(text).toContain('Pay the shipyard <script>alert(1)</script>\\u202e 0.0015 SOL');
    expect(await card.locator('script').count()).toBe(0);
    await screenshot(alice.page, 'pending-approval');

    await card.getByRole('button', { name: 'Approve with passkey' }).click();
    const report = await signing;
    expect(report.outcome).toBe('confirmed');
    const decided = await cw.world.ledger.getApproval(id);
    expect(decided).toMatchObject({ status: 'approved', decided_by: 'alice' });
    // The vote records the passkey that signed it.
    const [alicePasskey] = await cw.world.ledger.listPasskeys('alice');
    expect(decided?.votes).toEqual([
      expect.objectContaining({ operator: 'alice', decision: 'approved', credential: alicePasskey!.credential_id }),
    ]);
    await alice.page.getByText('No sign is waiting for an operator.').waitFor();
    await screenshot(alice.page, 'console-after-approval');

    // A second sign, rejected by the other operator: the sign is refused and nothing is sent.
    const { id: secondId, report: second } = await waitingSign(cw, 'vault', 2_000_000, 'second payment');
    await (await cardShown(bob.page, secondId)).getByRole('button', { name: 'Reject with passkey' }).click();
    const refused = await second;
    expect(refused).toMatchObject({ outcome: 'refused', failed_check: 'approval', signature: null });
    expect(refused.detail).toContain(`an operator rejected request ${secondId}`);
    expect(JSON.stringify(refused)).not.toContain('bob');
    await bob.page.getByText('No sign is waiting for an operator.').waitFor();
    await screenshot(bob.page, 'approver-console');

    // A 2-of-3 key: alice's approval alone does not send; bob's completes the quorum and the sign confirms.
    const { id: quorumId, report: both } = await waitingSign(cw, 'fleet', 3_000_000, 'refit the fleet');
    const aliceCard = await cardShown(alice.page, quorumId);
    expect(await aliceCard.innerText()).toContain('2 of alice, bob, carol; votes so far: none');
    await aliceCard.getByRole('button', { name: 'Approve with passkey' }).click();
    await alice.page
      .locator(`[data-approval="${quorumId}"]`)
      .getByText('You approved; waiting for the other approvers.')
      .waitFor();
    expect(await cw.world.ledger.getApproval(quorumId)).toMatchObject({ status: 'pending' });
    // Bob's open page shows alice's vote by itself.
    const bobCard = await cardShown(bob.page, quorumId, 'votes so far: alice approved');
    await screenshot(bob.page, 'quorum-second-approver');
    await bobCard.getByRole('button', { name: 'Approve with passkey' }).click();
    expect((await both).outcome).toBe('confirmed');
    const voted = await cw.world.ledger.getApproval(quorumId);
    expect(voted).toMatchObject({ status: 'approved', decided_by: 'alice, bob' });
    const passkeys = await cw.world.ledger.listPasskeys();
    expect(voted?.votes.map((v) => [v.operator, v.credential])).toEqual(
      passkeys.map((p) => [p.operator, p.credential_id]),
    );

    // The admin halts the key from the console and resumes it; the audit log records both with her name. Her page
    // has shown the decided quorum by itself first, so nothing reloads it meanwhile.
    await alice.page.getByText('No sign is waiting for an operator.').waitFor();
    await open(alice.page, null);
    await alice.page.getByRole('textbox', { name: 'reason to halt vault' }).fill('suspicious spend');
    await alice.page.getByRole('button', { name: 'Halt vault' }).click();
    await alice.page.getByRole('button', { name: 'Resume vault' }).waitFor();
    await screenshot(alice.page, 'admin-console-halted');
    await alice.page.getByRole('button', { name: 'Resume vault' }).click();
    await alice.page.getByRole('button', { name: 'Halt vault' }).waitFor();
    const tail = await cw.world.ledger.tail(2);
    expect(tail.map((e) => [e.command, e.detail])).toEqual([
      ['halt', 'by operator:alice'],
      ['resume', 'by operator:alice'],
    ]);
    expect(await alice.page.locator('.verdict-ok').innerText()).toMatch(
      /^audit verify as of (just now|\d+ s ago): ok, \d+ entries, chain and head record agree \(the chain is walked again at most once a minute\)$/,
    );
    // No webhooks in this world: the delivery state says so; a notification waiting in the outbox is listed.
    expect(await alice.page.locator('#notifications').innerText()).toMatch(/0 pending, 0 delivered, 0 failed/);
    const now = Date.now();
    await cw.world.ledger.enqueueNotifications([
      {
        id: 'msg_console',
        hook: 'hooks.example-1a2b',
        event: 'key.halted',
        key: 'vault',
        body: '{}',
        created_at: now,
        next_at: now,
      },
    ]);
    await open(alice.page, null);
    const deliveries = await alice.page.locator('#notifications').innerText();
    expect(deliveries).toMatch(/1 pending, 0 delivered, 0 failed/);
    expect(deliveries).toMatch(/key\.halted\s+vault\s+hooks\.example-1a2b\s+pending/);
    await screenshot(alice.page, 'admin-console');

    // The approver may not halt: the console offers no such button.
    await open(bob.page, null);
    expect(await bob.page.getByRole('button', { name: 'Halt vault' }).count()).toBe(0);
    expect(await bob.page.getByRole('button', { name: 'Halt fleet' }).count()).toBe(0);
    await alice.context.close();
    await bob.context.close();
  });
  it('a priced key: the key table and the approval card show dollars beside base units; approving spends them', async () => {
    const origin = cw.console.origin.origin;
    const alice = await operatorBrowser(browser);
    await enrollAndLogIn(alice.page, await cw.enrollmentLink('alice'), origin, '');
    setSolPrice(cw.world.localnet, '100');
    const keyRow = alice.page.locator('[data-usd-key="till"]');
    expect((await keyRow.innerText()).split('\t').map((c) => c.trim())).toEqual([
      '',
      'dollars (approval above $1.00)',
      '$10.00 per day',
      '$0.00',
      '$10.00',
      '',
    ]);
    // 0.04 SOL with its fee at $100: $4.00, above the $1.00 approval threshold, so it waits.
    const summary = 'Pay $0.01 only <img src=x onerror=alert(1)>';
    const { id, report: signing } = await waitingSign(cw, 'till', 40_000_000 - 5000, summary);
    const card = await cardShown(alice.page, id);
    const text = await card.innerText();
    expect(text).toMatch(/dollar value\s+\$4\.00 \(what leaves the key, at price \+ confidence\)/);
    expect(text).toMatch(/dollars left today\s+\$10\.00 of \$10\.00 \(\$6\.00 after this one\)/);
    expect(text).toContain('-40000000 lamports (-0.04 SOL)');
    // The signer's dollars sit above the agent's own (false) figure, which stays escaped text.
    expect(text.indexOf("The agent's own words")).toBeGreaterThan(text.indexOf('dollar value'));
    expect(text).toContain('Pay $0.01 only <img src=x onerror=alert(1)>');
    expect(await card.locator('img').count()).toBe(0);
    expect(await cw.world.ledger.getApproval(id)).toMatchObject({ usd_value: '4.00' });
    await screenshot(alice.page, 'pending-approval-dollars');

    await card.getByRole('button', { name: 'Approve with passkey' }).click();
    expect(await signing).toMatchObject({ outcome: 'confirmed', usd_value: '4.00', remaining_daily_usd: '6.00' });
    await alice.page.getByText('No sign is waiting for an operator.').waitFor();
    await open(alice.page, null);
    expect(await alice.page.locator('[data-usd-key="till"]').innerText()).toMatch(/\$4\.00\s+\$6\.00/);
    await alice.context.close();
  });

  it('an open page shows a new approval, and one decided elsewhere, by itself; the tab title counts them; it never reloads under a typed halt reason', async () => {
    const origin = cw.console.origin.origin;
    const alice = await operatorBrowser(browser);
    await enrollAndLogIn(alice.page, await cw.enrollmentLink('alice'), origin);
    await alice.page.getByText('No sign is waiting for an operator.').waitFor();
    const title = await alice.page.title();

    const { id, report: signing } = await waitingSign(cw, 'vault', 1_200_000, 'arrives while the page is open');
    await cardShown(alice.page, id);
    await titleBecomes(alice.page, `(1) ${title}`);

    // Decided outside the page (the CLI's way): the card leaves the open page by itself and the sign confirms.
    await cw.world.ledger.decideApproval(id, 'approved', 'alice', Math.floor(Date.now() / 1000));
    expect((await signing).outcome).toBe('confirmed');
    await alice.page.getByText('No sign is waiting for an operator.').waitFor();
    await titleBecomes(alice.page, title);

    // With a halt reason typed, a new approval does not reload the page: the status line says what changed and the
    // reason stays; once the field is empty again the page shows the approval.
    const reason = alice.page.getByRole('textbox', { name: 'reason to halt vault' });
    await reason.fill('half-typed reason');
    const { id: laterId, report: waiting } = await waitingSign(
      cw,
      'vault',
      1_300_000,
      'arrives while a reason is typed',
    );
    await alice.page.getByText('The approvals waiting changed: the page shows them once you are done here.').waitFor();
    expect(await reason.inputValue()).toBe('half-typed reason');
    expect(await alice.page.locator(`[data-approval="${laterId}"]`).count()).toBe(0);
    await reason.fill('');
    await cardShown(alice.page, laterId);
    await cw.world.ledger.decideApproval(laterId, 'rejected', 'alice', Math.floor(Date.now() / 1000));
    expect((await waiting).outcome).toBe('refused');
    await alice.context.close();
  });
});
