/**
 * Named fakes for what the real service never does but a Streamable HTTP server (or a proxy in front of one)
 * may: pretty-printed JSON, an HTML 502, an event-stream reply, integer and boolean `x-mcp-header` arguments,
 * an invalid annotation. A plain node:http server on loopback that records every request it receives.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: Record<string, unknown>;
}

export type FakeHandler = (req: RecordedRequest, res: http.ServerResponse) => void;

export class FakeService {
  readonly requests: RecordedRequest[] = [];
  private readonly sockets = new Set<import('node:net').Socket>();
  private constructor(
    readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(handler: FakeHandler): Promise<FakeService> {
    let fake: FakeService | null = null;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const recorded: RecordedRequest = {
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          rawHeaders: req.rawHeaders,
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
        };
        fake!.requests.push(recorded);
        handler(recorded, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    fake = new FakeService(server, `http://127.0.0.1:${port}/mcp`);
    server.on('connection', (s) => {
      fake.sockets.add(s);
      s.once('close', () => fake.sockets.delete(s));
    });
    return fake;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown, pretty = false): void {
  const text = pretty ? JSON.stringify(body, null, 2) : JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}
