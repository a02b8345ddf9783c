/**
 * What supertest cannot show, on real sockets against the real listener (src/http/server.ts): clients that send
 * slowly or not at all hold neither an in-flight place nor a socket for long, and the number of open connections
 * is capped. The engine is the real one (LiteSVM, SQLite) so the halt that must not wait is a real halt.
 */
import net from 'node:net';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { listen } from '../../src/http/server';
import { createServiceState } from '../../src/http/service-state';
import { until } from '../support/async';
import { makeWorld, type World } from '../support/world';
import { headersFor, makeApp, rpc, serveConfig } from './support';
import type { SignerConfig } from '../../src/config/types';

let w: World;
beforeAll(async () => {
  w = await makeWorld({ keys: { alpha: {} } });
});
afterAll(() => w.close());

async function serve(over: Partial<SignerConfig['serve']>): Promise<{ server: http.Server; port: number }> {
  const config = serveConfig(over, w.config);
  const app = makeApp({ config, engine: w.engine, state: createServiceState() });
  const server = await listen(app, config, '127.0.0.1', 0);
  return { server, port: (server.address() as AddressInfo).port };
}

/** Connections the server holds open now. */
function connections(server: http.Server): Promise<number> {
  return new Promise((resolve, reject) => server.getConnections((e, n) => (e ? reject(e) : resolve(n))));
}

async function stop(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
}

interface RawClient {
  socket: net.Socket;
  /** Everything the server sent so far. */
  received: () => string;
  /** Resolves with the milliseconds from connect until the server closed the connection. */
  closed: Promise<number>;
}

function connect(port: number): Promise<RawClient> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    const started = Date.now();
    socket.on('data', (d: Buffer) => (data += d.toString('utf8')));
    const closed = new Promise<number>((r) => socket.once('close', () => r(Date.now() - started)));
    socket.on('error', () => undefined); // a reset is one way a server closes: `closed` reports it
    socket.once('connect', () => resolve({ socket, received: () => data, closed }));
    socket.once('error', reject);
  });
}

/** The head of an authenticated tools/call or tools/list POST whose body is announced as `length` bytes. */
function postHead(body: ReturnType<typeof rpc>, length: number): string {
  const h = { ...headersFor(body), Host: '127.0.0.1', 'Content-Length': String(length) };
  return `POST /mcp HTTP/1.1\r\n${Object.entries(h)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n')}\r\n\r\n`;
}

async function post(
  port: number,
  body: ReturnType<typeof rpc>,
): Promise<{ status: number; ms: number; json: unknown }> {
  const started = Date.now();
  const r = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: headersFor(body),
    body: JSON.stringify(body),
  });
  return { status: r.status, json: await r.json(), ms: Date.now() - started };
}

test('64 slow-body requests hold no in-flight place: tools/list and a halt are answered at once', async () => {
  const { server, port } = await serve({ max_in_flight: 4, body_timeout_ms: 30_000, max_connections: 256 });
  const slow: RawClient[] = [];
  // A request event is the server having parsed a head: from then on its request waits for the body.
  let heads = 0;
  server.on('request', () => heads++);
  try {
    const list = rpc('tools/list');
    for (let i = 0; i < 64; i++) {
      const c = await connect(port);
      // The head, and 10 bytes of a 4000-byte body; the rest never comes while the test runs.
      c.socket.write(postHead(list, 4000) + JSON.stringify(list).slice(0, 10));
      slow.push(c);
    }
    await until(() => heads === 64, "the server to parse the 64 slow requests' heads");
    const listed = await post(port, list);
    expect(listed.status).toBe(200);
    expect(listed.ms).toBeLessThan(1000);
    const halt = rpc('tools/call', { name: 'halt', arguments: { key: 'alpha', reason: 'slow-body test' } });
    const halted = await post(port, halt);
    expect(halted.status).toBe(200);
    expect(halted.json).toMatchObject({ result: { isError: false } });
    expect(halted.ms).toBeLessThan(1000);
    // None of the slow ones was answered: they are still waiting for their bodies, not refused as busy.
    expect(slow.every((c) => c.received() === '')).toBe(true);
    expect(await w.engine.resume('alpha')).toBe(true);
  } finally {
    for (const c of slow) c.socket.destroy();
    await stop(server);
  }
});

test('a body that dribbles in past body_timeout is answered 408 and its connection closed', async () => {
  const { server, port } = await serve({ body_timeout_ms: 300 });
  try {
    const list = rpc('tools/list');
    const c = await connect(port);
    c.socket.write(postHead(list, 4000));
    const drip = setInterval(() => c.socket.write(' '), 50); // bytes keep coming, the body never completes
    const ms = await c.closed;
    clearInterval(drip);
    expect(ms).toBeGreaterThanOrEqual(300);
    expect(ms).toBeLessThan(2000);
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(c.received()).toContain('{"error":"the request body did not arrive within 300 ms"}');
  } finally {
    await stop(server);
  }
});

test('a connection that never sends a complete request is closed within seconds, with or without a token', async () => {
  const { server, port } = await serve({ headers_timeout_ms: 500, body_timeout_ms: 500 });
  try {
    const silent = await connect(port);
    const partialHead = await connect(port);
    partialHead.socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    // No token: 401 at once, and the announced body that never comes is not waited for indefinitely.
    const anonymous = await connect(port);
    anonymous.socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n{');
    const [a, b, c] = await Promise.all([silent.closed, partialHead.closed, anonymous.closed]);
    for (const ms of [a, b, c]) expect(ms).toBeLessThan(4000);
    expect(anonymous.received()).toMatch(/^HTTP\/1\.1 401 /);
  } finally {
    await stop(server);
  }
});

test('connections beyond max_connections are refused; the service answers again once they close', async () => {
  const { server, port } = await serve({ max_connections: 4, headers_timeout_ms: 60_000 });
  const held: RawClient[] = [];
  try {
    for (let i = 0; i < 4; i++) held.push(await connect(port));
    await until(async () => (await connections(server)) === 4, 'the server to count the 4 held connections');
    const extra = await connect(port);
    expect(await extra.closed).toBeLessThan(1000);
    expect(extra.received()).toBe('');
    for (const c of held) c.socket.destroy();
    await until(async () => (await connections(server)) === 0, 'the server to see the held connections close');
    expect((await post(port, rpc('tools/list'))).status).toBe(200);
  } finally {
    for (const c of held) c.socket.destroy();
    await stop(server);
  }
});
