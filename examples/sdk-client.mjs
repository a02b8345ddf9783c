// Connect the official MCP TypeScript SDK client to sa-forge-signer, show the keys, then check and sign a payload.
// Run: node examples/sdk-client.mjs [payload.json]   (SIGNER_URL and SIGNER_TOKEN_FILE default to `npm start`'s)
import { readFileSync } from 'node:fs';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const url = new URL(process.env.SIGNER_URL ?? 'http://127.0.0.1:8790/mcp');
const token = readFileSync(process.env.SIGNER_TOKEN_FILE ?? 'var/local/token', 'utf8').trim();

const client = new Client(
  { name: 'my-agent', version: '1.0.0' },
  // The signer speaks MCP 2026-07-28 only. Without this pin the SDK opens with the 2025 `initialize`
  // handshake, and the signer answers -32022 (unsupported protocol version, supported: 2026-07-28).
  { versionNegotiation: { mode: { pin: '2026-07-28' } } },
);
await client.connect(
  new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
);

const { tools } = await client.listTools();
console.log(`tools: ${tools.map((t) => t.name).join(', ')}`);

const shown = await client.callTool({ name: 'key_show', arguments: {} });
for (const key of shown.structuredContent.keys) {
  console.log(`key ${key.name}: ${key.pubkey}, ${key.balance_lamports} lamports, approval ${key.approval}`);
}

const file = process.argv[2];
if (file) {
  const payload = JSON.parse(readFileSync(file, 'utf8'));
  const checked = await client.callTool({ name: 'check', arguments: { payload } });
  console.log(`check: ${checked.structuredContent.outcome}`);
  if (checked.structuredContent.outcome === 'ok') {
    // A sign of a `confirm` key waits for an operator (50 s by default), and confirmation can take longer still:
    // the SDK's default request timeout is 60 s, so give sign more time, or the client gives up before it ends.
    const signed = await client.callTool(
      { name: 'sign', arguments: { payload, intent: 'example: pay for a test' } },
      { timeout: 300_000 },
    );
    console.log(`sign: ${signed.structuredContent.outcome} ${signed.structuredContent.signature}`);
  }
}
await client.close();
