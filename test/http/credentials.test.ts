/**
 * Credentials in the HTTP layer (in process, supertest): a credential's refusal is a 401 with its code and reason,
 * before the body for a chain that does not verify and after it for a check; each credential has its own rate
 * limit, apart from its root's; credentials that do not verify are limited per client address, and past that limit
 * none is verified; with credentials off, a credential is just an unknown bearer value.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { biscuitLib } from '../../src/credentials/biscuit-lib';
import { mintRoot, narrowCredential, newRootKey } from '../../src/credentials/issue';
import { TOKEN, headersFor, makeApp, rpc, serveConfig } from './support';

const lib = biscuitLib();
const root = newRootKey(lib);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'credentials-http-'));
const rootKeyFile = path.join(dir, 'root.key');
fs.writeFileSync(rootKeyFile, `${root.privateKey}\n`, { mode: 0o600 });
const made = mintRoot(lib, root.privateKey, { name: 'planner', keys: ['demo'] });
const child = narrowCredential(lib, made.credential, root.publicKey, { tools: ['check'] });
const credentials = {
  root_key: { file: rootKeyFile },
  issued: [{ name: 'planner', revocation_id: made.revocationId, keys: ['demo'] }],
  revoked: [],
};

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function post(app: ReturnType<typeof makeApp>, bearer: string, body = rpc('tools/list')) {
  return request(app)
    .post('/mcp')
    .set({ ...headersFor(body), Authorization: `Bearer ${bearer}` })
    .send(body);
}

test('each credential has its own rate limit, apart from its root and its siblings', async () => {
  const app = makeApp({ config: serveConfig({ credentials, rate_limit_per_minute: 2 }) });
  const sibling = narrowCredential(lib, made.credential, root.publicKey, { tools: ['check'] });
  for (let i = 0; i < 2; i++) expect((await post(app, child.credential)).status).toBe(200);
  expect((await post(app, child.credential)).status).toBe(429);
  expect((await post(app, sibling.credential)).status).toBe(200);
  expect((await post(app, made.credential)).status).toBe(200);
});

test('failed verifications are limited per address: past the limit no credential from it is verified', async () => {
  const app = makeApp({ config: serveConfig({ credentials, rate_limit_per_minute: 2 }) });
  // Credentials that verify do not count: more of them than the limit (each its own, so each has its own limit).
  for (let i = 0; i < 3; i++) {
    const fresh = narrowCredential(lib, made.credential, root.publicKey, { tools: ['check'] });
    expect((await post(app, fresh.credential)).status).toBe(200);
  }
  const foreign = mintRoot(lib, newRootKey(lib).privateKey, { name: 'planner', keys: ['demo'] }).credential;
  for (let i = 0; i < 2; i++) expect((await post(app, foreign)).status).toBe(401);
  const third = await post(app, foreign);
  expect(third.status).toBe(429);
  expect(third.headers['retry-after']).toBeDefined();
  expect(third.text).toContain('credentials that do not verify');
  // A credential that would verify is not even verified now: the address has spent its failures.
  const sibling = narrowCredential(lib, made.credential, root.publicKey, { tools: ['check'] });
  expect((await post(app, sibling.credential)).status).toBe(429);
  // A bearer token is not a credential: it is checked as ever.
  expect((await post(app, TOKEN)).status).toBe(200);
});

test('a chain another root key signed is refused as a value, without the credential in the answer', async () => {
  const app = makeApp({ config: serveConfig({ credentials }) });
  const foreign = mintRoot(lib, newRootKey(lib).privateKey, { name: 'planner', keys: ['demo'] }).credential;
  const res = await post(app, foreign);
  expect(res.status).toBe(401);
  expect(res.headers['www-authenticate']).toMatch(/^Bearer /);
  expect(res.body).toMatchObject({ code: 'credential_refused', reason: 'signature' });
  expect(res.text).not.toContain(foreign.slice(0, 24));
});

test("a check refuses after the body: the tool is the body's", async () => {
  const app = makeApp({ config: serveConfig({ credentials }) });
  const res = await post(app, child.credential, rpc('tools/call', { name: 'halt', arguments: { reason: 'x' } }));
  expect(res.status).toBe(401);
  expect(res.body).toMatchObject({ code: 'credential_refused', reason: 'check', block: 1 });
});

test('with credentials off, a credential is an unknown bearer value', async () => {
  const app = makeApp({ config: serveConfig() });
  const res = await post(app, made.credential);
  expect(res.status).toBe(401);
  expect(res.body).toEqual({ error: 'missing or unknown bearer token' });
});
