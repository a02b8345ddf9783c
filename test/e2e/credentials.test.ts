/**
 * Credentials end to end, in the built service over loopback HTTP with the official MCP client: a root issued by
 * `token new --biscuit`, a child narrowed by `token narrow` (one key, sign_only), a grandchild narrowed in-process
 * through `sa-forge-signer/delegate`. Each signs only as its checks allow, a refusal is a 401 naming the block and
 * the check (never the credential), adding a block never widens, an expired credential is refused on the signer's
 * clock, spend limits are judged on the simulation, and a block revoked by a reload refuses its credential and all
 * narrowed from it at once while the root still works.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import YAML from 'yaml';
import { narrow } from '../../src/client/delegate';
import { until } from '../support/async';
import { stopChild, killOnExit } from '../support/children';
import { assertBuilt, BIN, listeningAddress, run, spawnBin, writeYaml } from '../support/cli';
import { makeWorld, worldConfigDocument, type World } from '../support/world';
import { callWithBearer, reportOf } from '../support/bearer-calls';

let w: World;
let configFile: string;
let service: ChildProcess | null = null;
let address: string;
let rootKeyFile: string;
let rootPublicKey: string;
const issued: { name: string; revocation_id: string; keys: string[] }[] = [];
const cred: Record<string, string> = {};
const ids: Record<string, string> = {};

function writeConfig(revoked: string[] = []): void {
  writeYaml(
    configFile,
    worldConfigDocument(w, {
      serve: {
        listen: '127.0.0.1:0',
        metrics: null,
        credentials: { root_key_file: rootKeyFile, issued, revoked },
      },
    }),
  );
}

async function startService(): Promise<void> {
  service = spawnBin(BIN.serve, ['--config', configFile]);
  killOnExit(service);
  address = await listeningAddress(service, 60_000);
}

async function cli(args: string[]): Promise<string> {
  const r = await run(BIN.signer, ['--config', configFile, ...args]);
  if (r.code !== 0) throw new Error(`sa-forge-signer ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** A tools/call with this credential as bearer, over plain fetch: the status and the JSON body. */
const call = (credential: string, name: string, args: Record<string, unknown>) =>
  callWithBearer(address, credential, name, args);

async function connect(credential: string): Promise<Client> {
  const client = new Client(
    { name: 'credentials-e2e', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`http://${address}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${credential}` } },
    }),
  );
  return client;
}

beforeAll(async () => {
  assertBuilt(BIN.serve, BIN.signer);
  // gamma asks its operator for every sign: a credential is judged again after the wait.
  w = await makeWorld({
    keys: { alpha: {}, beta: {}, gamma: { approval: 'confirm' } },
    // Console revocations read from the ledger every 100 ms (2 s by default).
    timings: { approval_timeout_ms: 60_000, credential_revocation_poll_ms: 100 },
  });
  configFile = path.join(w.dir, 'credentials.yaml');
  rootKeyFile = path.join(w.dir, 'credentials-root.key');
  writeConfig();

  // Issuing creates the root key file, prints the root's revocation id (stdout) and the config lines (stderr).
  const issuedRun = await run(BIN.signer, [
    '--config',
    configFile,
    'token',
    'new',
    'planner',
    '--biscuit',
    '--keys',
    'alpha,beta',
    '--out',
    path.join(w.dir, 'planner.cred'),
  ]);
  expect(issuedRun.code).toBe(0);
  expect(fs.statSync(rootKeyFile).mode & 0o777).toBe(0o600);
  ids.root = issuedRun.stdout.trim();
  expect(ids.root).toMatch(/^[0-9a-f]{128}$/);
  rootPublicKey = /Root public key[^:]*: (ed25519\/[0-9a-f]{64})/.exec(issuedRun.stderr)?.[1] ?? '';
  expect(rootPublicKey).not.toBe('');
  cred.root = fs.readFileSync(path.join(w.dir, 'planner.cred'), 'utf8').trim();
  issued.push({ name: 'planner', revocation_id: ids.root, keys: ['alpha', 'beta'] });
  writeConfig();
  ids.reviewer = await cli([
    'token',
    'new',
    'reviewer',
    '--biscuit',
    '--keys',
    'gamma',
    '--out',
    path.join(w.dir, 'reviewer.cred'),
  ]);
  cred.reviewer = fs.readFileSync(path.join(w.dir, 'reviewer.cred'), 'utf8').trim();
  issued.push({ name: 'reviewer', revocation_id: ids.reviewer, keys: ['gamma'] });

  // The child: one key, sign_only, narrowed by the CLI (offline: no service runs yet).
  ids.child = await cli([
    'token',
    'narrow',
    '--from',
    path.join(w.dir, 'planner.cred'),
    '--keys',
    'alpha',
    '--mode',
    'sign_only',
    '--out',
    path.join(w.dir, 'child.cred'),
  ]);
  cred.child = fs.readFileSync(path.join(w.dir, 'child.cred'), 'utf8').trim();
  // The grandchild, narrowed in the agent's own process: only check and sign, for an hour.
  const grandchild = narrow(cred.child, { rootPublicKey, tools: ['check', 'sign'], ttlSeconds: 3600 });
  cred.grandchild = grandchild.credential;
  ids.grandchild = grandchild.revocationId;

  writeConfig();
  await startService();
}, 120_000);

