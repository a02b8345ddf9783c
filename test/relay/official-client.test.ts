/**
 * The official MCP TypeScript client (v2, `@modelcontextprotocol/client`) launches the built relay with its own
 * stdio transport, pinned to 2026-07-28, and talks to a live service through it: discover at connect, the tool
 * list, a tool call and a resource read. The client's strict 2026-07-28 codec checks every result on the way.
 */
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BIN, ROOT } from '../support/cli';
import { ifSetUp } from '../support/set-up';
import { LiveService } from './live-service';

jest.setTimeout(120_000);

let service: LiveService;

beforeAll(async () => {
  service = await LiveService.start({ keys: { play: {} } });
});

afterAll(async () => {
  await ifSetUp(service)?.close();
});

test('the official v2 client, pinned to 2026-07-28, completes discover, tools/list, a tool call and a resource read through the relay', async () => {
  let relayLog = '';
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN.mcp],
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', SIGNER_URL: service.url, SIGNER_TOKEN_FILE: service.tokenFile },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d: Buffer) => (relayLog += d.toString()));
  const client = new Client(
    { name: 'relay-official-client-test', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  try {
    await client.connect(transport);
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect(client.getServerCapabilities()).toEqual(expect.objectContaining({ tools: {}, resources: {} }));

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['check', 'sign', 'key_show', 'halt']);

    const result = await client.callTool({ name: 'key_show', arguments: { key: 'play' } });
    expect(result.isError).toBe(false);
    const keys = (result.structuredContent as { keys: { name: string; pubkey: string }[] }).keys;
    expect(keys).toEqual([expect.objectContaining({ name: 'play', pubkey: service.keys.play!.pubkey })]);

    const read = await client.readResource({ uri: 'signer://docs/outcomes' });
    expect(read.contents[0]).toEqual(
      expect.objectContaining({ uri: 'signer://docs/outcomes', mimeType: 'text/markdown' }),
    );
  } finally {
    await client.close();
  }
  expect(relayLog).not.toContain(service.token);
});
