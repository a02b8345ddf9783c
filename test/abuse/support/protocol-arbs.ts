/**
 * fast-check arbitraries for whole HTTP requests to the MCP endpoint: well-formed requests for every method
 * (so fuzzing reaches the tools and the engine), then broken at every layer — the JSON-RPC envelope, `_meta`,
 * params and tool arguments, the SEP-2243 headers (case, duplicates, base64 junk, control characters, huge
 * values), authorisation, content types, the request line, and the body bytes (mutated, truncated, oversize).
 */
import fc from 'fast-check';
import { META, PROTOCOL_VERSION } from './mcp-client';
import type { RawHeader } from './raw-http';

export interface FuzzContext {
  token: string;
  /** Keys on the token (usable), a configured key not on the token, and names that are not keys. */
  keys: string[];
  otherKey: string;
  resourceUris: string[];
  /** A payload the signer would sign for `keys[0]` (a tiny transfer to an allowed destination). */
  validPayload: (lamports: number) => Record<string, unknown>;
  /** A payload the signer would refuse or fail to parse, from the payload arbitraries. */
  hostilePayload: fc.Arbitrary<unknown>;
  /** The summary that makes the engine under test throw an unexpected error (an injected internal fault). */
  faultMarker: string;
}

export interface FuzzCase {
  family: string;
  method: string;
  target: string;
  headers: RawHeader[];
  body: Buffer;
  contentLength?: number | 'omit';
  /** The client gives up mid-body: the server owes no answer. */
  endAfterWrite?: boolean;
  /** The request runs an injected internal fault: a 5xx or -32603 is the expected answer. */
  injectedFault?: boolean;
}

const KNOWN_METHODS = [
  'server/discover',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/read',
  'resources/templates/list',
];
const OTHER_METHODS = [
  'initialize',
  'ping',
  'prompts/get',
  'prompts/list',
  'completion/complete',
  'logging/setLevel',
  'resources/subscribe',
  'notifications/initialized',
  'notifications/cancelled',
  'tools/List',
  'TOOLS/CALL',
  '',
];
const TOOLS = ['check', 'sign', 'key_show', 'halt'];

/** Any JSON value, bounded so 20,000 cases stay fast. */
const json = fc.jsonValue({ maxDepth: 3, depthSize: 'small' });

const unicodeText = fc.string({ unit: 'binary', maxLength: 40 });
const controlChar = fc.constantFrom(
  '\u0001',
  '\u0007',
  '\u001b',
  '\u007f',
  '\t',
  '\u0085',
  '\u00ff',
  '\u0000',
  '\r',
  '\n',
  '\r\n ',
);
const base64Junk = fc.oneof(
  fc.string({
    unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_!*'.split('')),
    maxLength: 40,
  }),
  fc.uint8Array({ maxLength: 30 }).map((b) => Buffer.from(b).toString('base64').replace(/=+$/, '')),
  fc.uint8Array({ maxLength: 30 }).map((b) => Buffer.from(b).toString('base64url')),
  fc.uint8Array({ maxLength: 30 }).map((b) => `${Buffer.from(b).toString('base64')}==`),
);

/** Mixed case of a header name, from a seed (header names are case-insensitive). */
function recase(name: string, seed: number): string {
  let out = '';
  for (let i = 0; i < name.length; i++) out += (seed >> (i % 30)) & 1 ? name[i]!.toUpperCase() : name[i]!.toLowerCase();
  return out;
}

const id = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 1_000_000 }) },
  { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 1.5, -0, true, [], {}, 2 ** 60, Number.MAX_SAFE_INTEGER, '') },
);

const meta = fc.oneof(
  { weight: 12, arbitrary: fc.constant<unknown>(META) },
  { weight: 1, arbitrary: fc.constant<unknown>(undefined) },
  { weight: 1, arbitrary: json },
  {
    weight: 1,
    arbitrary: fc.record({
      'io.modelcontextprotocol/protocolVersion': fc.oneof(
        fc.constantFrom('2025-11-25', '2025-06-18', '2026-07-29', ''),
        unicodeText,
        json,
      ),
      'io.modelcontextprotocol/clientCapabilities': fc.oneof(fc.constant({}), json),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      'io.modelcontextprotocol/protocolVersion': fc.constant(PROTOCOL_VERSION),
      'io.modelcontextprotocol/clientCapabilities': fc.constant({}),
      'io.modelcontextprotocol/logLevel': fc.oneof(fc.constantFrom('debug', 'error', 'loud', 'INFO'), json),
    }),
  },
);

