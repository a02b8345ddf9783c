/**
 * The in-flight cap shared between tokens, on the real listener with the real engine (LiteSVM, SQLite): signs that
 * wait for an operator's approval hold no place another token needs, each token has its own share of places, and
 * `halt` and `tools/list` never wait behind anything, not even during a drain.
 */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { listen } from '../../src/http/server';
import { createServiceState, type ServiceState } from '../../src/http/service-state';
import { until } from '../support/async';
import { makeWorld, type World } from '../support/world';
import { headersFor, makeApp, OTHER_TOKEN, rpc, serveConfig, TOKEN, type RpcReply } from './support';
import { tokenSha256 } from '../../src/http/bearer-tokens';

let w: World;
beforeAll(async () => {
  w = await makeWorld({
    keys: { vault: { approval: 'confirm' }, beta: {}, alpha: {} },
    // Longer than the test: the signs are still waiting when the other calls are made.
    timings: { approval_timeout_ms: 120_000 },
  });
});
afterAll(() => w.close());

interface Served {
  server: http.Server;
  port: number;
  state: ServiceState;
}

/** The app as serve.ts runs it, with the defaults for the cap: 32 places, 16 a token. */
async function serve(): Promise<Served> {
  const config = serveConfig(
    {
      tokens: [
        { name: 'agent', sha256: tokenSha256(TOKEN), keys: ['vault', 'beta'] },
        { name: 'other', sha256: tokenSha256(OTHER_TOKEN), keys: ['alpha'] },
      ],
    },
    w.config,
  );
  expect([config.serve.max_in_flight, config.serve.max_in_flight_per_token]).toEqual([32, 16]);
  const state = createServiceState();
  const app = makeApp({ config, engine: w.engine, state });
  const server = await listen(app, config, '127.0.0.1', 0);
  return { server, port: (server.address() as AddressInfo).port, state };
}

async function stop(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
}

interface Answer {
  status: number;
  ms: number;
  json: { result?: { isError?: boolean; structuredContent?: Record<string, unknown> }; error?: unknown };
  connection: string | null;
}

async function post(port: number, token: string, body: ReturnType<typeof rpc>, signal?: AbortSignal): Promise<Answer> {
  const started = Date.now();
  const r = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: { ...headersFor(body), Authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
    signal,
  });
  return {
    status: r.status,
    json: (await r.json()) as Answer['json'],
    ms: Date.now() - started,
    connection: r.headers.get('connection'),
  };
}

const pendingApprovals = async (): Promise<number> => (await w.ledger.listApprovals({ status: 'pending' })).length;
const halt = (key: string) => rpc('tools/call', { name: 'halt', arguments: { key, reason: 'in-flight test' } });
const check = (key: string) => rpc('tools/call', { name: 'check', arguments: { key, payload: w.transfer(key, 1000) } });
const list = () => rpc('tools/list');

/** Starts `count` signs of `agent` on the confirm key, one after the other once the last is waiting for approval. */
async function signsWaiting(
  port: number,
  count: number,
): Promise<{ callers: AbortController[]; answers: Promise<unknown>[] }> {
  const callers: AbortController[] = [];
  const answers: Promise<unknown>[] = [];
  const before = await pendingApprovals();
  for (let i = 0; i < count; i++) {
    const caller = new AbortController();
    // A different amount each: a payload of its own asks for an approval of its own.
    const sign = rpc('tools/call', {
      name: 'sign',
      arguments: { key: 'vault', payload: w.transfer('vault', 1_000_000 + i) },
    });
    callers.push(caller);
    let early: unknown = null;
    answers.push(
      post(port, TOKEN, sign, caller.signal).then(
        (a) => (early = a),
        (e: unknown) => e,
      ),
    );
    await until(
      async () => {
        if (early !== null) throw new Error(`sign ${i + 1} was answered instead of waiting: ${JSON.stringify(early)}`);
        return (await pendingApprovals()) === before + i + 1;
      },
      `sign ${i + 1} to wait for approval`,
    );
  }
  return { callers, answers };
}

