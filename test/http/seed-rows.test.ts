/**
 * One test per behaviour of the signer's MCP conformance record (its tables: Revision, Scope, A request, The HTTP
 * transport, Tools and resources), each named after its row, against the real app (createApp) over supertest.
 * Rows that need the engine (tool results) are in tools-engine.test.ts.
 */
import request from 'supertest';
import { makeApp, headersFor, rpc, META, TOKEN, VERSION, type RpcReply } from './support';

const app = makeApp();
const post = async (body: unknown, headers: Record<string, string>) => {
  const r = await request(app)
    .post('/mcp')
    .set(headers)
    .send(body as object);
  return {
    status: r.status,
    headers: r.headers as Record<string, string | undefined>,
    text: r.text,
    body: r.body as RpcReply,
  };
};
const call = (body: ReturnType<typeof rpc>) => post(body, headersFor(body));

function without(h: Record<string, string>, name: string): Record<string, string> {
  return Object.fromEntries(Object.entries(h).filter(([k]) => k !== name));
}

describe('seed § Revision', () => {
  test('row: the signer speaks 2026-07-28 and nothing earlier', async () => {
    const r = await call(rpc('server/discover'));
    expect(r.status).toBe(200);
    expect(r.body.result?.supportedVersions).toEqual(['2026-07-28']);
  });

  test("row: an earlier client's initialize gets -32022 naming 2026-07-28, on HTTP 400", async () => {
    const body = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'old', version: '1' } },
    };
    const r = await post(body, { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' });
    expect(r.status).toBe(400);
    expect(r.body.id).toBe(1);
    expect(r.body.error?.code).toBe(-32022);
    expect(r.body.error?.message).toContain('2026-07-28');
    expect(r.body.error?.data).toEqual({ supported: ['2026-07-28'], requested: '2025-11-25' });
  });
});

describe('seed § Scope', () => {
  test('row server/discover: supportedVersions, capabilities (tools, resources) and instructions', async () => {
    const r = await call(rpc('server/discover'));
    expect(r.body.result).toMatchObject({
      supportedVersions: ['2026-07-28'],
      capabilities: { tools: {}, resources: {} },
    });
    expect(r.body.result?.instructions).toContain('signer://docs/skill');
  });

  test('row tools/list: check, sign, key_show and halt, each with an inputSchema, always in that order', async () => {
    const r = await call(rpc('tools/list'));
    const tools = r.body.result?.tools as {
      name: string;
      inputSchema: { type: string };
      description: string;
      outputSchema: object;
      annotations: object;
    }[];
    expect(tools.map((t) => t.name)).toEqual(['check', 'sign', 'key_show', 'halt']);
    for (const t of tools) {
      expect(t.inputSchema.type).toBe('object');
      expect(t.description.length).toBeGreaterThan(20);
      expect(t.outputSchema).toBeDefined();
      expect(t.annotations).toBeDefined();
    }
    expect(r.body.result?.nextCursor).toBeUndefined();
  });

  test('row resources/list, resources/read: four static texts', async () => {
    const list = await call(rpc('resources/list'));
    const uris = (list.body.result?.resources as { uri: string }[]).map((x) => x.uri);
    expect(uris).toEqual([
      'signer://docs/skill',
      'signer://docs/payload',
      'signer://docs/checks',
      'signer://docs/outcomes',
    ]);
    for (const uri of uris) {
      const read = await call(rpc('resources/read', { uri }));
      expect(read.status).toBe(200);
      expect(read.body.result?.contents).toEqual([
        { uri, mimeType: 'text/markdown', text: expect.stringMatching(/^# /) as unknown },
      ]);
    }
    const templates = await call(rpc('resources/templates/list'));
    expect(templates.body.result?.resourceTemplates).toEqual([]);
  });

  test('row any notification: accepted and ignored (202, no body)', async () => {
    const r = await post(
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    );
    expect(r.status).toBe(202);
    expect(r.text).toBe('');
  });

  test('row initialize: from a client of this revision (its _meta names 2026-07-28) it is a removed method, -32601 on 404', async () => {
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const r = await post(
      { jsonrpc: '2.0', id: 'm', method: 'initialize', params: { _meta: meta } },
      headersFor({ method: 'initialize' }),
    );
    expect(r.status).toBe(404);
    expect(r.body.error?.code).toBe(-32601);
  });

  test('row initialize: error -32022, as above', async () => {
    const r = await post(
      { jsonrpc: '2.0', id: 'i', method: 'initialize', params: {} },
      headersFor({ method: 'initialize' }),
    );
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: -32022, data: { requested: '' } });
  });

  test.each([
    'ping',
    'prompts/list',
    'completion/complete',
    'logging/setLevel',
    'resources/subscribe',
    'subscriptions/listen',
    'tasks/list',
    'unknown/method',
  ])('row anything else, ping included: -32601 on HTTP 404 (%s)', async (method) => {
    const r = await call(rpc(method));
    expect(r.status).toBe(404);
    expect(r.body.error?.code).toBe(-32601);
    expect(r.body.id).toBeDefined();
  });

  test('row every result: resultType complete and the server named in _meta; caching hints on discover, lists and a read', async () => {
    const cacheable = [
      rpc('server/discover'),
      rpc('tools/list'),
      rpc('resources/list'),
      rpc('resources/templates/list'),
      rpc('resources/read', { uri: 'signer://docs/skill' }),
    ];
    for (const body of cacheable) {
      const r = await call(body);
      expect(r.body.result?.resultType).toBe('complete');
      const meta = r.body.result?._meta as Record<string, unknown> | undefined;
      expect(meta?.['io.modelcontextprotocol/serverInfo']).toEqual({ name: 'sa-forge-signer', version: '9.9.9-test' });
      expect(r.body.result?.ttlMs).toBe(300000);
      expect(r.body.result?.cacheScope).toBe('private');
    }
  });
});