function keyArg(ctx: FuzzContext): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(undefined) },
    { weight: 4, arbitrary: fc.constantFrom(...ctx.keys) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<unknown>(null, ctx.otherKey, 'nobody', '', 'a'.repeat(65), 'ALPHA', '../alpha'),
    },
    { weight: 1, arbitrary: json },
  );
}

function toolArgs(ctx: FuzzContext, tool: string): fc.Arbitrary<unknown> {
  const payload = fc.oneof(
    { weight: 6, arbitrary: ctx.hostilePayload },
    { weight: 1, arbitrary: json },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 5000 }).map((n) => ctx.validPayload(n)) },
    { weight: 1, arbitrary: fc.constant({ ...ctx.validPayload(1), summary: ctx.faultMarker }) },
  );
  const wellFormed: Record<string, fc.Arbitrary<unknown>> = {
    check: fc.record({ payload, key: keyArg(ctx) }, { requiredKeys: ['payload'] }),
    sign: fc.record(
      { payload, key: keyArg(ctx), intent: fc.oneof(fc.string({ maxLength: 30 }), json) },
      { requiredKeys: ['payload'] },
    ),
    key_show: fc.record({ key: keyArg(ctx) }, { requiredKeys: [] }),
    // A valid halt is a legitimate ledger write: keep it rare by usually breaking the reason.
    halt: fc.record(
      {
        key: keyArg(ctx),
        reason: fc.oneof(
          { weight: 5, arbitrary: fc.constantFrom<unknown>('', ' ', null, 5, 'x'.repeat(1001)) },
          { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 20 }) },
        ),
      },
      { requiredKeys: [] },
    ),
  };
  return fc.oneof(
    { weight: 8, arbitrary: wellFormed[tool] ?? json },
    { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), json, { maxKeys: 4 }) },
    { weight: 1, arbitrary: json },
  );
}

/** `params` for a method: mostly the right shape, sometimes anything. */
function params(ctx: FuzzContext, method: string): fc.Arbitrary<unknown> {
  let base: fc.Arbitrary<Record<string, unknown>>;
  if (method === 'tools/call') {
    base = fc
      .constantFrom(...TOOLS, ...TOOLS, 'Check', 'sign ', 'transfer', '')
      .chain((name) => toolArgs(ctx, name).map((args) => ({ name, arguments: args })));
  } else if (method === 'resources/read') {
    base = fc
      .oneof(
        fc.constantFrom(...ctx.resourceUris),
        fc.constantFrom('signer://docs/../../etc/passwd', 'file:///etc/passwd', 'signer://docs/SKILL', ''),
        unicodeText,
      )
      .map((uri) => ({ uri }));
  } else if (method.endsWith('/list')) {
    base = fc.oneof(fc.constant({}), fc.record({ cursor: fc.oneof(fc.string({ maxLength: 10 }), json) }));
  } else base = fc.dictionary(fc.string({ maxLength: 8 }), json, { maxKeys: 3 });
  return fc.oneof(
    { weight: 12, arbitrary: fc.tuple(base, meta).map(([p, m]) => (m === undefined ? p : { ...p, _meta: m })) },
    { weight: 1, arbitrary: json },
  );
}

/** The headers a conforming client sends for this body. */
function conformingHeaders(ctx: FuzzContext, body: Record<string, unknown>): RawHeader[] {
  const h: RawHeader[] = [
    ['Host', '127.0.0.1'],
    ['Authorization', `Bearer ${ctx.token}`],
    ['Content-Type', 'application/json'],
    ['Accept', 'application/json, text/event-stream'],
  ];
  const p = (typeof body.params === 'object' && body.params !== null ? body.params : {}) as Record<string, unknown>;
  const m = (typeof p._meta === 'object' && p._meta !== null ? p._meta : {}) as Record<string, unknown>;
  const version = m['io.modelcontextprotocol/protocolVersion'];
  h.push(['MCP-Protocol-Version', typeof version === 'string' ? version : PROTOCOL_VERSION]);
  if (typeof body.method === 'string') h.push(['Mcp-Method', body.method]);
  const name = body.method === 'resources/read' ? p.uri : p.name;
  if (typeof name === 'string')
    h.push(['Mcp-Name', /^[\x20-\x7e]*$/.test(name) ? name : `=?base64?${Buffer.from(name).toString('base64')}?=`]);
  const args = p.arguments as Record<string, unknown> | undefined;
  if (args && typeof args === 'object' && typeof args.key === 'string') h.push(['Mcp-Param-Key', args.key]);
  return h;
}

