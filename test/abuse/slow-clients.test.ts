/**
 * Slow and silent clients against the live service (in-process, real listener): 64 authenticated requests whose
 * bodies dribble in, 64 connections that send nothing, 64 that send half a request head, and 64 unauthenticated
 * requests announcing a body they never send. While they are all open, a halt and a tools/list from a legitimate
 * client are answered at once (none of the slow ones holds an in-flight place), and every slow connection is
 * closed by the service within its body or headers timeout (none is kept indefinitely).
 *
 * And requests that are slow on purpose: 32 signs of one token waiting for an operator's approval. Another token's
 * halt, tools/list and check, and the waiting token's own halt, are answered at once; the waiting token's next
 * check is refused 503, since the waits beyond its waiting places fill its own share, never another token's.
 */
import net from 'node:net';
import { until } from '../support/async';
import { keyDirSecrets } from '../support/secrets';
import { makeWorld, type World } from '../support/world';
import { mcpRequest, toolCall, type McpRequestSpec } from './support/mcp-client';
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

describe('signs of one token waiting for an operator', () => {
  const IN_FLIGHT = 'in-flight';
  const WAITS = 32;
  let w: World;
  let svc: InProcessService;
  let waiter: string;
  let bystander: string;

  beforeAll(async () => {
    w = await makeWorld({
      keys: { vault: { approval: 'confirm' }, beta: {}, alpha: {} },
      timings: { approval_timeout_ms: 120_000 }, // the signs wait for the whole case
    });
    recordSecrets(
      IN_FLIGHT,
      keyDirSecrets(w.config.key_dir).map((s, i) => ({ label: `key file ${i}`, value: s })),
    );
    const issued = issueTokens(IN_FLIGHT, [
      { name: 'waiter', keys: ['vault', 'beta'] },
      { name: 'bystander', keys: ['alpha'] },
    ]);
    [waiter, bystander] = issued.tokens.map((t) => t.token) as [string, string];
    // The default cap: 32 places, 16 a token.
    svc = await serveInProcess({ suite: IN_FLIGHT, config: w.config, engine: w.engine, tokens: issued.config });
  });

  afterAll(async () => {
    await svc.close();
    await w.close();
  });

  async function answer(spec: McpRequestSpec, signal?: AbortSignal) {
    const started = performance.now();
    const r = await fetch(`${svc.url}/mcp`, {
      method: 'POST',
      headers: spec.headers,
      body: JSON.stringify(spec.body),
      signal,
    });
    return { status: r.status, text: await r.text(), ms: performance.now() - started };
  }

  const pending = async () => (await w.ledger.listApprovals({ status: 'pending' })).length;

  it(`${WAITS} waiting signs of one token keep no other token's halt, tools/list or check waiting`, async () => {
    const callers: AbortController[] = [];
    const signs: Promise<unknown>[] = [];
    try {
      for (let i = 0; i < WAITS; i++) {
        const caller = new AbortController();
        callers.push(caller);
        // A payload of its own each (its amount), so each asks for an approval of its own.
        const sign = toolCall('sign', { key: 'vault', payload: w.transfer('vault', 1_000_000 + i) }, waiter);
        let early: unknown = null;
        signs.push(
          answer(sign, caller.signal).then(
            (a) => (early = a),
            (e: unknown) => e,
          ),
        );
        await until(
          async () => {
            if (early !== null)
              throw new Error(`sign ${i + 1} was answered instead of waiting: ${JSON.stringify(early)}`);
            return (await pending()) === i + 1;
          },
          `sign ${i + 1} to wait for approval`,
        );
      }
      const served = [
        await answer(toolCall('halt', { key: 'alpha', reason: 'in-flight abuse case' }, bystander)),
        await answer(mcpRequest('tools/list', {}, bystander)),
        await answer(toolCall('check', { key: 'alpha', payload: w.transfer('alpha', 1000) }, bystander)),
        await answer(toolCall('halt', { key: 'beta', reason: 'in-flight abuse case' }, waiter)),
      ];
      const own = await answer(toolCall('check', { key: 'beta', payload: w.transfer('beta', 1000) }, waiter));
      const servedMax = Math.round(Math.max(...served.map((a) => a.ms)));
      recordFigures(IN_FLIGHT, {
        waiting_signs: WAITS,
        others_served: served.filter((a) => a.status === 200).length,
        others_tried: served.length,
        others_max_ms: servedMax,
        own_next_work_status: String(own.status),
      });
      expect(served.map((a) => a.status)).toEqual([200, 200, 200, 200]);
      expect(servedMax).toBeLessThan(1000);
      expect(own.status).toBe(503);
      expect(JSON.parse(own.text)).toEqual({
        error:
          'busy: this token has 16 requests being answered (serve.max_in_flight_per_token); retry when one is answered',
      });
    } finally {
      // The callers go away: each approval is abandoned and its sign ends.
      for (const c of callers) c.abort();
      await Promise.all(signs);
      await until(() => w.engine.inFlight() === 0, 'the abandoned signs to end');
      await w.engine.resume('alpha');
      await w.engine.resume('beta');
    }
  }, 120_000);
});
