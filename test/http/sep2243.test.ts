/**
 * SEP-2243 server requirements (seeds/001): the x-mcp-header "Key" on every tool's `key`, Mcp-Param-Key
 * validated against the body, strict base64, and the start-up check of tool definitions.
 */
import request from 'supertest';
import { makeApp, headersFor, rpc, serveConfig, type RpcReply } from './support';
import {
  collectParamAnnotations,
  headerMatchesValue,
  checkParamHeaders,
  collectMcpHeaders,
} from '../../src/mcp/headers';
import { decodeHeaderValue, decodeStrictBase64 } from '../../src/mcp/base64';

const app = makeApp();
const post = async (body: object, headers: Record<string, string>) => {
  const r = await request(app).post('/mcp').set(headers).send(body);
  return { status: r.status, body: r.body as RpcReply };
};
/** What these tests read of a tools/list entry. */
type ListedTool = { name: string; inputSchema: { properties: { key: Record<string, unknown> } } };
const toolsOf = (reply: RpcReply) => reply.result?.tools as ListedTool[];
const b64 = (s: string) => `=?base64?${Buffer.from(s, 'utf8').toString('base64')}?=`;

// key_show with a key runs the engine; this app has none, so a request that passes header validation is a
// tool result (isError, "no engine") rather than a -32020: enough to tell the two apart.
function keyShow(key: unknown) {
  return rpc('tools/call', { name: 'key_show', arguments: key === undefined ? {} : { key } });
}

describe('sep-2243-x-mcp-header: the key argument of all four tools carries x-mcp-header "Key"', () => {
  test('every tool annotates key, and only key', async () => {
    const r = await post(rpc('tools/list'), headersFor({ method: 'tools/list' }));
    const tools = toolsOf(r.body);
    expect(tools).toHaveLength(4);
    for (const t of tools) {
      expect(t.inputSchema.properties.key['x-mcp-header']).toBe('Key');
      expect(collectParamAnnotations(t.name, t.inputSchema)).toEqual([
        { header: 'Key', headerLower: 'mcp-param-key', path: ['key'], field: 'arguments.key', type: 'string' },
      ]);
    }
  });

  test('serve.param_headers false serves the tools without the annotation and expects no header', async () => {
    const plain = makeApp({ config: serveConfig({ param_headers: false }) });
    const list = await request(plain)
      .post('/mcp')
      .set(headersFor({ method: 'tools/list' }))
      .send(rpc('tools/list'));
    const tools = toolsOf(list.body as RpcReply);
    expect(tools).toHaveLength(4);
    for (const t of tools) expect(t.inputSchema.properties.key['x-mcp-header']).toBeUndefined();
    const body = keyShow('play');
    const h = headersFor(body);
    delete h['Mcp-Param-Key'];
    const r = await request(plain).post('/mcp').set(h).send(body);
    expect((r.body as RpcReply).result).toBeDefined();
  });
});

describe('sep-2243-server-validate-param-match and reject-param-mismatch', () => {
  test('a matching plain header passes validation', async () => {
    const r = await post(keyShow('play'), headersFor(keyShow('play')));
    expect(r.status).toBe(200);
    expect(r.body.result?.isError).toBe(true); // no engine here: the tool ran and reported it
  });

  test('rejects Mcp-Param-Key that differs from the body (400, -32020)', async () => {
    const body = keyShow('play');
    const r = await post(body, { ...headersFor(body), 'Mcp-Param-Key': 'other' });
    expect([r.status, r.body.error?.code]).toEqual([400, -32020]);
    expect(r.body.error?.message).toMatch(/Mcp-Param-Key/);
  });

  test('sep-2243-server-reject-missing: a key in the body without its header is 400 -32020', async () => {
    const body = keyShow('test-value');
    const h = headersFor(body);
    delete h['Mcp-Param-Key'];
    const r = await post(body, h);
    expect([r.status, r.body.error?.code]).toEqual([400, -32020]);
  });

  test('sep-2243-server-not-expect-null: key null or omitted needs no header', async () => {
    for (const body of [keyShow(null), keyShow(undefined)]) {
      const r = await post(body, headersFor(body));
      expect(r.status).toBe(200);
      expect(r.body.error).toBeUndefined();
    }
  });

  test('a header sent while the key is absent is a mismatch', async () => {
    const body = keyShow(undefined);
    const r = await post(body, { ...headersFor(body), 'Mcp-Param-Key': 'play' });
    expect(r.body.error?.code).toBe(-32020);
  });

  test('header names are matched ignoring case', async () => {
    const body = keyShow('play');
    const h = headersFor(body);
    delete h['Mcp-Param-Key'];
    const r = await post(body, { ...h, 'mcp-param-KEY': 'play' });
    expect(r.status).toBe(200);
  });
});

