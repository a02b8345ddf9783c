/**
 * The README's client snippets, run for real: examples/sdk-client.mjs (the very code the README embeds) against a
 * live `sa-forge-signer-serve` process with the official SDK, and the claim beside it that an unpinned SDK client
 * is answered -32022.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ROOT, run } from '../support/cli';
import { LiveService } from '../relay/live-service';

const EXAMPLE = path.join(ROOT, 'examples/sdk-client.mjs');

let service: LiveService;
beforeAll(async () => {
  service = await LiveService.start({ keys: { alpha: {} } });
});
afterAll(async () => {
  await service.close();
});

/** Every fenced block in README.md that follows a line naming `file`. */
function readmeBlockFor(file: string): string | undefined {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const at = readme.indexOf(`[${file}](${file})`);
  if (at < 0) return undefined;
  const m = /```(?:js|javascript)\n([\s\S]*?)```/.exec(readme.slice(at));
  return m?.[1];
}

test('the README embeds examples/sdk-client.mjs exactly', () => {
  expect(readmeBlockFor('examples/sdk-client.mjs')).toBe(fs.readFileSync(EXAMPLE, 'utf8'));
});

test("the README's mcp.json snippets are valid JSON naming the service's endpoint", () => {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1] ?? '') as unknown);
  expect(blocks.length).toBeGreaterThanOrEqual(2);
  for (const b of blocks) expect(JSON.stringify(b)).toContain('"url":"http://127.0.0.1:8790/mcp"');
});

test('examples/sdk-client.mjs connects, shows the keys, checks and signs', async () => {
  const payloadFile = path.join(service.dir, 'payload.json');
  fs.writeFileSync(payloadFile, JSON.stringify(service.transfer('alpha', 1_000_000)));
  const r = await run(EXAMPLE, [payloadFile], {
    env: { SIGNER_URL: service.url, SIGNER_TOKEN_FILE: service.tokenFile },
  });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const lines = r.stdout.trim().split('\n');
  expect(lines[0]).toBe('tools: check, sign, key_show, halt');
  expect(lines[1]).toBe(`key alpha: ${service.keys.alpha!.pubkey}, 100000000000 lamports, approval auto`);
  expect(lines[2]).toBe('check: ok');
  expect(lines[3]).toMatch(/^sign: confirmed [1-9A-HJ-NP-Za-km-z]{64,88}$/);
});

test('without the version pin the SDK opens with initialize and the signer answers -32022', async () => {
  const client = new Client({ name: 'unpinned', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(service.url), {
    requestInit: { headers: { Authorization: `Bearer ${service.token}` } },
  });
  const failure = await client.connect(transport).then(
    () => null,
    (e: unknown) => e,
  );
  // The SDK reports the HTTP 400 and quotes the body: JSON-RPC error -32022 listing the version the signer speaks.
  expect(failure).toBeInstanceOf(Error);
  expect((failure as Error).message).toMatch(/"code":-32022,"message":"Unsupported protocol version/);
  expect((failure as Error).message).toMatch(/"data":\{"supported":\["2026-07-28"\],"requested":"2025-11-25"\}/);
  await client.close();
});
