/**
 * A loopback TCP relay in front of PostgreSQL, to take "the database" away and bring it back while a ledger is
 * running (the shared server itself must stay up for everyone else). Real sockets, real protocol; only the
 * outage is staged:
 * - `refuse()`: connections are dropped and new ones refused, like a stopped server;
 * - `blackhole()`: connections are accepted and never answered, like a network partition;
 * - `restore()`: relays again.
 */
import * as net from 'node:net';

export class TcpProxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  private mode: 'relay' | 'blackhole' = 'relay';
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(port = 0): Promise<number> {
    const server = net.createServer((client) => this.onConnection(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as net.AddressInfo).port;
    return this.port;
  }

  private onConnection(client: net.Socket): void {
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => client.destroy());
    if (this.mode === 'blackhole') return; // accepted, never answered
    const upstream = net.connect(this.target.port, this.target.host);
    this.sockets.add(upstream);
    upstream.on('close', () => {
      this.sockets.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  }

  private cut(): void {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  /** Like a stopped server: every connection cut, the port closed. */
  async refuse(): Promise<void> {
    this.cut();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Like a partition: existing connections cut, new ones accepted and left hanging. */
  async blackhole(): Promise<void> {
    this.mode = 'blackhole';
    this.cut();
    if (!this.server) await this.start(this.port);
  }

  async restore(): Promise<void> {
    this.mode = 'relay';
    if (!this.server) await this.start(this.port);
  }

  async close(): Promise<void> {
    await this.refuse();
  }
}
