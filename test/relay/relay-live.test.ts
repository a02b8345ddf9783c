/**
 * The built relay against a live service, launched and spoken to as an MCP client does: one JSON line in, one
 * JSON line out. Each test names the behaviour of the stdio transport that it pins.
 */
import { ifSetUp } from '../support/set-up';
import { LiveService } from './live-service';
import { META, RelayProcess, VERSION, type Message } from './relay-process';

jest.setTimeout(120_000);

let service: LiveService;
const relays: RelayProcess[] = [];

function relay(env: Record<string, string> = {}): RelayProcess {
  const r = new RelayProcess({ SIGNER_URL: service.url, SIGNER_TOKEN_FILE: service.tokenFile, ...env });
  relays.push(r);
  return r;
}

/** Every stdout line is one JSON-RPC message and the output ends on a newline. */
function expectCleanFraming(r: RelayProcess): void {
  expect(r.unterminated()).toBe('');
  for (const line of r.lines) {
    const m = JSON.parse(line) as Message;
    expect(m.jsonrpc).toBe('2.0');
  }
}

async function rejectPending(): Promise<void> {
  for (const id of await service.pendingApprovals()) await service.cli(['approvals', 'reject', id]);
}

function toolText(m: Message): string {
  const content = (m.result?.content as { type: string; text: string }[] | undefined) ?? [];
  return content.map((c) => c.text).join('\n');
}

beforeAll(async () => {
  service = await LiveService.start({ keys: { play: {}, vault: { approval: 'confirm' } } });
});

afterEach(async () => {
  for (const r of relays.splice(0)) await r.kill();
  if (ifSetUp(service)) await rejectPending();
});

afterAll(async () => {
  await ifSetUp(service)?.close();
});

describe('round trips through the relay', () => {
  test('server/discover, tools/list, tools/call key_show, resources/list and resources/read come back as the service answers them', async () => {
    const r = relay();
    const discover = await r.call('d', 'server/discover');
    expect(discover.result?.supportedVersions).toEqual([VERSION]);
    expect(discover.result?.resultType).toBe('complete');

    const list = await r.call(2, 'tools/list');
    const tools = list.result?.tools as {
      name: string;
      inputSchema: { properties: Record<string, Record<string, unknown>> };
    }[];
    expect(tools.map((t) => t.name)).toEqual(['check', 'sign', 'key_show', 'halt']);
    expect(tools[2]!.inputSchema.properties.key!['x-mcp-header']).toBe('Key');

    const show = await r.call(3, 'tools/call', { name: 'key_show', arguments: { key: 'play' } });
    expect(show.result?.isError).toBe(false);
    const keys = (show.result?.structuredContent as { keys: { name: string; pubkey: string }[] }).keys;
    expect(keys).toEqual([expect.objectContaining({ name: 'play', pubkey: service.keys.play!.pubkey })]);

    const resources = await r.call(4, 'resources/list');
    const uris = (resources.result?.resources as { uri: string }[]).map((x) => x.uri);
    expect(uris).toContain('signer://docs/skill');

    const read = await r.call(5, 'resources/read', { uri: 'signer://docs/skill' });
    const contents = read.result?.contents as { uri: string; text: string }[];
    expect(contents[0]!.uri).toBe('signer://docs/skill');
    expect(contents[0]!.text.length).toBeGreaterThan(100);

    // A tool result's pretty-printed report text holds newlines, yet each message is one line.
    expect(toolText(show)).toContain('\n');
    expect(r.lines).toHaveLength(5);
    expectCleanFraming(r);
    expect(await r.end()).toEqual({ code: 0, signal: null });
  });

  test("initialize is answered with the service's -32022 naming 2026-07-28, not turned into -32603", async () => {
    const r = relay();
    r.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'old', version: '1' } },
    });
    const reply = await r.reply(1);
    expect(reply.error?.code).toBe(-32022);
    expect(reply.error?.data).toEqual({ supported: [VERSION], requested: '2025-06-18' });
  });

  test('a method the service does not have is passed through as its -32601', async () => {
    const r = relay();
    const reply = await r.call(1, 'ping');
    expect(reply.error?.code).toBe(-32601);
  });
});