describe('seed § A request', () => {
  test.each([
    ['null', null],
    ['a fraction', 1.5],
    ['an object', { a: 1 }],
    ['a boolean', true],
  ])('row a request id is a string or an integer, never null: %s is -32600 on 400', async (_what, id) => {
    const r = await post(
      { jsonrpc: '2.0', id, method: 'tools/list', params: { _meta: META } },
      headersFor({ method: 'tools/list' }),
    );
    expect(r.status).toBe(400);
    expect(r.body.error?.code).toBe(-32600);
    expect('id' in r.body).toBe(false);
  });

  test('row a request id may be a string or an integer (echoed as given)', async () => {
    expect((await call(rpc('tools/list', {}, 'abc'))).body.id).toBe('abc');
    expect((await call(rpc('tools/list', {}, 7))).body.id).toBe(7);
  });

  test.each([
    ['no params', undefined],
    ['params without _meta', {}],
    ['no protocolVersion', { _meta: { 'io.modelcontextprotocol/clientCapabilities': {} } }],
    ['no clientCapabilities', { _meta: { 'io.modelcontextprotocol/protocolVersion': VERSION } }],
    ['clientCapabilities not an object', { _meta: { ...META, 'io.modelcontextprotocol/clientCapabilities': 'all' } }],
  ])(
    'row params._meta carries protocolVersion and clientCapabilities; without them -32602 on 400 (%s)',
    async (_what, params) => {
      const r = await post(
        { jsonrpc: '2.0', id: 3, method: 'server/discover', ...(params === undefined ? {} : { params }) },
        headersFor({ method: 'server/discover' }),
      );
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ id: 3, error: { code: -32602 } });
    },
  );

  test('row a version the server does not implement is -32022 with data.supported and data.requested, on 400', async () => {
    const body = {
      jsonrpc: '2.0',
      id: 4,
      method: 'tools/list',
      params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': 'v999.0.0' } },
    };
    const r = await post(body, { ...headersFor(body), 'MCP-Protocol-Version': 'v999.0.0' });
    expect(r.status).toBe(400);
    expect(r.body.error?.code).toBe(-32022);
    expect(r.body.error?.data).toEqual({ supported: ['2026-07-28'], requested: 'v999.0.0' });
  });

  test('row a server must not rely on earlier requests: each request stands alone', async () => {
    const bad = {
      jsonrpc: '2.0',
      id: 5,
      method: 'tools/list',
      params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '2025-11-25' } },
    };
    expect((await post(bad, { ...headersFor(bad), 'MCP-Protocol-Version': '2025-11-25' })).status).toBe(400);
    expect((await call(rpc('tools/list'))).status).toBe(200);
  });
});