afterAll(async () => {
  if (service) await stopChild(service, 'SIGTERM');
  await w.close();
});

test('a narrowed credential signs with its key in its mode, through the official MCP client', async () => {
  const client = await connect(cred.child!);
  const tools = await client.listTools();
  expect(tools.tools.map((t) => t.name)).toEqual(['check', 'sign', 'key_show', 'halt']);
  const signed = await client.callTool({
    name: 'sign',
    arguments: { payload: w.transfer('alpha', 1_000_000), key: 'alpha', mode: 'sign_only' },
  });
  expect(signed.isError).toBeFalsy();
  const report = signed.structuredContent as { outcome: string; signature: string };
  expect(report.outcome).toBe('signed');
  // key_show with no key lists what the credential allows, not all its root allows, and the credential's own limits.
  const shown = await client.callTool({ name: 'key_show', arguments: {} });
  const view = shown.structuredContent as { keys: { name: string }[]; credential: Record<string, unknown> };
  expect(view.keys.map((k) => k.name)).toEqual(['alpha']);
  expect(view.credential).toMatchObject({ root: 'planner', block: 1, revocation_id: ids.child, expires_at: null });
  expect(view.credential.blocks).toEqual([
    { block: 0, revocation_id: ids.root, checks: [expect.stringContaining('["alpha", "beta"].contains($k)')] },
    {
      block: 1,
      revocation_id: ids.child,
      checks: [expect.stringContaining('["alpha"].contains($k)'), expect.stringContaining('mode("sign_only")')],
    },
  ]);
  await client.close();

  // The audit entry of the sign names the credential's root and its own block, so sub-agents are told apart.
  const tail = await cli(['audit', 'tail', '-n', '20', '--json']);
  const entry = tail
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { signature: string | null; command: string; detail: string | null })
    .find((e) => e.signature === report.signature);
  expect(entry?.command).toBe('sign-intent');
  expect(entry?.detail).toContain(`by credential "planner", block 1 (revocation id ${ids.child})`);
});

test("another key or the send mode is refused with 401, naming the child's block and check", async () => {
  const otherKey = await call(cred.child!, 'check', { payload: w.transfer('beta', 1_000_000), key: 'beta' });
  expect(otherKey.status).toBe(401);
  expect(otherKey.json).toMatchObject({ code: 'credential_refused', reason: 'check', block: 1 });
  expect(otherKey.json.check).toContain('["alpha"].contains($k)');
  expect(otherKey.text).not.toContain(cred.child!.slice(0, 32));

  const sent = await call(cred.child!, 'sign', { payload: w.transfer('alpha', 1_000_000), key: 'alpha' });
  expect(sent.status).toBe(401);
  expect(sent.json).toMatchObject({ reason: 'check', block: 1 });
  expect(sent.json.check).toContain('mode("sign_only")');

  // The official client sees the refusal as an error, not a result.
  const client = await connect(cred.child!);
  await expect(
    client.callTool({ name: 'sign', arguments: { payload: w.transfer('alpha', 1_000_000), key: 'alpha' } }),
  ).rejects.toThrow();
  await client.close().catch(() => undefined);
});

test('a block cannot widen: naming more keys leaves the parent limits in force', async () => {
  const wider = narrow(cred.child!, { rootPublicKey, keys: ['alpha', 'beta'] });
  const beta = await call(wider.credential, 'check', { payload: w.transfer('beta', 1_000_000), key: 'beta' });
  expect(beta.status).toBe(401);
  expect(beta.json).toMatchObject({ reason: 'check', block: 1 });
  // The root still has both keys.
  const root = await call(cred.root!, 'check', { payload: w.transfer('beta', 1_000_000), key: 'beta' });
  expect(root.status).toBe(200);
});

test("a grandchild keeps its parents' limits and its own, and expires on the signer's clock", async () => {
  const keyShow = await call(cred.grandchild!, 'key_show', { key: 'alpha' });
  expect(keyShow.status).toBe(401);
  expect(keyShow.json).toMatchObject({ reason: 'check', block: 2 });
  const checked = await call(cred.grandchild!, 'check', { payload: w.transfer('alpha', 1_000_000), key: 'alpha' });
  expect(checked.status).toBe(200);

  const expired = narrow(cred.grandchild!, { rootPublicKey, expiresAt: new Date(Date.now() - 1000) });
  const late = await call(expired.credential, 'check', { payload: w.transfer('alpha', 1_000_000), key: 'alpha' });
  expect(late.status).toBe(401);
  expect(late.json).toMatchObject({ reason: 'check', block: 3 });
  expect(late.json.check).toMatch(/^check if time\(\$t\), \$t <= /);
});

