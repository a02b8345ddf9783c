/**
 * Slow and silent clients against the live service (in-process, real listener): 64 authenticated requests whose
 * bodies dribble in, 64 connections that send nothing, 64 that send half a request head, and 64 unauthenticated
 * requests announcing a body they never send. While they are all open, a halt and a tools/list from a legitimate
 * client are answered at once (none of the slow ones holds an in-flight place), and every slow connection is
 * closed by the service within its body or headers timeout (none is kept indefinitely).
 */
import net from 'node:net';
import { keyDirSecrets } from '../support/secrets';
import { makeWorld, type World } from '../support/world';
import { mcpRequest, toolCall } from './support/mcp-client';
import { recordFigures, recordSecrets } from './support/record';
import { issueTokens, serveInProcess, type InProcessService } from './support/service';

const SUITE = 'slow-clients';
const EACH = 64;
const TIMEOUT_MS = 1000;

interface Held {
  socket: net.Socket;
  closedAfterMs: Promise<number>;
  received: () => string;
}

function hold(port: number, bytes: string): Promise<Held> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (d: Buffer) => (data += d.toString('latin1')));
    const closedAfterMs = new Promise<number>((r) => socket.once('close', () => r(Date.now() - started)));
    socket.on('error', () => undefined); // a reset is how some are closed: closedAfterMs reports it
    socket.once('connect', () => {
      if (bytes !== '') socket.write(bytes);
      resolve({ socket, closedAfterMs, received: () => data });
    });
    socket.once('error', reject);
  });
}

function head(spec: { headers: Record<string, string> }, length: number): string {
  const lines = Object.entries({ ...spec.headers, 'Content-Length': String(length) }).map(([k, v]) => `${k}: ${v}`);
  return `POST /mcp HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`;
}

describe('slow bodies and silent connections', () => {
  let w: World;
  let svc: InProcessService;
  let token: string;

  beforeAll(async () => {
    w = await makeWorld();
    recordSecrets(
      SUITE,
      keyDirSecrets(w.config.key_dir).map((s, i) => ({ label: `key file ${i}`, value: s })),
    );
    const issued = issueTokens(SUITE, [{ name: 'slow', keys: ['alpha'] }]);
    token = issued.tokens[0]!.token;
    svc = await serveInProcess({
      suite: SUITE,
      config: w.config,
      engine: w.engine,
      tokens: issued.config,
      serve: { max_in_flight: 8, body_timeout_ms: TIMEOUT_MS, headers_timeout_ms: TIMEOUT_MS },
    });
  });

  afterAll(async () => {
    await svc.close();
    await w.close();
  });

  async function answer(spec: { body: unknown; headers: Record<string, string> }) {
    const started = performance.now();
    const r = await fetch(`${svc.url}/mcp`, { method: 'POST', headers: spec.headers, body: JSON.stringify(spec.body) });
    return { status: r.status, json: (await r.json()) as Record<string, unknown>, ms: performance.now() - started };
  }

  it('a halt and tools/list are answered at once beside 256 slow clients, and every slow one is closed', async () => {
    const list = mcpRequest('tools/list', {}, token);
    const held: Held[] = [];
    for (let i = 0; i < EACH; i++) {
      held.push(await hold(svc.port, head(list, 4000) + '{"jsonrpc"')); // body dribbles: never completes
      held.push(await hold(svc.port, '')); // says nothing
      held.push(await hold(svc.port, 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n')); // half a head
      held.push(await hold(svc.port, `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4000\r\n\r\n{`)); // no token
    }
    const drip = setInterval(() => {
      for (let i = 0; i < held.length; i += 4) if (!held[i]!.socket.destroyed) held[i]!.socket.write(' ');
    }, 100);
    try {
      const listed = await answer(list);
      const halted = await answer(toolCall('halt', { key: 'alpha', reason: 'slow-clients suite' }, token));
      expect(listed.status).toBe(200);
      expect(halted.status).toBe(200);
      expect(halted.json.result).toMatchObject({ isError: false });
      const closed = await Promise.all(held.map((h) => h.closedAfterMs));
      const fiveHundreds = held.filter((h) => /^HTTP\/1\.1 5\d\d /.test(h.received())).length;
      recordFigures(SUITE, {
        requests_tried: held.length + 2,
        '5xx': fiveHundreds,
        legitimate_max_ms: Math.round(Math.max(listed.ms, halted.ms)),
        slow_closed_max_ms: Math.max(...closed),
      });
      expect(Math.max(listed.ms, halted.ms)).toBeLessThan(1000);
      expect(fiveHundreds).toBe(0);
      // Body or headers timeout (1 s), Node's once-a-second check, and the unread-body backstop (+1 s).
      expect(Math.max(...closed)).toBeLessThan(TIMEOUT_MS * 2 + 1000 + 1500);
    } finally {
      clearInterval(drip);
      for (const h of held) h.socket.destroy();
      await w.engine.resume('alpha');
    }
  }, 60_000);
});
