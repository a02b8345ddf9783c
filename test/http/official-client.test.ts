/**
 * The official MCP client (@modelcontextprotocol/client v2, pinned to 2026-07-28, with a bearer header) against
 * the live service on a loopback port, on the real engine and embedded chain. Results are parsed with
 * @modelcontextprotocol/core's schemas; the fields those schemas leave optional for older revisions (resultType,
 * ttlMs, cacheScope, the server's name) are asserted here, from the raw wire replies.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  CallToolResultSchema,
  DiscoverResultSchema,
  ListResourcesResultSchema,
  ListToolsResultSchema,
  ReadResourceResultSchema,
} from '@modelcontextprotocol/core';
import { makeWorld, type World } from '../support/world';
import { makeApp, serveConfig, TOKEN } from './support';

let w: World;
let server: http.Server;
let url: URL;
/** Every JSON-RPC reply the client received, by method, as it came over the wire. */
const wire = new Map<string, Record<string, unknown>[]>();
/** The Mcp-Param-Key header of every tools/call the client sent. */
const keyHeaders: (string | null)[] = [];

beforeAll(async () => {
  w = await makeWorld({ keys: { alpha: {} } });
  const app = makeApp({ config: serveConfig({}, w.config), engine: w.engine });
  server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await w.close();
});

/** A fetch that records each reply body under the request's method, then hands the client the same bytes. */
const recordingFetch: typeof fetch = async (input, init) => {
  const method = (JSON.parse(typeof init?.body === 'string' ? init.body : '{}') as { method?: string }).method ?? '?';
  if (method === 'tools/call') keyHeaders.push(new Headers(init?.headers).get('mcp-param-key'));
  const res = await fetch(input, init);
  const text = await res.text();
  if (text) wire.set(method, [...(wire.get(method) ?? []), JSON.parse(text) as Record<string, unknown>]);
  return new Response(text, { status: res.status, headers: res.headers });
};

async function connect(token = TOKEN): Promise<Client> {
  const client = new Client(
    { name: 'official-client-test', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      fetch: recordingFetch,
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

function lastResult(method: string): Record<string, unknown> {
  const replies = wire.get(method);
  expect(replies?.length).toBeGreaterThan(0);
  return replies![replies!.length - 1]!.result as Record<string, unknown>;
}

function expectServedBySigner(result: Record<string, unknown>, cacheable: boolean): void {
  expect(result.resultType).toBe('complete');
  expect((result._meta as Record<string, { name: string }>)['io.modelcontextprotocol/serverInfo']!.name).toBe(
    'sa-forge-signer',
  );
  if (cacheable) {
    expect(result.ttlMs).toBe(300_000);
    expect(result.cacheScope).toBe('private');
  }
}

test('discovers, lists tools, calls key_show and check, lists and reads resources', async () => {
  const client = await connect();
  try {
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const discover = DiscoverResultSchema.parse(lastResult('server/discover'));
    expect(discover.supportedVersions).toEqual(['2026-07-28']);
    expectServedBySigner(lastResult('server/discover'), true);

    const tools = ListToolsResultSchema.parse(await client.listTools());
    expect(tools.tools.map((t) => t.name)).toEqual(['check', 'sign', 'key_show', 'halt']);
    expectServedBySigner(lastResult('tools/list'), true);

    const shown = CallToolResultSchema.parse(await client.callTool({ name: 'key_show', arguments: { key: 'alpha' } }));
    expect(shown.isError).toBe(false);
    expect((shown.structuredContent as { keys: { name: string; pubkey: string }[] }).keys[0]).toMatchObject({
      name: 'alpha',
      pubkey: w.keys.alpha!.pubkey,
    });
    expectServedBySigner(lastResult('tools/call'), false);

    const checked = CallToolResultSchema.parse(
      await client.callTool({ name: 'check', arguments: { payload: w.transfer('alpha', 1_000_000) } }),
    );
    expect(checked.isError).toBe(false);
    expect(checked.structuredContent).toMatchObject({ outcome: 'ok', key: 'alpha' });
    expect(JSON.parse((checked.content[0] as { text: string }).text)).toEqual(checked.structuredContent);

    const resources = ListResourcesResultSchema.parse(await client.listResources());
    expect(resources.resources.map((r) => r.uri)).toEqual([
      'signer://docs/skill',
      'signer://docs/payload',
      'signer://docs/checks',
      'signer://docs/outcomes',
    ]);
    expectServedBySigner(lastResult('resources/list'), true);

    const skill = ReadResourceResultSchema.parse(await client.readResource({ uri: 'signer://docs/skill' }));
    expect(skill.contents[0]).toMatchObject({ uri: 'signer://docs/skill', mimeType: 'text/markdown' });
    expect((skill.contents[0] as { text: string }).text).toMatch(/check/);
    expectServedBySigner(lastResult('resources/read'), true);
  } finally {
    await client.close();
  }
});

test('the client sent the SEP-2243 Key header the tool annotation asks for, and the service accepted it', async () => {
  const client = await connect();
  try {
    const tools = await client.listTools();
    const keyShow = tools.tools.find((t) => t.name === 'key_show')!;
    expect((keyShow.inputSchema.properties as Record<string, Record<string, unknown>>).key!['x-mcp-header']).toBe(
      'Key',
    );
    // A key name the service does not know: the header check passes (it matches the body), the engine refuses.
    const r = await client.callTool({ name: 'key_show', arguments: { key: 'no-such-key' } });
    expect(keyHeaders[keyHeaders.length - 1]).toBe('no-such-key');
    expect(r.isError).toBe(true);
  } finally {
    await client.close();
  }
});

test('a wrong token cannot connect', async () => {
  await expect(connect('sfs_wrong')).rejects.toThrow();
});