test("spend limits are judged on the simulation's figures, naming the block that refused", async () => {
  const alpha = w.keys.alpha!;
  const capped = narrow(cred.root!, {
    rootPublicKey,
    keys: ['alpha'],
    perTxLamports: 1_500_000,
    destinations: [alpha.destination],
  });
  expect(reportOf(await call(capped.credential, 'check', { payload: w.transfer('alpha', 1_000_000) }))).toMatchObject({
    outcome: 'ok',
  });
  const shown = reportOf(await call(capped.credential, 'key_show', {}));
  expect(shown.credential).toMatchObject({ block: 1, revocation_id: capped.revocationId, per_tx_lamports: 1_500_000 });
  // A later block's tighter limit is the one shown; the earliest expiry likewise.
  const tighter = narrow(capped.credential, { rootPublicKey, perTxLamports: 700_000, ttlSeconds: 600 });
  const tighterShown = reportOf(await call(tighter.credential, 'key_show', {}));
  expect(tighterShown.credential).toMatchObject({ block: 2, per_tx_lamports: 700_000 });
  expect(Date.parse((tighterShown.credential as { expires_at: string }).expires_at)).toBeGreaterThan(Date.now());
  const over = reportOf(await call(capped.credential, 'sign', { payload: w.transfer('alpha', 2_000_000) }));
  expect(over).toMatchObject({ outcome: 'refused', failed_check: 'authorized', reason: 'credential_limit' });
  expect(over.detail).toMatch(/its block 1 refused it \(reject if lamports_out\(\$n\), \$n > 1500000\)/);
  expect((over.figures as { requested: number }).requested).toBeGreaterThanOrEqual(2_000_000);

  // Elsewhere than the credential's one destination: refused, naming the destination the simulation pays.
  const elsewhere = narrow(cred.root!, { rootPublicKey, destinations: [w.keys.beta!.destination] });
  const paid = reportOf(await call(elsewhere.credential, 'check', { payload: w.transfer('alpha', 1_000_000) }));
  expect(paid).toMatchObject({ outcome: 'refused', reason: 'credential_limit' });
  expect(paid.figures).toMatchObject({ destination: alpha.destination });
  // The root, without those blocks, signs the same transfer.
  expect(reportOf(await call(cred.root!, 'check', { payload: w.transfer('alpha', 2_000_000) }))).toMatchObject({
    outcome: 'ok',
  });
});

