/**
 * The service answers a tool call that arrives the moment its listener opens, before the engine has started to
 * open (serve.ts gives the fresh listener a short grace period first): the call waits for the engine instead of
 * waiting forever. Real service process, real chain.
 */
import http from 'node:http';
import { LiveService } from './live-service';

jest.setTimeout(60_000);

let service: LiveService | null = null;

afterAll(async () => {
  await service?.close();
});

/** POSTs until the listener accepts (every 2 ms, as a client waiting for the port would), then waits for the answer. */
async function postWhenListening(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; body: string }> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      return await new Promise((resolve, reject) => {
        const req = http.request(url, { method: 'POST', headers, agent: false }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        });
        req.on('error', reject);
        // Once connected, the answer must come: a call that waits on an engine that never opens times out here.
        req.setTimeout(15_000, () => req.destroy(new Error('no answer within 15 s')));
        req.end(body);
      });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ECONNREFUSED' || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 2));
    }
  }
}

test('a key_show sent the moment the listener opens is answered once the engine is open', async () => {
  service = await LiveService.start({ keys: { play: {} } });
  await service.restart({}); // the config now names the port the first start was given
  await service.stop();
  const spawning = service.spawn(); // nobody listens until this process does
  const body = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'key_show',
      arguments: { key: 'play' },
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  };
  const res = await postWhenListening(
    service.url,
    {
      authorization: `Bearer ${service.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'key_show',
      'mcp-param-key': 'play',
    },
    JSON.stringify(body),
  );
  await spawning;
  expect(res.status).toBe(200);
  const reply = JSON.parse(res.body) as {
    result: { isError: boolean; structuredContent: { keys: { name: string }[] } };
  };
  expect(reply.result.isError).toBe(false);
  expect(reply.result.structuredContent.keys.map((k) => k.name)).toEqual(['play']);
});
