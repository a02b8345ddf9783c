/**
 * SEP-2243 client recovery through the relay against the real service: the annotations the relay learned go
 * stale when the service is redeployed with `serve.param_headers` turned on; the service's -32020 makes the relay
 * read tools/list again and retry the call once, with the Mcp-Param-Key it now knows to send.
 */
import { ifSetUp } from '../support/set-up';
import { LiveService } from './live-service';
import { RelayProcess } from './relay-process';

jest.setTimeout(120_000);

let service: LiveService;
let relay: RelayProcess | null = null;

beforeAll(async () => {
  service = await LiveService.start({ keys: { play: {} }, serve: { param_headers: false } });
});

afterAll(async () => {
  await relay?.kill();
  await ifSetUp(service)?.close();
});

test('a call refused with -32020 after the service began annotating `key` is retried once with Mcp-Param-Key and succeeds', async () => {
  relay = new RelayProcess({ SIGNER_URL: service.url, SIGNER_TOKEN_FILE: service.tokenFile });
  const before = await relay.call(1, 'tools/list');
  const keyArg = (before.result?.tools as { inputSchema: { properties: { key: Record<string, unknown> } } }[])[2]!
    .inputSchema.properties.key;
  expect(keyArg['x-mcp-header']).toBeUndefined();

  await service.restart({ param_headers: true });

  const show = await relay.call(2, 'tools/call', { name: 'key_show', arguments: { key: 'play' } });
  expect(show.error).toBeUndefined();
  expect((show.result?.structuredContent as { keys: { name: string }[] }).keys.map((k) => k.name)).toEqual(['play']);
  expect(relay.stderr).toMatch(/refused with -32020 .*Mcp-Param-Key header is required/);
  expect(relay.messages().map((m) => m.id)).toEqual([1, 2]);
});