test('a sign that waited for approval is judged against the credential again: one that expired meanwhile sends nothing', async () => {
  // Expires a few seconds from now (a credential's expiry is to the second): after the sign asked, before the vote.
  const expiresAt = new Date(Math.ceil(Date.now() / 1000) * 1000 + 3000);
  const short = narrow(cred.reviewer!, { rootPublicKey, expiresAt });
  const signing = call(short.credential, 'sign', { payload: w.transfer('gamma', 1_000_000), key: 'gamma' });
  let id = '';
  await until(async () => {
    const [pending] = await w.ledger.listApprovals({ status: 'pending' });
    id = pending?.id ?? '';
    return id !== '';
  }, 'the pending approval');
  expect(Date.now()).toBeLessThan(expiresAt.getTime());
  await until(() => Date.now() > expiresAt.getTime() + 1000, 'the credential expiring', 10_000);
  expect((await run(BIN.signer, ['--config', configFile, 'approvals', 'approve', id])).code).toBe(0);

  const report = reportOf(await signing);
  expect(report).toMatchObject({ outcome: 'refused', reason: 'credential_limit', signature: null });
  expect(report.detail).toMatch(/its block 1 refused it \(check if time\(\$t\), \$t <= /);
});

test('a sign that waited for approval is refused if its credential was revoked meanwhile (a reload)', async () => {
  const doomed = narrow(cred.reviewer!, { rootPublicKey, tools: ['sign'] });
  const signing = call(doomed.credential, 'sign', { payload: w.transfer('gamma', 1_000_000), key: 'gamma' });
  let id = '';
  await until(async () => {
    const [pending] = await w.ledger.listApprovals({ status: 'pending' });
    id = pending?.id ?? '';
    return id !== '';
  }, 'the pending approval');
  writeConfig([doomed.revocationId]);
  expect((await run(BIN.signer, ['--config', configFile, 'reload'])).code).toBe(0);
  expect((await run(BIN.signer, ['--config', configFile, 'approvals', 'approve', id])).code).toBe(0);

  const report = reportOf(await signing);
  expect(report).toMatchObject({ outcome: 'refused', reason: 'credential_limit', signature: null });
  expect(report.detail).toContain('the credential is revoked (its block 1)');
  writeConfig();
  expect((await run(BIN.signer, ['--config', configFile, 'reload'])).code).toBe(0);
});

test('`token revoke` names the id to list: a file its last block, a name its root, an id itself', async () => {
  const byName = await run(BIN.signer, ['--config', configFile, 'token', 'revoke', 'planner']);
  expect(byName.code).toBe(0);
  expect(byName.stdout.trim()).toBe(ids.root);
  expect(byName.stderr).toContain('the root credential "planner"');
  const byId = await run(BIN.signer, ['--config', configFile, 'token', 'revoke', ids.grandchild!]);
  expect(byId.stdout.trim()).toBe(ids.grandchild);
  const unknown = await run(BIN.signer, ['--config', configFile, 'token', 'revoke', 'nobody']);
  expect(unknown.code).not.toBe(0);
  expect(unknown.stderr).toContain('neither a revocation id');
  // A file altered (or signed by another root) does not verify: no id is trusted from it.
  const forged = path.join(w.dir, 'forged.cred');
  fs.writeFileSync(forged, `${cred.child!.slice(0, -8)}AAAAAAAA\n`);
  const refused = await run(BIN.signer, ['--config', configFile, 'token', 'revoke', forged]);
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toContain('does not verify');
});

test('revoking the child by `token revoke` and a reload refuses it and the grandchild at once, while the root still signs', async () => {
  const revoke = await run(BIN.signer, ['--config', configFile, 'token', 'revoke', path.join(w.dir, 'child.cred')]);
  expect(revoke.code).toBe(0);
  expect(revoke.stdout.trim()).toBe(ids.child);
  expect(revoke.stderr).toContain('block 1 of a credential narrowed from "planner"');
  // The config lines it prints are what the operator puts in the config, as printed.
  const printed = YAML.parse(revoke.stderr.slice(revoke.stderr.indexOf('serve:'))) as {
    serve: { credentials: { revoked: string[] } };
  };
  expect(printed.serve.credentials.revoked).toEqual([ids.child]);
  writeConfig(printed.serve.credentials.revoked);
  const reloaded = await run(BIN.signer, ['--config', configFile, 'reload']);
  expect(reloaded.code).toBe(0);
  expect(reloaded.stdout).toContain(`serve.credentials.revoked added 1: ${ids.child!.slice(0, 16)}…`);

  for (const c of [cred.child!, cred.grandchild!]) {
    const r = await call(c, 'check', { payload: w.transfer('alpha', 1_000_000), key: 'alpha' });
    expect(r.status).toBe(401);
    expect(r.json).toMatchObject({ code: 'credential_refused', reason: 'revoked', block: 1 });
  }
  const again = await run(BIN.signer, ['--config', configFile, 'token', 'revoke', ids.child!]);
  expect(again.code).toBe(0);
  expect(again.stderr).toContain('already under serve.credentials.revoked');
  const root = await call(cred.root!, 'check', { payload: w.transfer('alpha', 1_000_000), key: 'alpha' });
  expect(root.status).toBe(200);
});

test('a block revoked in the ledger by another process (a replica, its console) is refused within the poll, without a reload', async () => {
  const courier = narrow(cred.root!, { rootPublicKey, keys: ['beta'] });
  const check = () => call(courier.credential, 'check', { payload: w.transfer('beta', 1_000_000), key: 'beta' });
  expect((await check()).status).toBe(200);
  // Written by this test process's own ledger handle, as another replica's console would.
  await w.ledger.revokeCredential({
    revocation_id: courier.revocationId,
    name: null,
    reason: 'courier retired',
    by: 'operator:alice',
    ts: Math.floor(Date.now() / 1000),
  });
  let last: Awaited<ReturnType<typeof check>> | null = null;
  await until(async () => (last = await check()).status === 401, 'the service refuses the revoked block', 10_000, 50);
  expect(last!.json).toMatchObject({ code: 'credential_refused', reason: 'revoked', block: 1 });
  const root = await call(cred.root!, 'check', { payload: w.transfer('beta', 1_000_000), key: 'beta' });
  expect(root.status).toBe(200);
});

test('the root key needs a restart: a reload that changes it changes nothing', async () => {
  const moved = path.join(w.dir, 'other-root.key');
  fs.copyFileSync(rootKeyFile, moved);
  const keep = rootKeyFile;
  rootKeyFile = moved;
  writeConfig([ids.child!]);
  rootKeyFile = keep;
  const refused = await run(BIN.signer, ['--config', configFile, 'reload']);
  expect(refused.code).not.toBe(0);
  expect(refused.stdout + refused.stderr).toContain('serve.credentials.root_key needs a restart');
  writeConfig([ids.child!]);
});