/** The waiting signs' callers go away: each approval is abandoned and its sign ends. */
async function dropAll(held: { callers: AbortController[]; answers: Promise<unknown>[] }): Promise<void> {
  for (const c of held.callers) c.abort();
  await Promise.all(held.answers);
  await until(() => w.engine.inFlight() === 0, 'the abandoned signs to end');
}

test("32 signs of one token waiting for approval: another token's halt, tools/list and check, and the token's own halt, are answered at once", async () => {
  const { server, port, state } = await serve();
  try {
    const held = await signsWaiting(port, 32);
    try {
      expect(state.inFlight).toBe(32); // all still being answered
      const otherHalt = await post(port, OTHER_TOKEN, halt('alpha'));
      const otherList = await post(port, OTHER_TOKEN, list());
      const otherCheck = await post(port, OTHER_TOKEN, check('alpha'));
      const ownHalt = await post(port, TOKEN, halt('beta'));
      const ownList = await post(port, TOKEN, list());
      for (const a of [otherHalt, otherList, otherCheck, ownHalt, ownList]) {
        expect(a.status).toBe(200);
        expect(a.ms).toBeLessThan(1000);
      }
      expect(otherHalt.json.result).toMatchObject({ isError: false });
      expect(ownHalt.json.result).toMatchObject({ isError: false });
      // The check ran: alpha is halted now, so it answers that a sign would be refused.
      expect(otherCheck.json.result?.structuredContent).toMatchObject({ key: 'alpha' });
    } finally {
      await dropAll(held);
      await w.engine.resume('alpha');
      await w.engine.resume('beta');
    }
  } finally {
    await stop(server);
  }
}, 120_000);

test("a token that fills its share gets 503 for its next work while another token's is served, and gets every place back", async () => {
  const { server, port, state } = await serve();
  try {
    // Twice on the same service: the second round behaves as the first only if the first gave back exactly the
    // places it took (a wait's place released once, never twice).
    for (let round = 1; round <= 2; round++) {
      const held = await signsWaiting(port, 32);
      try {
        // 16 of the waits hold no place; the other 16 keep theirs, which fill the token's share.
        const ownCheck = await post(port, TOKEN, check('beta'));
        expect([ownCheck.status, ownCheck.json]).toEqual([
          503,
          {
            error:
              'busy: this token has 16 requests being answered (serve.max_in_flight_per_token); retry when one is answered',
          },
        ]);
        const otherCheck = await post(port, OTHER_TOKEN, check('alpha'));
        expect(otherCheck.status).toBe(200);
        expect(otherCheck.json.result?.structuredContent).toMatchObject({ key: 'alpha' });
      } finally {
        await dropAll(held);
      }
      await until(() => state.inFlight === 0, 'the requests to close');
      expect((await post(port, TOKEN, check('beta'))).status).toBe(200);
    }
  } finally {
    await stop(server);
  }
}, 120_000);

test('while the service drains, a halt is still answered, its connection then closed; other calls are 503', async () => {
  const state = createServiceState();
  const app = makeApp({ config: serveConfig({}, w.config), engine: w.engine, state });
  state.draining = true; // what drain() sets on the first SIGTERM
  try {
    const h = halt('alpha');
    const halted = await request(app).post('/mcp').set(headersFor(h)).send(h);
    expect([halted.status, halted.headers.connection]).toEqual([200, 'close']);
    expect((halted.body as RpcReply).result).toMatchObject({ isError: false });
    for (const body of [list(), check('alpha')]) {
      const refused = await request(app).post('/mcp').set(headersFor(body)).send(body);
      expect([refused.status, refused.headers.connection, refused.body]).toEqual([
        503,
        'close',
        { error: 'shutting down; retry on another replica' },
      ]);
    }
    expect(state.inFlight).toBe(0);
  } finally {
    await w.engine.resume('alpha');
  }
});