type HeaderMutation = (h: RawHeader[]) => RawHeader[];

function headerMutation(ctx: FuzzContext): fc.Arbitrary<HeaderMutation> {
  const pick = (h: RawHeader[], i: number): number => (h.length === 0 ? 0 : Math.abs(i) % h.length);
  const mcpNames = [
    'MCP-Protocol-Version',
    'Mcp-Method',
    'Mcp-Name',
    'Mcp-Param-Key',
    'Mcp-Param-Amount',
    'Mcp-Session-Id',
    'Last-Event-ID',
  ];
  return fc.oneof(
    // Header names in every case.
    fc.integer().map(
      (seed): HeaderMutation =>
        (h) =>
          h.map(([n, v], i) => [recase(n, seed + i), v]),
    ),
    // A header dropped.
    fc.integer().map(
      (i): HeaderMutation =>
        (h) =>
          h.filter((_, j) => j !== pick(h, i)),
    ),
    // A header duplicated, with the same value or another.
    fc
      .tuple(fc.integer(), fc.option(fc.string({ maxLength: 20 }), { nil: undefined }))
      .map(([i, other]): HeaderMutation => (h) => {
        const [n, v] = h[pick(h, i)] ?? ['Mcp-Method', 'tools/list'];
        return [...h, [n, other ?? v]];
      }),
    // base64 junk in an SEP-2243 value.
    fc
      .tuple(
        fc.constantFrom('Mcp-Name', 'Mcp-Param-Key', 'Mcp-Method', 'MCP-Protocol-Version'),
        base64Junk,
        fc.constantFrom('=?base64?%s?=', '=?BASE64?%s?=', '=?base64?%s', '%s?=', '=?base64?%s?=?base64?%s?='),
      )
      .map(([name, junk, form]): HeaderMutation => (h) => [
        ...h.filter(([n]) => n.toLowerCase() !== name.toLowerCase()),
        [name, form.replaceAll('%s', junk)],
      ]),
    // Control characters inside a value.
    fc.tuple(fc.integer(), controlChar, fc.nat({ max: 40 })).map(
      ([i, c, at]): HeaderMutation =>
        (h) =>
          h.map(([n, v], j) =>
            j === pick(h, i) ? [n, v.slice(0, at % (v.length + 1)) + c + v.slice(at % (v.length + 1))] : [n, v],
          ),
    ),
    // A huge value (Node's header limit is 16 KiB).
    fc
      .tuple(fc.constantFrom(...mcpNames, 'Authorization', 'X-Filler'), fc.integer({ min: 1_000, max: 40_000 }))
      .map(([name, size]): HeaderMutation => (h) => [...h, [name, 'A'.repeat(size)]]),
    // Unicode (sent as latin1 bytes) in an SEP-2243 value.
    fc
      .tuple(fc.constantFrom(...mcpNames), unicodeText)
      .map(([name, v]): HeaderMutation => (h) => [
        ...h.filter(([n]) => n.toLowerCase() !== name.toLowerCase()),
        [name, Buffer.from(v, 'utf8').toString('latin1')],
      ]),
    // Authorisation broken.
    fc
      .constantFrom(
        '',
        'Bearer',
        'Bearer ',
        `bearer ${ctx.token}`,
        `Bearer ${ctx.token} `,
        `Bearer  ${ctx.token}`,
        `Bearer ${ctx.token.slice(0, -1)}`,
        `Bearer ${ctx.token}x`,
        `Basic ${Buffer.from(`user:${ctx.token}`).toString('base64')}`,
        'Bearer sfs_1111111111111111111111111111111111111111111',
      )
      .map((v): HeaderMutation => (h) => [
        ...h.filter(([n]) => n.toLowerCase() !== 'authorization'),
        ...(v === '' ? [] : [['Authorization', v] as RawHeader]),
      ]),
    // Content types.
    fc
      .constantFrom(
        '',
        'text/plain',
        'application/json; charset=utf-8',
        'APPLICATION/JSON',
        'application/json-patch+json',
        'application/jsonx',
        'multipart/form-data; boundary=x',
        'application/x-www-form-urlencoded',
        'application/json, text/plain',
        ' application/json',
      )
      .map((v): HeaderMutation => (h) => [
        ...h.filter(([n]) => n.toLowerCase() !== 'content-type'),
        ...(v === '' ? [] : [['Content-Type', v] as RawHeader]),
      ]),
    // Random extra headers, including SEP-2243 names the tools do not declare.
    fc
      .array(
        fc.tuple(
          fc.oneof(
            fc.constantFrom(...mcpNames, 'Origin', 'X-Request-Id', 'Expect', 'Transfer-Encoding', 'Upgrade'),
            fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,15}$/),
          ),
          fc.string({ maxLength: 30 }),
        ),
        { maxLength: 3 },
      )
      .map((extra): HeaderMutation => (h) => [
        ...h,
        ...extra.map(([n, v]): RawHeader => [n, v.replace(/[\r\n]/g, ' ')]),
      ]),
  );
}

