/**
 * A pkcs11 key whose token goes away while the service runs, on a real SoftHSM2 token, through the HTTP stack
 * (POST /mcp and GET /ready on the Express app, the real engine, chain and ledger). "Token removed" is its
 * directory moved out of SoftHSM2's token directory (test/support/softhsm.ts): the module then fails every call
 * on the key, as it would for an unplugged device. The next sign is an error result naming the token, nothing is
 * sent or audited, /ready says why, key_show says the store is unavailable, and once the directory is back the same
 * key signs again without a restart.
 */
import type { Express } from 'express';
import request from 'supertest';
import type { AuditEntry } from '../../src/ledger/types';
import { firstAnswer } from '../support/async';
import { balanceOf, makeWorld, type World } from '../support/world';
import { headersFor, makeApp, rpc, serveConfig, TOKEN, type RpcReply } from '../http/support';

let w: World;
let app: Express;
beforeAll(async () => {
  w = await makeWorld({ store: 'pkcs11' });
  app = makeApp({ config: serveConfig({}, w.config), engine: w.engine });
});
afterAll(() => w.close());

async function entries(): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  for await (const e of w.ledger.entries()) out.push(e);
  return out;
}

async function sign(lamports: number): Promise<{ isError: boolean; text: string; outcome: unknown }> {
  const body = rpc('tools/call', { name: 'sign', arguments: { key: 'alpha', payload: w.transfer('alpha', lamports) } });
  const r = await request(app).post('/mcp').set(headersFor(body)).send(body);
  const result = (r.body as RpcReply).result as {
    isError: boolean;
    content: { text: string }[];
    structuredContent?: { outcome?: unknown };
  };
  return { isError: result.isError, text: result.content[0]?.text ?? '', outcome: result.structuredContent?.outcome };
}

/** key_show's store_status for the key, as an agent sees it. */
async function storeStatus(): Promise<unknown> {
  const body = rpc('tools/call', { name: 'key_show', arguments: { key: 'alpha' } });
  const r = await request(app).post('/mcp').set(headersFor(body)).send(body);
  const result = (r.body as RpcReply).result as { structuredContent: { keys: { store_status: unknown }[] } };
  return result.structuredContent.keys[0]?.store_status;
}

const ready = async () => {
  const r = await request(app).get('/ready').set('Authorization', `Bearer ${TOKEN}`);
  return { status: r.status, body: r.body as { status: string; detail?: Record<string, string> } };
};

it('token removed: the sign is an error result, nothing is sent, /ready says why; it signs once the token is back', async () => {
  const { destination } = w.keys.alpha!;
  expect(await sign(1_000_000)).toMatchObject({ isError: false, outcome: 'confirmed' });
  const recorded = (await entries()).length;

  w.token!.remove();
  try {
    const refused = await sign(5_000_000);
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(
      /^error: the PKCS#11 token "t-\w+" failed \(C_Sign\w*: CKR_\w+\); nothing was signed$/,
    );
    expect((await entries()).length).toBe(recorded);
    expect(await balanceOf(w, destination)).toBe(1_000_000);
    const notReady = await firstAnswer(ready, (r) => r.status === 503);
    expect(notReady.body.detail?.keys).toMatch(/^alpha: .*PKCS#11 token "t-\w+" (failed|is not present)/);
    expect(await storeStatus()).toBe('store_unavailable');
  } finally {
    w.token!.restore();
  }

  // Readiness probes reconnect (reconnect_ms is 50 in the world) and answer 200 once the token answers again.
  await firstAnswer(ready, (r) => r.status === 200);
  await firstAnswer(storeStatus, (status) => status === 'ok');
  expect(await sign(2_000_000)).toMatchObject({ isError: false, outcome: 'confirmed' });
  expect(await balanceOf(w, destination)).toBe(3_000_000);
});
