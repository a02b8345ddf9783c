/**
 * The console's test world: a real engine, ledger and embedded chain (test/support/world.ts) with a `confirm` key,
 * the operator listener started on them on loopback, and Debian's chromium driven by playwright-core with a virtual
 * WebAuthn authenticator per operator (the DevTools protocol's, the stand-in for a person's phone or security key).
 */
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { OperatorConfig, SignerConfig } from '../../src/config/types';
import { biscuitLib } from '../../src/credentials/biscuit-lib';
import { credentialGate, type CredentialGate } from '../../src/credentials/gate';
import { mintRoot, newRootKey } from '../../src/credentials/issue';
import { ledgerRevoked, type LedgerRevoked } from '../../src/credentials/ledger-revoked';
import type { CredentialsConfig } from '../../src/config/types';
import { createEnrollment } from '../../src/operator/enrollment';
import { startOperatorListener, type OperatorListener } from '../../src/operator/listener';
import { enrollmentUrl } from '../../src/operator/origin';
import { nowSeconds } from '../../src/util/time';
import { makeWorld, type World } from '../support/world';
import { SOL_PRICES } from '../support/prices';

export const CHROMIUM = '/usr/bin/chromium';
export const chromiumInstalled = (): boolean => fs.existsSync(CHROMIUM);

/** Where screenshots go as test artefacts. */
export const ARTEFACTS = path.resolve(__dirname, '../../.tmp/console');

export const OPERATORS: OperatorConfig[] = [
  { name: 'alice', role: 'admin' },
  { name: 'bob', role: 'approver' },
  // Configured but never enrolled: the quorum key's third approver, so it needs two of three.
  { name: 'carol', role: 'approver' },
];

export interface ConsoleWorld {
  world: World;
  console: OperatorListener;
  config: SignerConfig;
  /** A fresh one-time enrollment link for the operator. */
  enrollmentLink(operator: string): Promise<string>;
  /**
   * With `credentials`: the service's credentials as serve.ts wires them (a root `planner` for key vault, the
   * console revoking through this process's ledger revocations, and the gate the agents' listener would use).
   */
  credentials: ConsoleCredentialsWorld | null;
  /** The operators from now on, as a reload that applied a config naming these would make them. */
  setOperators(operators: OperatorConfig[]): void;
  close(): Promise<void>;
}

export interface ConsoleCredentialsWorld {
  rootPrivateKey: string;
  /** The issued root `planner` (keys: vault) and its revocation id. */
  planner: { credential: string; revocationId: string };
  config: CredentialsConfig;
  /** This process's revocations read from the ledger (never polled again: only its own writes apply at once). */
  revoked: LedgerRevoked;
  gate: CredentialGate;
}

function consoleCredentials(world: World): ConsoleCredentialsWorld {
  const lib = biscuitLib();
  const root = newRootKey(lib);
  const planner = mintRoot(lib, root.privateKey, { name: 'planner', keys: ['vault'] });
  const file = path.join(world.dir, 'credentials-root.key');
  fs.writeFileSync(file, root.privateKey, { mode: 0o600 });
  const config: CredentialsConfig = {
    root_key: { file },
    issued: [{ name: 'planner', revocation_id: planner.revocationId, keys: ['vault'] }],
    revoked: [],
  };
  // An hour between polls: a refusal seen in this process right after a revocation comes from its own write.
  const revoked = ledgerRevoked({
    ledger: () => Promise.resolve(world.ledger),
    pollMs: 3_600_000,
    logger: pino({ level: 'silent' }),
  });
  return {
    rootPrivateKey: root.privateKey,
    planner: { credential: planner.credential, revocationId: planner.revocationId },
    config,
    revoked,
    gate: credentialGate(config, () => config, revoked),
  };
}

export async function makeConsoleWorld(opts: { credentials?: boolean } = {}): Promise<ConsoleWorld> {
  const world = await makeWorld({
    keys: {
      vault: { approval: 'confirm', class: 'wallet' },
      // A key that needs two of its three approvers.
      fleet: { approval: 'confirm', class: 'wallet', approvals: { required: 2, approvers: ['alice', 'bob', 'carol'] } },
      // A key with dollar caps: $10 a day, an operator above $1 (SOL priced through the embedded chain's Pyth account).
      till: {
        approval: 'confirm',
        class: 'wallet',
        usd: { per_tx: null, per_day: 10_000_000n, approve_above: 1_000_000n },
      },
    },
    prices: SOL_PRICES,
    // Long enough for a person (and a loaded CI machine) to approve; the test decides well within it.
    timings: { approval_timeout_ms: 120_000, approval_poll_ms: 20 },
  });
  const config: SignerConfig = {
    ...world.config,
    operators: OPERATORS,
    serve: {
      ...world.config.serve,
      operator: {
        listen: { host: '127.0.0.1', port: 0 },
        public_url: null,
        session_secret_file: null,
        session_ttl_ms: 900_000,
        enrollment_ttl_ms: 600_000,
      },
    },
  };
  let operators: readonly OperatorConfig[] = OPERATORS;
  const credentials = opts.credentials === true ? consoleCredentials(world) : null;
  const listener = await startOperatorListener({
    config,
    logger: pino({ level: 'silent' }),
    ledger: () => Promise.resolve(world.ledger),
    keys: () => world.engine.keyShow({ principal: world.operator }),
    policyNow: (approval) => world.engine.policyNow(approval),
    treasuries: () => world.engine.treasuryShow(),
    operators: () => operators,
    hooks: () => config.notify?.hooks ?? [],
    halts: {
      halt: (key, reason, name) => world.engine.halt({ key, reason, principal: { kind: 'operator', name } }),
      resume: (key, name) => world.engine.resume(key, `operator:${name}`),
    },
    ...(credentials === null
      ? {}
      : {
          credentials: {
            issued: () => credentials.config.issued,
            revoke: (rec) => credentials.revoked.revoke(rec),
            list: () => credentials.revoked.list(),
          },
        }),
  });
  return {
    world,
    console: listener,
    config,
    credentials,
    setOperators(next) {
      operators = next;
    },
    async enrollmentLink(operator) {
      const { token } = await createEnrollment(world.ledger, operator, 600_000, nowSeconds());
      return enrollmentUrl(listener.origin, token);
    },
    async close() {
      await new Promise((r) => listener.server.close(r));
      listener.server.closeAllConnections();
      credentials?.revoked.close();
      await world.close();
    },
  };
}

/** A browser context with its own virtual authenticator: one operator's browser and device. */
export async function operatorBrowser(browser: Browser): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { context, page };
}

/** Opens a console URL (or reloads the page) and waits until its script has made the buttons work. */
export async function open(page: Page, url: string | null): Promise<void> {
  if (url === null) await page.reload();
  else await page.goto(url);
  await page.locator('body[data-ready="true"]').waitFor();
}

/**
 * Opens the link, registers a passkey, then logs in with it: the console's first page is open afterwards. With
 * `shots`, the enrollment and login pages are saved as screenshots under that prefix.
 */
export async function enrollAndLogIn(page: Page, link: string, origin: string, shots?: string): Promise<void> {
  await open(page, link);
  await page.getByRole('button', { name: 'Register a passkey' }).click();
  await page.getByText(/Passkey registered for operator/).waitFor();
  if (shots !== undefined) await screenshot(page, `${shots}enroll`);
  await open(page, `${origin}/login`);
  if (shots !== undefined) await screenshot(page, `${shots}login`);
  await page.getByRole('button', { name: 'Log in with a passkey' }).click();
  await page.waitForURL(`${origin}/`);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(ARTEFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTEFACTS, `${name}.png`), fullPage: true });
}
