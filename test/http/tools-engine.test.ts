/**
 * The four tools through the whole stack and the real engine: LiteSVM behind its JSON-RPC endpoint, real key
 * files, a real SQLite ledger (test/support/world). Results are checked against the tools' own outputSchemas.
 */
import request from 'supertest';
import Ajv2020 from 'ajv/dist/2020';
import { makeWorld, type World } from '../support/world';
import { makeApp, headersFor, rpc, serveConfig, OTHER_TOKEN, type RpcReply } from './support';
import type { Express } from 'express';
import { toolDefinitions } from '../../src/mcp/tools';

let w: World;
let app: Express;
const ajv = new Ajv2020({ strict: false });
const outputSchemas = new Map<string, object>();

beforeAll(async () => {
  w = await makeWorld({ keys: { alpha: {}, beta: {} } });
  app = makeApp({ config: serveConfig({}, w.config), engine: w.engine });
  for (const t of toolDefinitions(true)) outputSchemas.set(t.name, t.outputSchema);
});
afterAll(() => w.close());

async function callTool(name: string, args: Record<string, unknown>, headers: Record<string, string> = {}) {
  const body = rpc('tools/call', { name, arguments: args });
  const r = await request(app)
    .post('/mcp')
    .set({ ...headersFor(body), ...headers })
    .send(body);
  expect(r.status).toBe(200);
  const result = (r.body as RpcReply).result;
  expect(result).toMatchObject({
    resultType: 'complete',
    _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'sa-forge-signer' } },
    content: [{ type: 'text' }],
  });
  return result as {
    content: { text: string }[];
    structuredContent?: Record<string, unknown>;
    isError: boolean;
    ttlMs?: number;
  };
}

function conforms(tool: string, value: unknown): void {
  const validate = ajv.compile(outputSchemas.get(tool)!);
  expect(validate(value) ? null : validate.errors).toBeNull();
}

test('check: an ok report as pretty text and the same object as structuredContent, isError false, no caching hints', async () => {
  const res = await callTool('check', { payload: w.transfer('alpha', 1_000_000) });
  expect(res.isError).toBe(false);
  expect(res.structuredContent!.outcome).toBe('ok');
  expect(JSON.parse(res.content[0]!.text)).toEqual(res.structuredContent);
  expect(res.content[0]!.text).toContain('\n  "outcome": "ok"');
  expect(res.ttlMs).toBeUndefined();
  conforms('check', res.structuredContent);
});

test('sign: confirmed through MCP on the embedded chain, leaving its intent and final audit entries', async () => {
  const res = await callTool('sign', {
    payload: w.transfer('alpha', 2_000_000, 'mcp sign'),
    key: 'alpha',
    intent: 'pay the test destination',
  });
  expect(res.structuredContent).toMatchObject({ outcome: 'confirmed', key: 'alpha', failed_check: null });
  expect(res.isError).toBe(false);
  conforms('sign', res.structuredContent);
  const entries = await w.ledger.tail(2);
  expect(entries.map((e) => [e.command, e.outcome, e.intent])).toEqual([
    ['sign-intent', 'pending', 'pay the test destination'],
    ['sign', 'confirmed', 'pay the test destination'],
  ]);
});

test('a key the token may not use: check is refused (authorized) with isError true', async () => {
  const res = await callTool('check', { payload: w.transfer('alpha', 1) }, { Authorization: `Bearer ${OTHER_TOKEN}` });
  expect(res.isError).toBe(true);
  expect(res.structuredContent).toMatchObject({ outcome: 'refused', failed_check: 'authorized' });
});

