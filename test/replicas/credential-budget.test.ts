/**
 * Credentials across replicas: two `sa-forge-signer-serve` processes sharing one PostgreSQL ledger.
 * - A child credential with a daily budget for N signs, signs under it fired at once on both replicas and on two
 *   keys: the block's lock (taken after the key's, PostgreSQL advisory) and its usage read from the shared ledger let
 *   exactly N through together; neither the replicas nor the keys can both fit the last room in the budget.
 * - Revoking the child (the config, then each replica's reload) refuses it and its grandchild on both replicas, while
 *   the root still works on both.
 */
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { biscuitLib } from '../../src/credentials/biscuit-lib';
import YAML from 'yaml';
import { mintRoot, narrowCredential, newRootKey } from '../../src/credentials/issue';
import { BIN, run } from '../support/cli';
import { headersFor, rpc } from '../http/support';
import { McpHttpClient } from './mcp-http';
import { ReplicaCluster, closeCluster } from './cluster';

/** Each sign: this transfer and the fee of one signature. */
const AMOUNT = 10_000_000;
const FEE = 5_000;
const FITS = 5;
/** Room for FITS signs and half of another. */
const BUDGET = FITS * (AMOUNT + FEE) + AMOUNT / 2;
const CONCURRENT = 16;

let cluster: ReplicaCluster | undefined;
let child = '';
let childId = '';
let rootCredential = '';
let grandchild = '';
const keyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'budget-root-'));

beforeAll(async () => {
  const lib = biscuitLib();
  const root = newRootKey(lib);
  const rootKeyFile = path.join(keyDir, 'root.key');
  fs.writeFileSync(rootKeyFile, `${root.privateKey}\n`, { mode: 0o600 });
  const made = mintRoot(lib, root.privateKey, { name: 'planner', keys: ['left', 'right'] });
  const narrowed = narrowCredential(lib, made.credential, root.publicKey, { perDayLamports: BUDGET });
  child = narrowed.credential;
  childId = narrowed.revocationId;
  rootCredential = made.credential;
  grandchild = narrowCredential(lib, child, root.publicKey, { mode: 'sign_only' }).credential;
  cluster = await ReplicaCluster.start({
    keys: { left: {}, right: {} },
    credentials: {
      root_key_file: rootKeyFile,
      issued: [{ name: 'planner', revocation_id: made.revocationId, keys: ['left', 'right'] }],
    },
  });
}, 120_000);

afterAll(async () => {
  await closeCluster(cluster);
  fs.rmSync(keyDir, { recursive: true, force: true });
});

test("signs fired at once on two replicas and two keys never pass a block's budget together", async () => {
  const c = cluster!;
  const clients = c.replicas.map((r) => new McpHttpClient(r.url, child));
  const replies = await Promise.all(
    Array.from({ length: CONCURRENT }, (_, i) => {
      const key = i % 4 < 2 ? 'left' : 'right';
      // Each sign its own amount: the same transfer within one block would be the same transaction.
      return clients[i % 2]!.sign(key, c.transfer(key, AMOUNT + i, `budget sign ${i}`));
    }),
  );
  const reports = replies.map((r) => McpHttpClient.report(r) as unknown as { outcome: string; reason: string | null });
  const passed = reports.filter((r) => r.outcome === 'confirmed');
  const refused = reports.filter((r) => r.outcome === 'refused');
  expect(refused.map((r) => r.reason)).toEqual(Array(refused.length).fill('credential_budget'));
  // The amounts grow by one lamport a sign: FITS of them fit, one more does not, whichever they are.
  expect(passed).toHaveLength(FITS);
  // The ledger: FITS intents name the block, on both keys, and what they spent stays inside the budget.
  const intents = (await c.entries()).filter((e) => e.command === 'sign-intent');
  expect(intents).toHaveLength(FITS);
  for (const e of intents) expect(JSON.parse(String(e.budget_blocks))).toEqual([childId]);
  expect(new Set(intents.map((e) => e.key)).size).toBe(2);
  const spent = intents.reduce((sum, e) => sum - (e.balance_change ?? 0), 0);
  expect(spent).toBeLessThanOrEqual(BUDGET);
}, 120_000);

/** An HTTP tools/call `check` with this credential on a replica: the status (401: the credential was refused). */
async function checkStatus(url: string, credential: string): Promise<{ status: number; reason?: string }> {
  const body = rpc('tools/call', {
    name: 'check',
    arguments: { key: 'left', payload: cluster!.transfer('left', AMOUNT) },
  });
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { ...headersFor(body), Authorization: `Bearer ${credential}` },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { reason?: string };
  return { status: res.status, ...(json.reason === undefined ? {} : { reason: json.reason }) };
}

test('revoking the child refuses it and its grandchild on both replicas at once, while the root works on both', async () => {
  const c = cluster!;
  for (const r of c.replicas) expect((await checkStatus(r.url, grandchild)).status).toBe(200);
  const doc = YAML.parse(fs.readFileSync(c.configFile, 'utf8')) as { serve: { credentials: { revoked?: string[] } } };
  doc.serve.credentials.revoked = [childId];
  fs.writeFileSync(c.configFile, YAML.stringify(doc));
  // Each replica applies it with its own reload (its own state directory, as each container has).
  for (const r of c.replicas) {
    const reloaded = await run(BIN.signer, ['--config', c.configFile, 'reload'], {
      env: { SIGNER_STATE_DIR: path.join(c.dir, `state-${String(r.index)}`) },
    });
    expect(reloaded.code).toBe(0);
    expect(reloaded.stdout).toContain('serve.credentials.revoked added 1');
  }
  for (const r of c.replicas) {
    expect(await checkStatus(r.url, child)).toEqual({ status: 401, reason: 'revoked' });
    expect(await checkStatus(r.url, grandchild)).toEqual({ status: 401, reason: 'revoked' });
    expect((await checkStatus(r.url, rootCredential)).status).toBe(200);
  }
}, 60_000);