/** A request as a conforming client would build it: a body and its headers. */
function requestBody(ctx: FuzzContext): fc.Arbitrary<Record<string, unknown>> {
  const method = fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom(...KNOWN_METHODS) },
    { weight: 2, arbitrary: fc.constantFrom(...OTHER_METHODS) },
    { weight: 1, arbitrary: unicodeText },
  );
  return method.chain((m) =>
    fc
      .record(
        {
          jsonrpc: fc.oneof(
            { weight: 20, arbitrary: fc.constant<unknown>('2.0') },
            { weight: 1, arbitrary: fc.constantFrom<unknown>('1.0', 2, '2', null) },
          ),
          id,
          method: fc.oneof({ weight: 20, arbitrary: fc.constant<unknown>(m) }, { weight: 1, arbitrary: json }),
          params: params(ctx, m),
          extra: fc.oneof(
            { weight: 10, arbitrary: fc.constant(undefined) },
            { weight: 1, arbitrary: fc.record({ result: json }) },
            { weight: 1, arbitrary: fc.record({ error: json }) },
          ),
        },
        { requiredKeys: ['jsonrpc', 'method'] },
      )
      .map(({ extra, ...b }) => ({ ...b, ...(extra ?? {}) })),
  );
}

type BodyMutation = {
  family: string;
  apply(text: Buffer): { body: Buffer; contentLength?: number | 'omit'; endAfterWrite?: boolean };
};

const bodyMutation: fc.Arbitrary<BodyMutation> = fc.oneof(
  fc
    .nat()
    .map((at): BodyMutation => ({ family: 'truncated', apply: (b) => ({ body: b.subarray(0, at % (b.length + 1)) }) })),
  fc.tuple(fc.nat(), fc.integer({ min: 1, max: 500 })).map(([at, missing]): BodyMutation => ({
    family: 'truncated-mid-body',
    apply: (b) => {
      const cut = b.subarray(0, at % (b.length + 1));
      return { body: cut, contentLength: cut.length + missing, endAfterWrite: true };
    },
  })),
  fc
    .array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 })
    .map((flips): BodyMutation => ({
      family: 'bytes-flipped',
      apply: (b) => {
        const c = Buffer.from(b);
        for (const [at, v] of flips) if (c.length > 0) c[at % c.length] = v;
        return { body: c };
      },
    })),
  fc.tuple(fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 8 })).map(([at, bytes]): BodyMutation => ({
    family: 'bytes-inserted',
    apply: (b) => {
      const i = at % (b.length + 1);
      return { body: Buffer.concat([b.subarray(0, i), Buffer.from(bytes), b.subarray(i)]) };
    },
  })),
  fc.constantFrom<BodyMutation>(
    { family: 'bom', apply: (b) => ({ body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), b]) }) },
    { family: 'batch', apply: (b) => ({ body: Buffer.from(`[${b.toString('utf8')},${b.toString('utf8')}]`) }) },
    { family: 'empty-batch', apply: () => ({ body: Buffer.from('[]') }) },
    {
      family: 'duplicate-key',
      apply: (b) => ({ body: Buffer.from(b.toString('utf8').replace(/^\{/, '{"method":"tools/call","id":null,')) }),
    },
    { family: 'utf16', apply: (b) => ({ body: Buffer.from(b.toString('utf8'), 'utf16le') }) },
    { family: 'no-content-length', apply: (b) => ({ body: b, contentLength: 'omit' }) },
    { family: 'short-content-length', apply: (b) => ({ body: b, contentLength: Math.max(0, b.length - 3) }) },
    { family: 'trailing-garbage', apply: (b) => ({ body: Buffer.concat([b, Buffer.from(' }{"x":1}')]) }) },
  ),
);

