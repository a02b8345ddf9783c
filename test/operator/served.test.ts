/**
 * The console as an operator meets it: the built service started with `serve.operator` prints the console's address;
 * the built CLI's `operator enroll` prints a link to it; the listener serves its pages under a strict CSP with
 * HttpOnly SameSite=Strict cookies and @simplewebauthn/browser from node_modules; in chromium the link registers a
 * passkey and logs in; `operator list` shows it and `operator revoke` ends the session.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import YAML from 'yaml';
import { newToken, tokenSha256 } from '../../src/http/bearer-tokens';
import { stopChild, killOnExit } from '../support/children';
import { BIN, assertBuilt, run, spawnBin, waitForOutput } from '../support/cli';
import { makeWorld, worldConfigDocument, type World } from '../support/world';
import { CHROMIUM, chromiumInstalled, enrollAndLogIn, operatorBrowser } from './support';
import { freePort } from '../support/ports';

let world: World;
let service: ChildProcess | undefined;
let configFile: string;
let origin: string;

beforeAll(async () => {
  assertBuilt(BIN.serve, BIN.signer);
  world = await makeWorld({ keys: { vault: { approval: 'confirm' } } });
  const port = await freePort();
  const doc = worldConfigDocument(world, {
    serve: {
      listen: '127.0.0.1:0',
      metrics: null,
      tokens: [{ name: 'agent', sha256: tokenSha256(newToken()), keys: ['vault'] }],
      operator: { listen: `127.0.0.1:${String(port)}` },
    },
    operators: [{ name: 'carol', role: 'approver' }],
  });
  configFile = path.join(world.dir, 'config.yaml');
  fs.writeFileSync(configFile, YAML.stringify(doc), { mode: 0o600 });
  service = spawnBin(BIN.serve, ['--config', configFile], { SIGNER_LOG_PRETTY: '0' });
  killOnExit(service);
  const banner = await waitForOutput(service, /operator console: (http:\/\/localhost:\d+)\//, 'stderr', 60_000);
  origin = /operator console: (http:\/\/localhost:\d+)\//.exec(banner)?.[1] ?? '';
  expect(origin).toBe(`http://localhost:${String(port)}`);
}, 90_000);

afterAll(async () => {
  if (service) await stopChild(service, 'SIGTERM');
  await world.close();
});

test('the listener serves its pages with a strict CSP and locked-down cookies, and the browser library', async () => {
  const login = await fetch(`${origin}/login`);
  expect(login.status).toBe(200);
  expect(login.headers.get('content-security-policy')).toBe(
    "default-src 'none';script-src 'self';style-src 'self';img-src 'self';connect-src 'self';form-action 'self';frame-ancestors 'none';base-uri 'none'",
  );
  const cookies = login.headers.getSetCookie();
  expect(cookies.map((c) => c.split('=')[0]).sort()).toEqual(['console.csrf', 'console.session']);
  for (const c of cookies) expect(c).toMatch(/; HttpOnly; SameSite=Strict/);
  const library = await fetch(`${origin}/assets/webauthn/index.js`);
  expect(library.status).toBe(200);
  expect(library.headers.get('content-type')).toMatch(/javascript/);
  expect(await library.text()).toContain("export * from './methods/startAuthentication.js'");
  expect((await fetch(`${origin}/`, { redirect: 'manual' })).status).toBe(303);
});

test('operator enroll prints a one-time link to the console; an operator not in the config gets none', async () => {
  const enrolled = await run(BIN.signer, ['--config', configFile, 'operator', 'enroll', 'carol']);
  expect(enrolled.code).toBe(0);
  expect(enrolled.stdout).toMatch(new RegExp(`^${origin}/enroll#[A-Za-z0-9_-]{43}\\n$`));
  expect(enrolled.stderr).toMatch(/one-time enrollment link for operator carol \(approver\), usable once until /);
  const stranger = await run(BIN.signer, ['--config', configFile, 'operator', 'enroll', 'mallory']);
  expect(stranger.code).toBe(1);
  expect(stranger.stderr).toMatch(/no operator "mallory" under operators in the config/);
});

(chromiumInstalled() ? test : test.skip)(
  `the printed link registers a passkey in chromium; operator list shows it; operator revoke ends the session (needs ${CHROMIUM})`,
  async () => {
    const link = (await run(BIN.signer, ['--config', configFile, 'operator', 'enroll', 'carol'])).stdout.trim();
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
    try {
      const carol = await operatorBrowser(browser);
      await enrollAndLogIn(carol.page, link, origin);
      await carol.page.getByText('No sign is waiting for an operator.').waitFor();
      const listed = await run(BIN.signer, ['--config', configFile, 'operator', 'list']);
      expect(listed.stdout).toMatch(/^carol {2}approver {2}1 passkey\(s\)\n {4}\S+ {2}enrolled \S+ {2}last used \S+/);
      const revoked = await run(BIN.signer, ['--config', configFile, 'operator', 'revoke', 'carol']);
      expect(revoked.stderr).toMatch(
        /^revoked carol: removed 1 passkey\(s\), their unused enrollment links and 1 console session\(s\)/,
      );
      const after = await run(BIN.signer, ['--config', configFile, 'operator', 'list']);
      expect(after.stdout).toMatch(/^carol {2}approver {2}0 passkey\(s\) {2}revoked \S+ \(its votes do not count/m);
      // The open page finds out by itself: its next look at the pending list is refused (401) and it goes to the
      // login page. A goto of ours meanwhile would race that navigation, so the test waits for it first.
      await carol.page.waitForURL(`${origin}/login`);
      // And the session cookie no longer opens the console.
      await carol.page.goto(`${origin}/`);
      await carol.page.waitForURL(`${origin}/login`);
    } finally {
      await browser.close();
    }
  },
);

(chromiumInstalled() ? test : test.skip)(
  `a reload adds an operator who can enroll at once, and removing them ends their session, with no restart (needs ${CHROMIUM})`,
  async () => {
    const doc = YAML.parse(fs.readFileSync(configFile, 'utf8')) as { operators: { name: string; role: string }[] };
    const write = (operators: { name: string; role: string }[]): void =>
      fs.writeFileSync(configFile, YAML.stringify({ ...doc, operators }), { mode: 0o600 });
    write([...doc.operators, { name: 'dave', role: 'approver' }]);
    const added = await run(BIN.signer, ['--config', configFile, 'reload']);
    expect(added.code).toBe(0);
    // vault names no approvers, so every operator approves it: dave too, from now on.
    expect(added.stdout).toMatch(/applied: keys\.vault\.approvals changed; \+operator dave\n/);

    const link = (await run(BIN.signer, ['--config', configFile, 'operator', 'enroll', 'dave'])).stdout.trim();
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
    try {
      const dave = await operatorBrowser(browser);
      await enrollAndLogIn(dave.page, link, origin);
      await dave.page.getByText('No sign is waiting for an operator.').waitFor();

      write(doc.operators);
      const removed = await run(BIN.signer, ['--config', configFile, 'reload']);
      expect(removed.code).toBe(0);
      expect(removed.stdout).toMatch(/applied: keys\.vault\.approvals changed; -operator dave\n/);
      // As after a revoke: the open page goes to the login page by itself, then / no longer opens for the cookie.
      await dave.page.waitForURL(`${origin}/login`);
      await dave.page.goto(`${origin}/`);
      await dave.page.waitForURL(`${origin}/login`);
      const entries = await world.ledger.tail(10);
      expect(entries.filter((e) => e.command === 'reload').map((e) => e.summary)).toEqual([
        'keys.vault.approvals changed; +operator dave',
        'keys.vault.approvals changed; -operator dave',
      ]);
    } finally {
      await browser.close();
      write(doc.operators);
    }
  },
);

(chromiumInstalled() ? test : test.skip)(
  `a reload that removes an operator ends their logins: a saved cookie opens nothing, even once the name is back (needs ${CHROMIUM})`,
  async () => {
    const doc = YAML.parse(fs.readFileSync(configFile, 'utf8')) as { operators: { name: string; role: string }[] };
    const write = (operators: { name: string; role: string }[]): void =>
      fs.writeFileSync(configFile, YAML.stringify({ ...doc, operators }), { mode: 0o600 });
    const withEve = [...doc.operators, { name: 'eve', role: 'approver' }];
    const reload = async (operators: { name: string; role: string }[]) => {
      write(operators);
      expect((await run(BIN.signer, ['--config', configFile, 'reload'])).code).toBe(0);
    };
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
    try {
      await reload(withEve);
      const link = (await run(BIN.signer, ['--config', configFile, 'operator', 'enroll', 'eve'])).stdout.trim();
      const eve = await operatorBrowser(browser);
      await enrollAndLogIn(eve.page, link, origin);
      const cookie = (await eve.context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
      // The browser is closed: no request of eve's reaches the console while she is not configured.
      await eve.context.close();
      const replay = async () => (await fetch(`${origin}/api/pending`, { headers: { Cookie: cookie } })).status;
      expect(await replay()).toBe(200);
      await reload(doc.operators);
      await reload(withEve);
      expect(await replay()).toBe(401);
    } finally {
      await browser.close();
      write(doc.operators);
      await run(BIN.signer, ['--config', configFile, 'reload']);
    }
  },
);