describe('sep-2243-server-decode-base64 and reject-invalid-param-chars (the harness cases)', () => {
  test.each([
    ['Hello', b64('Hello'), 200],
    ['Hello', '=?base64?SGVsbG8?=', 400], // bad padding: Node's decoder would accept it
    ['Hello', '=?base64?SGVs!!!bG8=?=', 400], // bad alphabet
    ['SGVsbG8=', 'SGVsbG8=', 200], // a plain value that looks like base64
    ['=?base64?SGVsbG8=', '=?base64?SGVsbG8=', 200], // no suffix: a literal
    ['Hello, 世界', b64('Hello, 世界'), 200],
    [' padded ', b64(' padded '), 200],
    ['Hello', '=?BASE64?SGVsbG8=?=', 400], // the sentinel is case-sensitive: this is a literal that differs
  ])('body %j with header %j → %i', async (value, header, status) => {
    const body = keyShow(value);
    const r = await post(body, { ...headersFor(body), 'Mcp-Param-Key': header });
    expect(r.status).toBe(status);
    if (status === 400) expect(r.body.error?.code).toBe(-32020);
  });

  test('control characters and non-ASCII in a raw header value are rejected', () => {
    const h = collectMcpHeaders(['Mcp-Param-Key', 'caf\u00e9']);
    expect(
      checkParamHeaders(
        h,
        [{ header: 'Key', headerLower: 'mcp-param-key', path: ['key'], field: 'arguments.key', type: 'string' }],
        { key: 'café' },
      ),
    ).toMatch(/invalid characters/);
  });

  test('a repeated Mcp- header is refused as ambiguous', () => {
    const h = collectMcpHeaders(['Mcp-Method', 'tools/list', 'mcp-method', 'tools/list']);
    expect(h.duplicate).toBe('mcp-method');
  });
});

describe('strict base64', () => {
  test('accepts canonical base64 of UTF-8 only', () => {
    expect(decodeStrictBase64('SGVsbG8=')).toBe('Hello');
    expect(decodeStrictBase64('')).toBe('');
    expect(decodeStrictBase64('SGVsbG8')).toBeNull();
    expect(decodeStrictBase64('SGVsbG9=')).toBeNull(); // non-zero pad bits
    expect(decodeStrictBase64('SGVs bG8=')).toBeNull();
    expect(decodeStrictBase64('SGVsbG8_')).toBeNull(); // base64url alphabet
    expect(decodeStrictBase64('/w==')).toBeNull(); // 0xff is not UTF-8
    expect(decodeHeaderValue('=?base64??=')).toEqual({ ok: true, value: '' });
  });
});

describe('sep-2243-client-encode-values, compared generically for integer and boolean parameters', () => {
  test('integers compare numerically with strict parsing; booleans as true/false', () => {
    expect(headerMatchesValue('42', 42)).toBe(true);
    expect(headerMatchesValue('42.0', 42)).toBe(true);
    expect(headerMatchesValue('-7', -7)).toBe(true);
    expect(headerMatchesValue('0x2A', 42)).toBe(false);
    expect(headerMatchesValue('', 0)).toBe(false);
    expect(headerMatchesValue('4.2e1', 42)).toBe(false);
    expect(headerMatchesValue('true', true)).toBe(true);
    expect(headerMatchesValue('True', true)).toBe(false);
    expect(headerMatchesValue('false', false)).toBe(true);
    expect(headerMatchesValue('1', true)).toBe(false);
    expect(headerMatchesValue('{}', { a: 1 })).toBe(false);
  });

  test('a nested annotated integer is found and validated through its properties chain', () => {
    const schema = {
      type: 'object',
      properties: {
        opts: { type: 'object', properties: { n: { type: 'integer', minimum: 0, maximum: 10, 'x-mcp-header': 'N' } } },
      },
    };
    const ann = collectParamAnnotations('t', schema);
    expect(ann).toEqual([
      { header: 'N', headerLower: 'mcp-param-n', path: ['opts', 'n'], field: 'arguments.opts.n', type: 'integer' },
    ]);
    expect(checkParamHeaders(collectMcpHeaders(['Mcp-Param-N', '3']), ann, { opts: { n: 3 } })).toBeNull();
    expect(checkParamHeaders(collectMcpHeaders(['Mcp-Param-N', '4']), ann, { opts: { n: 3 } })).toMatch(
      /does not match/,
    );
  });
});

describe('start-up validation of x-mcp-header annotations (the service refuses to start on a violation)', () => {
  const obj = (props: object) => ({ type: 'object', properties: props });
  test.each([
    ['empty', obj({ a: { type: 'string', 'x-mcp-header': '' } }), /empty/],
    ['not an RFC 9110 token', obj({ a: { type: 'string', 'x-mcp-header': 'Has Space' } }), /token/],
    ['a colon', obj({ a: { type: 'string', 'x-mcp-header': 'A:B' } }), /token/],
    [
      'duplicate ignoring case',
      obj({ a: { type: 'string', 'x-mcp-header': 'Key' }, b: { type: 'string', 'x-mcp-header': 'KEY' } }),
      /twice/,
    ],
    ['on a number', obj({ a: { type: 'number', 'x-mcp-header': 'A' } }), /only a single integer, string or boolean/],
    ['on a nullable union', obj({ a: { type: ['string', 'null'], 'x-mcp-header': 'A' } }), /only a single/],
    ['on an integer without safe bounds', obj({ a: { type: 'integer', 'x-mcp-header': 'A' } }), /safe range/],
    ['under items', obj({ a: { type: 'array', items: { type: 'string', 'x-mcp-header': 'A' } } }), /properties alone/],
    ['under anyOf', obj({ a: { anyOf: [{ type: 'string', 'x-mcp-header': 'A' }] } }), /properties alone/],
    ['at the root', { type: 'object', 'x-mcp-header': 'A' }, /properties alone/],
  ])('refuses an annotation %s', (_what, schema, message) => {
    expect(() => collectParamAnnotations('bad_tool', schema)).toThrow(message);
    expect(() => collectParamAnnotations('bad_tool', schema)).toThrow(/bad_tool/);
  });
});