/** Bodies with no request in them at all. */
const strangeBody: fc.Arbitrary<{ family: string; body: Buffer }> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.uint8Array({ maxLength: 300 }).map((b) => ({ family: 'random-bytes', body: Buffer.from(b) })),
  },
  {
    weight: 4,
    arbitrary: fc
      .string({ unit: 'binary', maxLength: 200 })
      .map((s) => ({ family: 'random-text', body: Buffer.from(s) })),
  },
  {
    weight: 4,
    arbitrary: json.map((v) => ({ family: 'random-json', body: Buffer.from(JSON.stringify(v)) })),
  },
  {
    weight: 2,
    arbitrary: fc
      .integer({ min: 1, max: 20_000 })
      .map((d) => ({ family: 'deep-nesting', body: Buffer.from(`${'['.repeat(d)}${']'.repeat(d)}`) })),
  },
  // Large bodies are slow to send: fewer of them.
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 1_048_577, max: 1_100_000 })
      .map((n) => ({ family: 'oversize', body: Buffer.alloc(n, 0x20) })),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 10_000, max: 300_000 }).map((n) => ({
      family: 'large-string',
      body: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'x'.repeat(n), params: { _meta: META } })),
    })),
  },
);

const requestLine = fc.oneof(
  { weight: 30, arbitrary: fc.constant({ method: 'POST', target: '/mcp' }) },
  {
    weight: 1,
    arbitrary: fc.record({
      method: fc.constantFrom('GET', 'DELETE', 'PUT', 'OPTIONS', 'PATCH', 'HEAD', 'post'),
      target: fc.constant('/mcp'),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      method: fc.constant('POST'),
      target: fc.constantFrom(
        '/mcp/',
        '/MCP',
        '/mcp?x=1',
        '/mcp#',
        '//mcp',
        '/./mcp',
        '/%6dcp',
        '/health',
        '/ready',
        '/metrics',
        '*',
        '/mcp;x',
      ),
    }),
  },
);

export function fuzzCase(ctx: FuzzContext): fc.Arbitrary<FuzzCase> {
  const conforming = fc
    .tuple(requestBody(ctx), fc.array(headerMutation(ctx), { maxLength: 2 }), requestLine)
    .map(([body, muts, line]): FuzzCase => {
      let headers = conformingHeaders(ctx, body);
      for (const m of muts) headers = m(headers);
      return {
        family: muts.length === 0 ? 'conforming' : 'headers-mutated',
        ...line,
        headers,
        body: Buffer.from(JSON.stringify(body)),
        injectedFault: isFaultCall(body, ctx.faultMarker),
      };
    });
  const mutatedBody = fc
    .tuple(requestBody(ctx), bodyMutation, fc.option(headerMutation(ctx), { nil: undefined }))
    .map(([body, mut, hm]): FuzzCase => {
      let headers = conformingHeaders(ctx, body);
      if (hm) headers = hm(headers);
      const r = mut.apply(Buffer.from(JSON.stringify(body)));
      return {
        family: `body-${mut.family}`,
        method: 'POST',
        target: '/mcp',
        headers,
        ...r,
        injectedFault: isFaultCall(body, ctx.faultMarker),
      };
    });
  const strange = fc.tuple(strangeBody, fc.option(headerMutation(ctx), { nil: undefined })).map(([s, hm]): FuzzCase => {
    let headers = conformingHeaders(ctx, {});
    if (hm) headers = hm(headers);
    return { family: s.family, method: 'POST', target: '/mcp', headers, body: s.body };
  });
  return fc.oneof(
    { weight: 10, arbitrary: conforming },
    { weight: 5, arbitrary: mutatedBody },
    { weight: 2, arbitrary: strange },
  );
}

/** Whether the body carries the fault marker anywhere the engine could see it. */
function isFaultCall(body: Record<string, unknown>, marker: string): boolean {
  return JSON.stringify(body).includes(marker);
}