describe('seed § The HTTP transport', () => {
  test('row a request is answered with Content-Type application/json', async () => {
    const r = await call(rpc('tools/list'));
    expect(r.headers['content-type']).toBe('application/json');
    const e = await call(rpc('ping'));
    expect(e.headers['content-type']).toBe('application/json');
  });

  test('row an accepted notification gets 202 Accepted with no body', async () => {
    const r = await post(
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
      headersFor({ method: 'notifications/cancelled' }),
    );
    expect(r.status).toBe(202);
    expect(r.text).toBe('');
    expect(r.headers['content-length']).toBeUndefined();
  });

  test('row every POST carries MCP-Protocol-Version matching _meta: missing is -32020 on 400', async () => {
    const body = rpc('tools/list');
    const r = await post(body, without(headersFor(body), 'MCP-Protocol-Version'));
    expect(r.status).toBe(400);
    expect(r.body.error?.code).toBe(-32020);
  });

  test('row every POST carries MCP-Protocol-Version matching _meta: different is -32020 on 400 (before the version check)', async () => {
    const body = {
      jsonrpc: '2.0',
      id: 6,
      method: 'tools/list',
      params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': 'v999.0.0' } },
    };
    const r = await post(body, headersFor(body));
    expect(r.status).toBe(400);
    expect(r.body.error?.code).toBe(-32020);
  });

  test('row every request carries Mcp-Method matching the body: missing or different is -32020 on 400', async () => {
    const body = rpc('tools/list');
    expect((await post(body, without(headersFor(body), 'Mcp-Method'))).body.error?.code).toBe(-32020);
    const wrong = await post(body, { ...headersFor(body), 'Mcp-Method': 'prompts/list' });
    expect([wrong.status, wrong.body.error?.code]).toEqual([400, -32020]);
    const upper = await post(body, { ...headersFor(body), 'Mcp-Method': 'TOOLS/LIST' });
    expect([upper.status, upper.body.error?.code]).toEqual([400, -32020]);
  });

  test('row header names match whatever their case', async () => {
    const body = rpc('tools/list');
    const r = await post(body, {
      Authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      'mcp-protocol-version': VERSION,
      'MCP-METHOD': 'tools/list',
    });
    expect(r.status).toBe(200);
  });

  test('row tools/call and resources/read carry Mcp-Name matching params.name or params.uri: missing or different is -32020 on 400', async () => {
    const read = rpc('resources/read', { uri: 'signer://docs/skill' });
    expect((await post(read, without(headersFor(read), 'Mcp-Name'))).body.error?.code).toBe(-32020);
    const other = await post(read, { ...headersFor(read), 'Mcp-Name': 'signer://docs/payload' });
    expect([other.status, other.body.error?.code]).toEqual([400, -32020]);
    const tool = rpc('tools/call', { name: 'key_show', arguments: {} });
    const wrongTool = await post(tool, { ...headersFor(tool), 'Mcp-Name': 'wrong_tool_name' });
    expect([wrongTool.status, wrongTool.body.error?.code]).toEqual([400, -32020]);
  });

  test('row a Mcp-Name sent as =?base64?...?= is decoded before it is compared', async () => {
    const read = rpc('resources/read', { uri: 'signer://docs/skill' });
    const encoded = `=?base64?${Buffer.from('signer://docs/skill').toString('base64')}?=`;
    expect((await post(read, { ...headersFor(read), 'Mcp-Name': encoded })).status).toBe(200);
    const badPadding = await post(read, { ...headersFor(read), 'Mcp-Name': '=?base64?c2lnbmVyOi8vZG9jcy9za2lsbA?=' });
    expect([badPadding.status, badPadding.body.error?.code]).toEqual([400, -32020]);
  });

  test('row a method the server does not implement is 404 with -32601', async () => {
    const r = await call(rpc('prompts/get', { name: 'x' }));
    expect([r.status, r.body.error?.code]).toEqual([404, -32601]);
  });

  test.each(['get', 'delete'] as const)(
    'row a server of this revision alone answers %s with 405 Method Not Allowed',
    async (m) => {
      const r = await request(app)[m]('/mcp').set('Authorization', `Bearer ${TOKEN}`);
      expect(r.status).toBe(405);
      expect(r.headers.allow).toBe('POST');
    },
  );

  test('row the Origin header must be validated; an invalid one is 403 (Origin and Host name an allowed_hosts entry)', async () => {
    const body = rpc('tools/list');
    const evilOrigin = await post(body, { ...headersFor(body), Origin: 'http://evil.example' });
    expect(evilOrigin.status).toBe(403);
    expect(evilOrigin.body).toEqual({ error: 'origin "http://evil.example" is not allowed' });
    expect((await post(body, { ...headersFor(body), Origin: 'null' })).status).toBe(403);
    const evilHost = await post(body, { ...headersFor(body), Host: 'evil.example' });
    expect(evilHost.status).toBe(403);
    expect((await post(body, { ...headersFor(body), Origin: 'http://localhost:8790' })).status).toBe(200);
  });

  test('row Mcp-Session-Id and Last-Event-ID are ignored (never read, never minted)', async () => {
    const body = rpc('tools/list');
    const r = await post(body, { ...headersFor(body), 'Mcp-Session-Id': 'abc', 'Last-Event-ID': '42' });
    expect(r.status).toBe(200);
    expect(r.headers['mcp-session-id']).toBeUndefined();
  });

  describe('the order of checks: token, one JSON message, initialize, _meta, headers, version', () => {
    test('a request without a known token is 401 before the body is read, plain JSON, even with a 5 MiB body', async () => {
      const big = Buffer.alloc(5 * 1024 * 1024, 0x20);
      const r = await request(app).post('/mcp').set('Content-Type', 'application/json').send(big.toString());
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ error: 'missing or unknown bearer token' });
      expect(r.headers['www-authenticate']).toMatch(/^Bearer /);
      const wrong = await post(rpc('tools/list'), {
        ...headersFor({ method: 'tools/list' }),
        Authorization: 'Bearer nope',
      });
      expect(wrong.status).toBe(401);
    });

    test('a body that is not JSON is -32700 with no id', async () => {
      const r = await request(app)
        .post('/mcp')
        .set(headersFor({ method: 'tools/list' }))
        .send('{"jsonrpc":');
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: expect.any(String) as unknown } });
    });

    test('a batch is -32600 with no id', async () => {
      const r = await post([rpc('tools/list')], headersFor({ method: 'tools/list' }));
      expect([r.status, r.body.error?.code, 'id' in r.body]).toEqual([400, -32600, false]);
    });

    test('a response object is -32600', async () => {
      const r = await post({ jsonrpc: '2.0', id: 9, result: {} }, headersFor({ method: 'tools/list' }));
      expect([r.status, r.body.error?.code, r.body.id]).toEqual([400, -32600, 9]);
    });

    test('initialize comes before the headers: no MCP headers still gives -32022, not -32020', async () => {
      const r = await post(
        { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18' } },
        { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
      );
      expect(r.body.error?.code).toBe(-32022);
    });

    test('_meta comes before the headers: no _meta and no headers gives -32602', async () => {
      const r = await post(
        { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
        { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
      );
      expect([r.status, r.body.error?.code]).toEqual([400, -32602]);
    });

    test('headers come before the version: header 2026-07-28 with _meta v999 gives -32020; both v999 gives -32022', async () => {
      const body = {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': 'v999' } },
      };
      expect((await post(body, { ...headersFor(body), 'MCP-Protocol-Version': VERSION })).body.error?.code).toBe(
        -32020,
      );
      expect((await post(body, { ...headersFor(body), 'MCP-Protocol-Version': 'v999' })).body.error?.code).toBe(-32022);
    });
  });
});

