/**
 * A webhook receiver on loopback (node:http), as an operator's endpoint would be: it verifies every request's
 * Standard Webhooks signature with the `standardwebhooks` package and keeps what it got. It can be taken down (its
 * port refuses connections) and brought back on the same port, answer with an error status, or hold requests
 * without answering (a receiver that hangs) until released.
 */
import http from 'node:http';
import type net from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  id: string;
  /** The parsed body, once its signature verified. */
  body: Record<string, unknown>;
  raw: string;
  headers: http.IncomingHttpHeaders;
}

export type ReceiverMode = { kind: 'ok' } | { kind: 'status'; status: number } | { kind: 'hang' };

export interface Receiver {
  url: string;
  port: number;
  /** Requests whose signature verified and that were answered 2xx, in arrival order. */
  accepted: Received[];
  /** Every request that reached the receiver (verified or not, answered or held). */
  arrivals: number;
  /** Requests whose signature did not verify, with the verifier's message. */
  rejected: string[];
  /** Requests held open now (mode `hang`). */
  holding(): number;
  setMode(mode: ReceiverMode): void;
  /** Answers every held request 200 (counted as accepted) and stops holding new ones. */
  release(): void;
  /** Closes the port (connections refused) until `up`. */
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(secret: string | null, port = 0): Promise<Receiver> {
  const verifier = secret === null ? null : new Webhook(secret);
  let mode: ReceiverMode = { kind: 'ok' };
  const held: { res: http.ServerResponse; got: Received; open: boolean }[] = [];
  const accepted: Received[] = [];
  const rejected: string[] = [];
  const state = { arrivals: 0 };

  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (raw += d));
    req.on('end', () => {
      state.arrivals++;
      let body: Record<string, unknown>;
      try {
        const headers = Object.fromEntries(
          Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : (v ?? '')]),
        );
        body = (verifier ? verifier.verify(raw, headers) : JSON.parse(raw)) as Record<string, unknown>;
      } catch (e) {
        rejected.push((e as Error).message);
        res.writeHead(400).end();
        return;
      }
      const got: Received = { id: String(req.headers['webhook-id']), body, raw, headers: req.headers };
      if (mode.kind === 'hang') {
        const h = { res, got, open: true };
        res.once('close', () => (h.open = false)); // answered, or the sender gave up and closed the connection
        held.push(h);
        return;
      }
      if (mode.kind === 'status') {
        res.writeHead(mode.status).end();
        return;
      }
      accepted.push(got);
      res.writeHead(204).end();
    });
  });
  const sockets = new Set<net.Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });

  const listen = (p: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(p, '127.0.0.1', () => {
        server.off('error', reject);
        resolve((server.address() as net.AddressInfo).port);
      });
    });
  const bound = await listen(port);
  const shut = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });

  return {
    url: `http://127.0.0.1:${bound}/hook`,
    port: bound,
    accepted,
    get arrivals() {
      return state.arrivals;
    },
    rejected,
    holding: () => held.filter((h) => h.open).length,
    setMode(m) {
      mode = m;
    },
    release() {
      mode = { kind: 'ok' };
      for (const h of held.splice(0)) {
        if (!h.open) continue;
        accepted.push(h.got);
        h.res.writeHead(204).end();
      }
    },
    down: shut,
    up: async () => {
      await listen(bound);
    },
    close: shut,
  };
}

/** A fresh Standard Webhooks secret (32 random bytes), as an operator makes one. */
export function newWebhookSecret(): string {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  return `whsec_${Buffer.from(bytes).toString('base64')}`;
}
