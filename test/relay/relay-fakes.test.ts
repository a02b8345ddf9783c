/**
 * The built relay against named fakes, for what the real service never produces: another server's formatting
 * (pretty JSON, HTML from a proxy, an event stream), annotations of other types, a service that is down.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { FakeService, sendJson, type RecordedRequest } from './fake-service';
import { RelayProcess, VERSION } from './relay-process';

jest.setTimeout(60_000);

const TOKEN = 'sfs_fakeServiceTokenForTheRelayTests';
const relays: RelayProcess[] = [];
const fakes: FakeService[] = [];
let dir: string;
let tokenFile: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-fakes-'));
  tokenFile = path.join(dir, 'token');
  fs.writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
});

afterEach(async () => {
  for (const r of relays.splice(0)) await r.kill();
  for (const f of fakes.splice(0)) await f.close();
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function relay(url: string, env: Record<string, string> = {}): RelayProcess {
  const r = new RelayProcess({ SIGNER_URL: url, SIGNER_TOKEN_FILE: tokenFile, ...env });
  relays.push(r);
  return r;
}

async function fake(handler: Parameters<typeof FakeService.start>[0]): Promise<FakeService> {
  const f = await FakeService.start(handler);
  fakes.push(f);
  return f;
}

const ok = (req: RecordedRequest, result: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id: req.body.id,
  result: { resultType: 'complete', ...result },
});

/** A port nothing listens on: bound, then released. */
async function deadPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as net.AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

test('a pretty-printed multi-line reply (a formatting the real service never sends) is written as exactly one line', async () => {
  const f = await fake((req, res) =>
    sendJson(res, 200, ok(req, { note: 'line one\nline two', nested: { a: [1, 2, { b: 'c' }] } }), true),
  );
  const r = relay(f.url);
  const reply = await r.call(1, 'server/discover');
  expect(reply.result).toEqual({
    resultType: 'complete',
    note: 'line one\nline two',
    nested: { a: [1, 2, { b: 'c' }] },
  });
  expect(r.lines).toHaveLength(1);
  expect(r.lines[0]).not.toMatch(/\n|\r/);
  expect(r.unterminated()).toBe('');
});

test('the service down (connection refused) is -32603 for that id, naming the cause', async () => {
  const port = await deadPort();
  const r = relay(`http://127.0.0.1:${port}/mcp`);
  const reply = await r.call('down', 'tools/list');
  expect(reply.error?.code).toBe(-32603);
  expect(reply.error?.message).toMatch(/cannot reach .*127\.0\.0\.1:\d+\/mcp.*connection refused/);
  expect(reply.error?.message).not.toContain(TOKEN);
});

test('a notification while the service is down is still never answered', async () => {
  const port = await deadPort();
  const r = relay(`http://127.0.0.1:${port}/mcp`);
  r.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  await r.stderrMatches(/notification notifications\/initialized was not delivered/);
  expect(await r.end()).toEqual({ code: 0, signal: null });
  expect(r.lines).toEqual([]);
});

test('a 502 with an HTML body from a proxy is -32603 naming the status, not a parse error', async () => {
  const f = await fake((_req, res) => {
    res.writeHead(502, { 'Content-Type': 'text/html' });
    res.end('<html>\n<body>Bad Gateway</body>\n</html>\n');
  });
  const r = relay(f.url);
  const reply = await r.call(1, 'tools/list');
  expect(reply.error?.code).toBe(-32603);
  expect(reply.error?.message).toMatch(/HTTP 502 with text\/html/);
  expect(reply.error?.data).toEqual({ httpStatus: 502 });
});

test("a 403 plain JSON refusal (Host not allowed) is -32603 with the service's own words", async () => {
  const f = await fake((_req, res) => sendJson(res, 403, { error: 'Host header not allowed' }));
  const r = relay(f.url);
  const reply = await r.call(1, 'server/discover');
  expect(reply.error?.code).toBe(-32603);
  expect(reply.error?.message).toMatch(/HTTP 403: Host header not allowed/);
});

test('an event-stream reply: notifications for the request are written, then the response, each on its own line', async () => {
  const f = await fake((req, res) => {
    if (req.body.method === 'tools/list') {
      sendJson(res, 200, ok(req, { tools: [{ name: 'anything', inputSchema: { type: 'object' } }] }));
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    const progress = {
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken: 't', progress: 1, total: 2 },
    };
    res.write(`: keep-alive\n\nevent: message\ndata: ${JSON.stringify(progress)}\n\n`);
    const final = JSON.stringify(ok(req, { content: [{ type: 'text', text: 'done' }], isError: false }), null, 2);
    // A multi-line JSON split over several data lines and two TCP writes.
    const data = final
      .split('\n')
      .map((l) => `data: ${l}`)
      .join('\n');
    res.write(data.slice(0, 20));
    setTimeout(() => res.end(`${data.slice(20)}\n\n`), 20);
  });
  const r = relay(f.url);
  const reply = await r.call(5, 'tools/call', { name: 'anything', arguments: {} });
  expect(reply).toEqual({
    jsonrpc: '2.0',
    id: 5,
    result: { resultType: 'complete', content: [{ type: 'text', text: 'done' }], isError: false },
  });
  const messages = r.messages();
  expect(messages.map((m) => m.method ?? m.id)).toEqual(['notifications/progress', 5]);
});