describe('messages the relay answers itself, or never', () => {
  test('a line that is not JSON gets -32700 with no id member; empty lines are ignored and the relay keeps going', async () => {
    const r = relay();
    r.sendRaw('{"jsonrpc":"2.0","id":1,"method":\n');
    r.sendRaw('\n   \n\r\n');
    await r.until(() => r.lines.length >= 1, 10_000, 'the parse error');
    const reply = await r.call(2, 'server/discover');
    expect(reply.result?.supportedVersions).toEqual([VERSION]);
    const [parseError] = r.messages();
    expect(parseError).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: expect.any(String) as unknown } });
    expect(Object.prototype.hasOwnProperty.call(parseError, 'id')).toBe(false);
    expect(r.lines).toHaveLength(2);
  });

  test('a notification is forwarded and never answered', async () => {
    const r = relay();
    r.send({ jsonrpc: '2.0', method: 'notifications/initialized', params: { _meta: META } });
    r.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } });
    // A request sent after the notifications is answered; nothing else ever is.
    await r.call(9, 'server/discover');
    expect(await r.end()).toEqual({ code: 0, signal: null });
    expect(r.messages().map((m) => m.id)).toEqual([9]);
    expect(r.stderr).not.toMatch(/refused notification/);
  });

  test('an oversized line is answered with an error for its id and the relay keeps going', async () => {
    const r = relay({ SIGNER_RELAY_MAX_LINE_BYTES: '2048' });
    const big = 'x'.repeat(10_000);
    r.request(7, 'tools/call', { name: 'key_show', arguments: { key: 'play', padding: big } });
    const tooBig = await r.reply(7);
    expect(tooBig.error?.code).toBe(-32600);
    expect(tooBig.error?.message).toMatch(/more than the relay's limit of 2048 bytes/);
    const after = await r.call(8, 'server/discover');
    expect(after.result?.supportedVersions).toEqual([VERSION]);
  });

  test('a wrong token is -32603 for that id, naming the 401 and never the token', async () => {
    const wrong = 'sfs_thisIsNotTheConfiguredTokenAtAll';
    const r = relay({ SIGNER_TOKEN_FILE: '', SIGNER_TOKEN: wrong });
    const reply = await r.call('w', 'server/discover');
    expect(reply.error?.code).toBe(-32603);
    expect(reply.error?.message).toMatch(/HTTP 401/);
    expect(reply.error?.data).toEqual({ httpStatus: 401 });
    const everything = r.lines.join('\n') + r.stderr;
    expect(everything).not.toContain(wrong);
    expect(everything).not.toContain(service.token);
  });

  test('no token configured at all: every request is -32603 saying which variable to set', async () => {
    const r = relay({ SIGNER_TOKEN_FILE: '', SIGNER_TOKEN: '' });
    const reply = await r.call(1, 'tools/list');
    expect(reply.error?.code).toBe(-32603);
    expect(reply.error?.message).toMatch(/SIGNER_TOKEN_FILE/);
  });
});

describe('SEP-2243 headers built from the body', () => {
  test.each([
    ['a leading space', ' demo'],
    ['a non-ASCII letter', 'dému'],
    ['the sentinel itself', '=?base64?cGxheQ==?='],
  ])(
    "a key argument with %s travels base64-encoded in Mcp-Param-Key and passes the service's header check",
    async (_what, key) => {
      const r = relay();
      const reply = await r.call(1, 'tools/call', { name: 'key_show', arguments: { key } });
      // Past the header check (no -32020): the engine itself answers that no such key is configured.
      expect(reply.error).toBeUndefined();
      expect(reply.result?.isError).toBe(true);
      expect(toolText(reply)).not.toMatch(/Header mismatch/);
      expect(toolText(reply)).toMatch(/key/i);
    },
  );

  test("a resource uri and a tool name reach the service in Mcp-Name: an unknown resource is the service's -32602 with the uri", async () => {
    const r = relay();
    const uri = 'signer://docs/ünknown';
    const reply = await r.call(1, 'resources/read', { uri });
    expect(reply.error?.code).toBe(-32602);
    expect(reply.error?.data).toEqual({ uri });
  });
});

