/**
 * The HTTP layer around /mcp: body limit, content type, rate limit, in-flight cap, probes behind Kubernetes,
 * 404s, security headers, metrics, and the drain on shutdown. Real app, real listeners on loopback.
 */
import http from 'node:http';
import request from 'supertest';
import { pino } from 'pino';
import { makeApp, headersFor, rpc, serveConfig, TOKEN } from './support';
import { Metrics } from '../../src/http/metrics';
import { drain, listen } from '../../src/http/server';
import { createServiceState } from '../../src/http/service-state';
import type { SignerEngine } from '../../src/signer/types';

const list = rpc('tools/list');

test('a body over 1 MiB with a valid token is 413', async () => {
  const app = makeApp();
  const big = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"${'x'.repeat(1_100_000)}"}}`;
  const r = await request(app).post('/mcp').set(headersFor(list)).send(big);
  expect(r.status).toBe(413);
  expect((r.body as { error?: unknown }).error).toMatch(/too large/);
});

test('a non-JSON Content-Type is 415', async () => {
  const r = await request(makeApp())
    .post('/mcp')
    .set({ ...headersFor(list), 'Content-Type': 'text/plain' })
    .send(JSON.stringify(list));
  expect(r.status).toBe(415);
});

test('more requests than the per-token rate limit are 429 from express-rate-limit, counted per token', async () => {
  const app = makeApp({ config: serveConfig({ rate_limit_per_minute: 2 }) });
  const first = await request(app).post('/mcp').set(headersFor(list)).send(list);
  expect(first.status).toBe(200);
  // express-rate-limit's standard headers (IETF draft 7) on every admitted request.
  expect(first.headers['ratelimit-policy']).toBe('2;w=60');
  expect(first.headers.ratelimit).toMatch(/^limit=2, remaining=1, reset=\d+$/);
  expect((await request(app).post('/mcp').set(headersFor(list)).send(list)).status).toBe(200);
  const r = await request(app).post('/mcp').set(headersFor(list)).send(list);
  expect(r.status).toBe(429);
  expect(r.body).toEqual({ error: 'rate limit: more than 2 requests in a minute for this token; retry later' });
  expect(r.headers.ratelimit).toMatch(/^limit=2, remaining=0, reset=\d+$/);
  expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
  const other = await request(app)
    .post('/mcp')
    .set({ ...headersFor(list), Authorization: 'Bearer sfs_second-token' })
    .send(list);
  expect(other.status).toBe(200);
});

// A stand-in engine whose key_show waits on a gate: the only way to hold a request open on cue (a real slow sign
// needs minutes). Named fake; the tool path itself is covered with the real engine in tools-engine.test.ts.
// `inside` resolves once a request has reached it: from then on that request is in flight.
function gatedEngine(): { engine: SignerEngine; inside: Promise<void>; release: () => void } {
  let release: () => void = () => {};
  let entered: () => void = () => {};
  const gate = new Promise<void>((r) => (release = r));
  const inside = new Promise<void>((r) => (entered = r));
  const keyShow = async () => {
    entered();
    await gate;
    return [];
  };
  return { engine: { keyShow } as unknown as SignerEngine, inside, release };
}

test('work beyond serve.max_in_flight is 503 with Retry-After; tools/list is answered all the same', async () => {
  const { engine, inside, release } = gatedEngine();
  const app = makeApp({ config: serveConfig({ max_in_flight: 1 }), engine });
  const server = http.createServer(app).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const slowBody = rpc('tools/call', { name: 'key_show', arguments: {} });
    const slow = request(server)
      .post('/mcp')
      .set(headersFor(slowBody))
      .send(slowBody)
      .then((r) => r);
    await inside;
    const more = rpc('tools/call', { name: 'key_show', arguments: {} });
    const busy = await request(server).post('/mcp').set(headersFor(more)).send(more);
    expect([busy.status, busy.body]).toEqual([503, { error: 'busy; retry shortly' }]);
    expect(busy.headers['retry-after']).toBe('1');
    expect((await request(server).post('/mcp').set(headersFor(list)).send(list)).status).toBe(200);
    release();
    expect((await slow).status).toBe(200);
    const again = rpc('tools/call', { name: 'key_show', arguments: {} });
    expect((await request(server).post('/mcp').set(headersFor(again)).send(again)).status).toBe(200);
  } finally {
    server.close();
  }
});

describe('probes behind Kubernetes', () => {
  const engine = {
    ready: () => Promise.resolve({ ok: true, detail: { ledger: 'ok', chain: 'ok' } }),
  } as unknown as SignerEngine;
  const app = makeApp({ engine });

  test('/health answers {"status":"ok"} for any Host (a pod IP) without a token', async () => {
    const r = await request(app).get('/health').set('Host', '10.42.0.17:8790');
    expect(r.status).toBe(200);
    expect(r.text).toBe('{"status":"ok"}');
  });

  test('/ready answers for any Host; the detail only to a caller with a valid token', async () => {
    const pod = await request(app).get('/ready').set('Host', '10.42.0.17:8790');
    expect([pod.status, pod.body]).toEqual([200, { status: 'ready' }]);
    const local = await request(app).get('/ready').set('Host', '127.0.0.1:8790');
    expect([local.status, local.body]).toEqual([200, { status: 'ready' }]);
    const wrong = await request(app).get('/ready').set('Authorization', 'Bearer sfs_not-a-token');
    expect([wrong.status, wrong.body]).toEqual([200, { status: 'ready' }]);
    const authed = await request(app).get('/ready').set('Authorization', `Bearer ${TOKEN}`);
    expect(authed.body).toEqual({ status: 'ready', detail: { ledger: 'ok', chain: 'ok' } });
  });

  test('/ready when not ready is 503, still without the detail for a caller without a token', async () => {
    const failing = {
      ready: () => Promise.resolve({ ok: false, detail: { ledger: 'connect ECONNREFUSED 10.0.0.5:5432' } }),
    } as unknown as SignerEngine;
    const down = makeApp({ engine: failing });
    const anonymous = await request(down).get('/ready');
    expect([anonymous.status, anonymous.body]).toEqual([503, { status: 'not ready' }]);
    expect(anonymous.text).not.toContain('10.0.0.5');
    const authed = await request(down).get('/ready').set('Authorization', `Bearer ${TOKEN}`);
    expect(authed.body).toMatchObject({ detail: { ledger: expect.stringContaining('ECONNREFUSED') as unknown } });
  });

  test('a probe with a foreign Origin is 403 (a browser page is never a probe)', async () => {
    const r = await request(app).get('/health').set('Host', '10.42.0.17:8790').set('Origin', 'http://10.42.0.17:8790');
    expect(r.status).toBe(403);
  });

  test('/ready is 503 "starting" until the engine is open', async () => {
    const r = await request(makeApp()).get('/ready');
    expect([r.status, r.body]).toEqual([503, { status: 'starting' }]);
  });

  test('other paths need a token and are 404 with one', async () => {
    expect((await request(app).get('/nope')).status).toBe(401);
    expect((await request(app).get('/nope').set('Authorization', `Bearer ${TOKEN}`)).status).toBe(404);
  });
});

test("every response carries helmet's security headers and a request id, and no ETag or X-Powered-By", async () => {
  const r = await request(makeApp()).post('/mcp').set(headersFor(list)).send(list);
  expect(r.headers['x-content-type-options']).toBe('nosniff');
  expect(r.headers['content-security-policy']).toContain("default-src 'self'");
  expect(r.headers['x-frame-options']).toBe('SAMEORIGIN');
  expect(r.headers['strict-transport-security']).toMatch(/max-age=/);
  expect(r.headers['cross-origin-resource-policy']).toBe('same-origin');
  expect(r.headers['x-request-id']).toMatch(/.+/);
  expect(r.headers['x-powered-by']).toBeUndefined();
  expect(r.headers.etag).toBeUndefined();
  const denied = await request(makeApp()).post('/mcp').send(list);
  expect(denied.headers['x-content-type-options']).toBe('nosniff');
});

test('metrics count requests by MCP method and status on their own listener', async () => {
  const metrics = new Metrics({ defaultMetrics: false, haltedKeys: () => Promise.resolve(2) });
  const app = makeApp({ metrics });
  await request(app).post('/mcp').set(headersFor(list)).send(list);
  await request(app)
    .post('/mcp')
    .set(headersFor(rpc('ping')))
    .send(rpc('ping'));
  const server = await metrics.listen('127.0.0.1', 0, ['127.0.0.1', 'localhost']);
  try {
    const text = (await request(server).get('/metrics')).text;
    expect(text).toContain('signer_http_requests_total{method="tools/list",status="200"} 1');
    expect(text).toContain('signer_http_requests_total{method="other",status="404"} 1');
    expect(text).toContain('signer_halted_keys 2');
    expect(text).toContain('signer_http_in_flight 0');
    // A second scrape after one more request says 2: counted once per request, whatever the scrapes.
    await request(app).post('/mcp').set(headersFor(list)).send(list);
    expect((await request(server).get('/metrics')).text).toContain(
      'signer_http_requests_total{method="tools/list",status="200"} 2',
    );
  } finally {
    server.close();
  }
});

test('the in-flight gauge reads the requests being answered when /metrics is scraped', async () => {
  const { engine, inside, release } = gatedEngine();
  const state = createServiceState();
  const metrics = new Metrics({ defaultMetrics: false, inFlight: () => state.inFlight });
  const app = makeApp({ engine, metrics, state });
  const server = http.createServer(app).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const metricsServer = await metrics.listen('127.0.0.1', 0, ['127.0.0.1', 'localhost']);
  try {
    const slowBody = rpc('tools/call', { name: 'key_show', arguments: {} });
    const slow = request(server)
      .post('/mcp')
      .set(headersFor(slowBody))
      .send(slowBody)
      .then((r) => r);
    await inside;
    expect((await request(metricsServer).get('/metrics')).text).toContain('signer_http_in_flight 1');
    release();
    expect((await slow).status).toBe(200);
    expect((await request(metricsServer).get('/metrics')).text).toContain('signer_http_in_flight 0');
  } finally {
    server.close();
    metricsServer.close();
  }
});

test('the access log (pino-http) at info: a line per check and per failure, none for reads that change nothing', async () => {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'info' },
    { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) },
  );
  const engine = {
    keyShow: () => Promise.resolve([]),
    check: () => Promise.resolve({ outcome: 'ok', failed_check: null, key: 'alpha', signature: null }),
  } as unknown as SignerEngine;
  const app = makeApp({ engine, logger });
  const keyShow = rpc('tools/call', { name: 'key_show', arguments: {} });
  const check = rpc('tools/call', { name: 'check', arguments: { payload: {}, key: 'alpha' } });
  const r1 = await request(app).post('/mcp').set(headersFor(list)).send(list);
  await request(app).post('/mcp').set(headersFor(keyShow)).send(keyShow);
  const r3 = await request(app).post('/mcp').set(headersFor(check)).send(check);
  const r4 = await request(app)
    .post('/mcp?x=1')
    .set(headersFor(rpc('nope')))
    .send(rpc('nope'));
  expect(r1.status).toBe(200);
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatchObject({
    level: 30,
    msg: 'request',
    reqId: r3.get('x-request-id'),
    method: 'POST',
    path: '/mcp',
    status: 200,
    ms: expect.any(Number) as unknown,
    token: 'agent',
    mcp: { method: 'tools/call', tool: 'check', key: 'alpha', outcome: 'ok', signature: null },
  });
  expect(lines[1]).toMatchObject({
    reqId: r4.headers['x-request-id'],
    path: '/mcp',
    status: 404,
    mcp: { method: 'nope' },
  });
  // The token and the Mcp-Param-* value never reach the line; the headers that are there are redacted.
  expect(lines[0]!.headers).toMatchObject({ authorization: '[redacted]', 'mcp-param-key': '[redacted]' });
  expect(JSON.stringify(lines)).not.toContain(TOKEN);
});

test('a refused request is logged with its status and no token name; a caller-given request id is kept', async () => {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'info' },
    { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) },
  );
  const app = makeApp({ logger });
  const r = await request(app).post('/mcp').set('X-Request-Id', 'trace-42').send(list);
  expect([r.status, r.headers['x-request-id']]).toEqual([401, 'trace-42']);
  expect(lines).toEqual([expect.objectContaining({ reqId: 'trace-42', status: 401, path: '/mcp' })]);
  expect(lines[0]!.token).toBeUndefined();
});

test('drain: stops accepting, lets a running request finish, and reports none left', async () => {
  const { engine, inside, release } = gatedEngine();
  const config = serveConfig();
  const state = createServiceState();
  const app = makeApp({ config, engine, state });
  const server = await listen(app, config, '127.0.0.1', 0);
  const port = (server.address() as { port: number }).port;
  const body = rpc('tools/call', { name: 'key_show', arguments: {} });
  const slow = request(`http://127.0.0.1:${port}`)
    .post('/mcp')
    .set(headersFor(body))
    .send(body)
    .then((r) => r);
  // In flight means inside the app: a connection whose request is not read yet is idle, and drain closes those.
  await inside;
  // drain closes the listener before it returns its promise, so a new connection is refused from here on.
  const draining = drain({ server, state, drainMs: 5000, pollMs: 10 });
  await expect(request(`http://127.0.0.1:${port}`).post('/mcp').set(headersFor(list)).send(list)).rejects.toThrow();
  release();
  expect((await slow).status).toBe(200);
  expect(await draining).toBe(0);
});

test('drain gives up after drain_ms and reports what still runs', async () => {
  const engine = { keyShow: () => new Promise(() => {}), inFlight: () => 0 } as unknown as SignerEngine;
  const config = serveConfig();
  const state = createServiceState();
  const app = makeApp({ config, engine, state });
  const server = await listen(app, config, '127.0.0.1', 0);
  const port = (server.address() as { port: number }).port;
  const body = rpc('tools/call', { name: 'key_show', arguments: {} });
  request(`http://127.0.0.1:${port}`)
    .post('/mcp')
    .set(headersFor(body))
    .send(body)
    .catch(() => {});
  // The request must be in flight before the drain starts; on a loaded machine that can take more than a moment.
  while (state.inFlight === 0) await new Promise((r) => setTimeout(r, 5));
  const started = Date.now();
  expect(await drain({ server, state, drainMs: 200, pollMs: 10 })).toBe(1);
  expect(Date.now() - started).toBeLessThan(2000);
  server.closeAllConnections();
});