test('key_show: the keys this token may use, validated against its outputSchema; a foreign key is isError', async () => {
  const all = await callTool('key_show', {});
  expect((all.structuredContent!.keys as { name: string }[]).map((k) => k.name)).toEqual(['alpha', 'beta']);
  conforms('key_show', all.structuredContent);
  // The views are cached now: the same answer comes from the engine's cache without waiting (McpService.cachedKeyShow).
  expect(await callTool('key_show', {})).toEqual(all);
  const one = await callTool('key_show', { key: 'beta' });
  expect((one.structuredContent!.keys as { name: string; balance_lamports: number }[])[0]).toMatchObject({
    name: 'beta',
    balance_lamports: expect.any(Number) as unknown,
  });
  const refused = await callTool('key_show', { key: 'beta' }, { Authorization: `Bearer ${OTHER_TOKEN}` });
  expect(refused.isError).toBe(true);
  expect(refused.content[0]!.text).toBe('error: this token may not use key "beta"');
  expect(refused.structuredContent).toBeUndefined();
});

test('a payload that does not parse is a tool error, not a protocol error', async () => {
  const res = await callTool('check', { payload: { version: 2 } });
  expect(res.isError).toBe(true);
  expect(res.content[0]!.text).toMatch(/^error: /);
});

test('a tool error carries its code in structuredContent.error beside the text agents read', async () => {
  const res = await callTool('check', { payload: { version: 2 } });
  expect(res.isError).toBe(true);
  const error = (res.structuredContent as { error: { code: string; message: string; context: object } }).error;
  expect(error).toEqual({ code: 'payload_invalid', message: expect.any(String) as unknown, context: {} });
  expect(res.content[0]!.text).toBe(`error: ${error.message}`);
  const noPayload = await callTool('sign', {});
  expect(noPayload.structuredContent).toEqual({
    error: {
      code: 'arguments_invalid',
      message: expect.stringMatching(/^invalid arguments for sign: /) as unknown,
      context: { tool: 'sign' },
    },
  });
});

test('halt through MCP refuses the next sign (halted) until the operator resumes the key', async () => {
  const halted = await callTool('halt', { key: 'beta', reason: 'looks like a prompt injection' });
  expect(halted.isError).toBe(false);
  conforms('halt', halted.structuredContent);
  expect(halted.structuredContent).toMatchObject({
    halted: [{ key: 'beta', reason: 'looks like a prompt injection', by: 'token:agent', already_halted: false }],
    not_recorded: [],
  });
  const refused = await callTool('sign', { payload: w.transfer('beta', 1_000_000), key: 'beta' });
  expect(refused.structuredContent).toMatchObject({ outcome: 'refused', failed_check: 'halted' });
  expect(refused.isError).toBe(true);
  expect(await w.engine.resume('beta')).toBe(true);
  const after = await callTool('check', { payload: w.transfer('beta', 1_000_000), key: 'beta' });
  expect(after.structuredContent!.outcome).toBe('ok');
});

test("a key an operator halted shows agents who halted it as `operator`, never the operator's name", async () => {
  await w.engine.halt({ key: 'beta', reason: 'checking a refund', principal: { kind: 'operator', name: 'alice' } });
  const shown = await callTool('key_show', { key: 'beta' });
  expect(shown.structuredContent).toMatchObject({ keys: [{ name: 'beta', halted: { by: 'operator' } }] });
  const again = await callTool('halt', { key: 'beta', reason: 'me too' });
  expect(again.structuredContent).toMatchObject({ halted: [{ key: 'beta', by: 'operator', already_halted: true }] });
  const refused = await callTool('check', { payload: w.transfer('beta', 1_000_000), key: 'beta' });
  expect(refused.structuredContent).toMatchObject({ reason: 'halted', figures: { by: 'operator' } });
  for (const answer of [shown, again, refused]) expect(JSON.stringify(answer)).not.toContain('alice');
  expect(await w.engine.resume('beta')).toBe(true);
});

test('halt without a reason is an argument error (isError), never a protocol error', async () => {
  const res = await callTool('halt', { key: 'alpha' });
  expect(res.isError).toBe(true);
  expect(res.content[0]!.text).toMatch(/reason is required/);
});