test("headers are built from the body and the service's own x-mcp-header annotations: integers decimal, booleans lowercase, nested paths, null omitted", async () => {
  const tool = {
    name: 'route',
    inputSchema: {
      type: 'object',
      properties: {
        region: { type: 'string', 'x-mcp-header': 'Region' },
        priority: { type: 'integer', minimum: -100, maximum: 100, 'x-mcp-header': 'Priority' },
        dry: { type: 'boolean', 'x-mcp-header': 'Dry-Run' },
        target: { type: 'object', properties: { zone: { type: 'string', 'x-mcp-header': 'Zone' } } },
        note: { type: ['string', 'null'] },
      },
    },
  };
  const bad = {
    name: 'bad',
    inputSchema: { type: 'object', properties: { n: { type: 'number', 'x-mcp-header': 'N' } } },
  };
  const f = await fake((req, res) => {
    if (req.body.method === 'tools/list') {
      sendJson(res, 200, ok(req, { tools: [tool, bad], ttlMs: 0, cacheScope: 'private' }));
      return;
    }
    sendJson(res, 200, ok(req, { content: [], isError: false }));
  });
  const r = relay(f.url);
  const call = await r.call(1, 'tools/call', {
    name: 'route',
    arguments: { region: 'eu west ', priority: -7, dry: false, target: { zone: 'Zürich' }, note: null },
  });
  expect(call.result).toBeDefined();
  const sent = f.requests.filter((q) => q.body.method === 'tools/call');
  expect(sent).toHaveLength(1);
  const h = sent[0]!.headers;
  expect(h['mcp-protocol-version']).toBe(VERSION);
  expect(h['mcp-method']).toBe('tools/call');
  expect(h['mcp-name']).toBe('route');
  expect(h['mcp-param-region']).toBe(`=?base64?${Buffer.from('eu west ').toString('base64')}?=`);
  expect(h['mcp-param-priority']).toBe('-7');
  expect(h['mcp-param-dry-run']).toBe('false');
  expect(h['mcp-param-zone']).toBe(`=?base64?${Buffer.from('Zürich').toString('base64')}?=`);
  expect(h.authorization).toBe(`Bearer ${TOKEN}`);
  expect(h.accept).toBe('application/json, text/event-stream');
  expect(h['content-type']).toBe('application/json');
  expect(h.origin).toBeUndefined();
  // The relay learned the annotations with one tools/list of its own, sent with the same token.
  const lists = f.requests.filter((q) => q.body.method === 'tools/list');
  expect(lists).toHaveLength(1);
  expect(lists[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);

  // A second call with the value absent sends no Mcp-Param header for it, and needs no second tools/list.
  await r.call(2, 'tools/call', { name: 'route', arguments: { region: 'plain' } });
  const second = f.requests.filter((q) => q.body.method === 'tools/call')[1]!.headers;
  expect(second['mcp-param-region']).toBe('plain');
  expect(second['mcp-param-priority']).toBeUndefined();
  expect(f.requests.filter((q) => q.body.method === 'tools/list')).toHaveLength(1);

  // A tools/list the client asks for leaves out the tool with an invalid annotation, with a warning on stderr.
  const list = await r.call(3, 'tools/list');
  expect((list.result?.tools as { name: string }[]).map((t) => t.name)).toEqual(['route']);
  expect(r.stderr).toMatch(/tool "bad" is left out of tools\/list: invalid x-mcp-header/);
});

test('cancelling a request closes its HTTP request at the server', async () => {
  let closed: () => void = () => undefined;
  const serverSawClose = new Promise<void>((resolve) => (closed = resolve));
  const f = await fake((req, res) => {
    if (req.body.method === 'tools/list') {
      sendJson(res, 200, ok(req, { tools: [{ name: 'slow', inputSchema: { type: 'object' } }] }));
      return;
    }
    // Never answers: only the client going away ends this request.
    res.once('close', () => closed());
  });
  const r = relay(f.url);
  r.request('hang', 'tools/call', { name: 'slow', arguments: {} });
  await r.until(() => f.requests.some((q) => q.body.method === 'tools/call'), 10_000, 'the call to reach the fake');
  r.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'hang' } });
  await serverSawClose;
  expect(await r.end()).toEqual({ code: 0, signal: null });
  expect(r.lines).toEqual([]);
  // The cancellation is the disconnect; the notification itself is not posted.
  expect(f.requests.some((q) => q.body.method === 'notifications/cancelled')).toBe(false);
});

test('a JSON-RPC response sent by the client is dropped; a batch is -32600 without id', async () => {
  const f = await fake((req, res) => sendJson(res, 200, ok(req, {})));
  const r = relay(f.url);
  r.send({ jsonrpc: '2.0', id: 1, result: {} });
  r.send([{ jsonrpc: '2.0', id: 2, method: 'tools/list' }]);
  await r.until(() => r.lines.length === 1, 10_000, 'the batch error');
  await r.call(3, 'server/discover');
  const [batch, reply] = r.messages();
  expect(batch).toEqual({
    jsonrpc: '2.0',
    error: { code: -32600, message: expect.stringMatching(/batch/) as unknown },
  });
  expect(reply!.id).toBe(3);
  expect(f.requests.map((q) => q.body.method)).toEqual(['server/discover']);
});