describe('concurrency, cancellation and shutdown', () => {
  test('a sign waiting for an operator does not hold back a key_show; replies leave in completion order', async () => {
    const r = relay();
    r.request('slow-sign', 'tools/call', {
      name: 'sign',
      arguments: { payload: service.transfer('vault', 1_000_000), key: 'vault', intent: 'relay concurrency test' },
    });
    let pending: string[] = [];
    await waitForApproval(() => service.pendingApprovals().then((p) => (pending = p)));
    const show = await r.call('fast-show', 'tools/call', { name: 'key_show', arguments: { key: 'play' } });
    expect(show.result?.isError).toBe(false);
    expect(r.messages().some((m) => m.id === 'slow-sign')).toBe(false);

    const approved = await service.cli(['approvals', 'approve', pending[0]!]);
    expect(approved.code).toBe(0);
    const sign = await r.reply('slow-sign', 60_000);
    expect((sign.result?.structuredContent as { outcome: string }).outcome).toBe('confirmed');
    expect(r.messages().map((m) => m.id)).toEqual(['fast-show', 'slow-sign']);
    expectCleanFraming(r);
  });

  test('notifications/cancelled aborts the named request: no reply for its id, its approval is abandoned, and nothing is sent', async () => {
    const r = relay();
    const sendsBefore = service.localnet.stats().sends;
    r.request('to-cancel', 'tools/call', {
      name: 'sign',
      arguments: { payload: service.transfer('vault', 2_000_000), key: 'vault' },
    });
    let first: string[] = [];
    await waitForApproval(() => service.pendingApprovals().then((p) => (first = p)));
    r.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'to-cancel', reason: 'test' } });
    await r.stderrMatches(/cancelled request "to-cancel"/);
    // The sign whose request is gone gives up its approval: a later approve says so and sends nothing.
    const deadline = Date.now() + 30_000;
    while ((await service.pendingApprovals()).includes(first[0]!) && Date.now() < deadline)
      await new Promise((res) => setTimeout(res, 50));
    const late = await service.cli(['approvals', 'approve', first[0]!]);
    expect(late.code).toBe(1);
    expect(late.stderr).toMatch(/the request that asked for it is gone .*; nothing was sent/);

    // The cancelled sign holds the key's lock until it has finished; a second sign can only ask for approval after.
    r.request('after', 'tools/call', {
      name: 'sign',
      arguments: { payload: service.transfer('vault', 3_000_000), key: 'vault' },
    });
    let second: string[] = [];
    await waitForApproval(() => service.pendingApprovals().then((p) => (second = p.filter((id) => id !== first[0]))));
    expect(service.localnet.stats().sends).toBe(sendsBefore);
    expect((await service.cli(['approvals', 'reject', second[0]!])).code).toBe(0);
    const after = await r.reply('after', 30_000);
    expect((after.result?.structuredContent as { outcome: string; failed_check: string }).failed_check).toBe(
      'approval',
    );
    expect(r.messages().some((m) => m.id === 'to-cancel')).toBe(false);
  });

  test('a request that outlives SIGNER_RELAY_TIMEOUT_MS is -32603 naming the timeout', async () => {
    const r = relay({ SIGNER_RELAY_TIMEOUT_MS: '1500' });
    const reply = await r.call('slow', 'tools/call', {
      name: 'sign',
      arguments: { payload: service.transfer('vault', 1_000_000), key: 'vault' },
    });
    expect(reply.error?.code).toBe(-32603);
    expect(reply.error?.message).toMatch(/did not answer within 1\.5 s \(SIGNER_RELAY_TIMEOUT_MS\)/);
  });

  test('end of input: requests in flight are finished and answered, then the relay exits 0', async () => {
    const r = relay();
    r.request('show', 'tools/call', { name: 'key_show', arguments: {} });
    r.request('sign', 'tools/call', {
      name: 'sign',
      arguments: { payload: service.transfer('vault', 1_500_000), key: 'vault' },
    });
    r.child.stdin!.end();
    let pending: string[] = [];
    await waitForApproval(() => service.pendingApprovals().then((p) => (pending = p)));
    expect((await service.cli(['approvals', 'approve', pending[0]!])).code).toBe(0);
    expect(await r.exited).toEqual({ code: 0, signal: null });
    const ids = r
      .messages()
      .map((m) => m.id)
      .sort();
    expect(ids).toEqual(['show', 'sign']);
  });

  test('SIGTERM: a request still running after SIGNER_RELAY_DRAIN_MS is answered -32603 and the relay exits 0', async () => {
    const r = relay({ SIGNER_RELAY_DRAIN_MS: '300' });
    r.request('held', 'tools/call', {
      name: 'sign',
      arguments: { payload: service.transfer('vault', 1_000_000), key: 'vault' },
    });
    await waitForApproval(() => service.pendingApprovals());
    r.child.kill('SIGTERM');
    expect(await r.exited).toEqual({ code: 0, signal: null });
    const [reply] = r.messages();
    expect(reply?.id).toBe('held');
    expect(reply?.error?.code).toBe(-32603);
    expect(reply?.error?.message).toMatch(/stopped \(SIGTERM\)/);
  });
});

async function waitForApproval(list: () => Promise<string[]>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await list()).length === 0) {
    if (Date.now() > deadline) throw new Error(`no sign asked for approval; service stderr: ${service.stderr()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