describe('seed § Tools and resources', () => {
  test('row an unknown tool is error -32602', async () => {
    const r = await call(rpc('tools/call', { name: 'transfer_all', arguments: {} }));
    expect(r.body.error?.code).toBe(-32602);
    expect(r.body.error?.message).toContain('transfer_all');
  });

  test('row a server with tools or resources declares the capability: both, as empty objects', async () => {
    const r = await call(rpc('server/discover'));
    expect(r.body.result?.capabilities).toEqual({ tools: {}, resources: {} });
  });

  test('row a resource that does not exist is -32602 with the uri in data; -32002 is never sent', async () => {
    const r = await call(rpc('resources/read', { uri: 'signer://docs/nope' }));
    expect(r.body.error).toEqual({ code: -32602, message: 'Resource not found', data: { uri: 'signer://docs/nope' } });
  });

  test('row a listed resource has uri, name, description and mimeType', async () => {
    const r = await call(rpc('resources/list'));
    const resources = r.body.result?.resources as unknown[];
    expect(resources.length).toBeGreaterThan(0);
    for (const res of resources) {
      expect(res).toMatchObject({
        uri: expect.any(String) as unknown,
        name: expect.any(String) as unknown,
        description: expect.any(String) as unknown,
        mimeType: 'text/markdown',
      });
    }
  });

  test('row arguments that fail the schema are a tool result with isError, not a protocol error', async () => {
    const r = await call(rpc('tools/call', { name: 'check', arguments: {} }));
    expect(r.status).toBe(200);
    expect(r.body.result?.isError).toBe(true);
    expect(r.body.result?.content).toEqual([
      expect.objectContaining({ text: expect.stringMatching(/payload is required/) as unknown }),
    ]);
    expect(r.body.result?.resultType).toBe('complete');
  });
});
