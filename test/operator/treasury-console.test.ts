/**
 * The console's treasury section in chromium (docs/treasury.md): a treasury-backed key with two accounts on the
 * embedded chain, one still delegated to the key with 2 of its 5-token plan left (a refill is due below half), one
 * whose delegate the owner revoked. A logged-in operator sees, per account, the allowance the chain holds and the
 * plan for the next period, read from the chain for the page.
 */
import { chromium, type Browser } from 'playwright-core';
import { randomAddress } from '../support/payloads';
import { setMint, setTokenAccount } from '../support/tokens';
import {
  chromiumInstalled,
  CHROMIUM,
  enrollAndLogIn,
  makeConsoleWorld,
  operatorBrowser,
  screenshot,
  type ConsoleWorld,
} from './support';
import { tokenPolicy } from '../signer/policy/fixtures';

const run = chromiumInstalled() ? describe : describe.skip;
if (!chromiumInstalled())
  console.warn(`skipped: the console's browser tests need Debian's chromium at ${CHROMIUM} (apt-get install chromium)`);

const M = 1_000_000n;

run('the console shows each treasury account’s allowance on chain and its plan', () => {
  let browser: Browser;
  let cw: ConsoleWorld;
  const mint = randomAddress();
  const owner = randomAddress(); // the operator's wallet: never needed here, the accounts are written as it left them
  let delegated: string;
  let revoked: string;

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
    cw = await makeConsoleWorld();
    const vault = cw.world.config.keys.find((k) => k.name === 'vault')!;
    setMint(cw.world.localnet, mint, { decimals: 6 });
    delegated = setTokenAccount(cw.world.localnet, {
      mint,
      owner,
      amount: 100n * M,
      delegate: vault.pubkey,
      delegatedAmount: 2n * M,
    });
    revoked = setTokenAccount(cw.world.localnet, { mint, owner, amount: 7n * M });
    const policy = tokenPolicy(mint, { per_day: 5n * M });
    // The engine reads the world's key objects: the treasury is set on them in place, as a reload would.
    vault.tokens = [policy];
    vault.treasury = { owner, accounts: [delegated, revoked], refill_below_percent: 50 };
  });
  afterAll(async () => {
    await cw.close();
    await browser.close();
  });

  it('per account: delegate and delegated amount from the chain, the planned allowance, and a refill due', async () => {
    const alice = await operatorBrowser(browser);
    await enrollAndLogIn(alice.page, await cw.enrollmentLink('alice'), cw.console.origin.origin);
    const section = alice.page.locator('#treasuries');
    await section.waitFor();
    const pubkey = cw.world.keys.vault!.pubkey;
    const row = section.locator(`[data-treasury-account="${delegated}"]`);
    expect(await row.locator('[data-figure="delegated"]').innerText()).toBe('2 (2000000 base units)');
    expect(await row.locator('[data-figure="planned"]').innerText()).toContain('5 (5000000 base units)');
    expect(await row.locator('[data-figure="planned"]').innerText()).toContain('sized by tokens.per_day');
    const text = await row.innerText();
    expect(text).toContain(`the key ${pubkey}`);
    expect(text).toContain(mint);
    expect(text).toContain('refill due (below 2.5 (2500000 base units))');
    const other = await section.locator(`[data-treasury-account="${revoked}"]`).innerText();
    expect(other).toContain('none (revoked): signs are refused');
    expect(other).toContain('0 (0 base units)');
    expect(other).toContain('5 (5000000 base units)');
    expect(other).toContain('approve the plan again');
    expect(await section.innerText()).toContain(`owner ${owner}`);
    await screenshot(alice.page, 'treasury');

    // The owner refills the first account above the threshold: the next page shows it, and no refill is due.
    setTokenAccount(cw.world.localnet, {
      mint,
      owner,
      amount: 100n * M,
      address: delegated,
      delegate: pubkey,
      delegatedAmount: 5n * M,
    });
    await alice.page.reload();
    const refilled = alice.page.locator(`#treasuries [data-treasury-account="${delegated}"]`);
    expect(await refilled.locator('[data-figure="delegated"]').innerText()).toBe('5 (5000000 base units)');
    expect(await refilled.innerText()).toContain('not due (due below 2.5 (2500000 base units))');
  });
});
