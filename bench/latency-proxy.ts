/**
 * A stand-in for a remote RPC provider: a loopback TCP proxy in front of the embedded chain that holds every byte
 * for a set one-way delay in each direction, so a request and its answer cost one round trip of 2 × the delay, as
 * they would across the internet. It works on bytes, not on HTTP, so JSON-RPC over HTTP and a WebSocket upgraded
 * on the same port both pass through it unchanged. A new connection also pays one round trip before its first
 * byte is passed on (the TCP handshake a remote provider costs; TLS would add more, which this leaves out).
 *
 * It counts the HTTP requests it carries (request lines on connections that have not switched protocol), so a
 * figure of round trips can be read on the wire whatever the client build reports.
 */
import net from 'node:net';

export interface LatencyProxy {
  /** `http://127.0.0.1:PORT`: the chain's URL as seen through the proxy. */
  readonly url: string;
  /** HTTP requests carried so far. */
  requests(): number;
  close(): Promise<void>;
}

export async function startLatencyProxy(target: string, oneWayMs: number): Promise<LatencyProxy> {
  const to = new URL(target);
  const sockets = new Set<net.Socket>();
  let requests = 0;
  // Timers of one delay fire in the order they were set, so the bytes keep their order.
  const delayed = (from: net.Socket, into: net.Socket): void => {
    from.on('data', (chunk: Buffer) => setTimeout(() => into.destroyed || into.write(chunk), oneWayMs));
    from.on('end', () => setTimeout(() => into.end(), oneWayMs));
  };
  const server = net.createServer((client) => {
    sockets.add(client);
    client.setNoDelay(true);
    let upstream: net.Socket | null = null;
    const pending: Buffer[] = [];
    const count = requestCounter(() => requests++);
    // The handshake's round trip: the chain is reached (and held bytes passed on) 2 × the delay after accept.
    setTimeout(() => {
      if (client.destroyed) return;
      const up = net.connect({ host: to.hostname, port: Number(to.port) }, () => {
        for (const c of pending.splice(0)) up.write(c);
      });
      up.setNoDelay(true);
      sockets.add(up);
      upstream = up;
      delayed(up, client);
      const closeBoth = (): void => {
        client.destroy();
        up.destroy();
      };
      up.on('error', closeBoth);
      up.on('close', () => sockets.delete(up));
    }, 2 * oneWayMs);
    client.on('data', (chunk: Buffer) => {
      count(chunk);
      const up = upstream;
      // Bytes sent before the chain is reached wait for it (they have waited out the delay by then).
      if (up === null || up.connecting) pending.push(chunk);
      else setTimeout(() => up.destroyed || up.write(chunk), oneWayMs);
    });
    client.on('end', () => setTimeout(() => upstream?.end(), oneWayMs));
    client.on('error', () => upstream?.destroy());
    client.on('close', () => {
      sockets.delete(client);
      upstream?.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Counts HTTP/1.1 requests in a client's byte stream: a request line and headers, then `content-length` bytes of
 * body. After an `Upgrade` (a WebSocket) the rest of the connection is not HTTP and is not counted.
 */
function requestCounter(onRequest: () => void): (chunk: Buffer) => void {
  let head = '';
  let bodyLeft = 0;
  let upgraded = false;
  return (chunk) => {
    let rest = chunk;
    while (!upgraded && rest.length > 0) {
      if (bodyLeft > 0) {
        const taken = Math.min(bodyLeft, rest.length);
        bodyLeft -= taken;
        rest = rest.subarray(taken);
        continue;
      }
      head += rest.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      onRequest();
      const headers = head.slice(0, end).toLowerCase();
      const after = Buffer.from(head.slice(end + 4), 'latin1');
      head = '';
      upgraded = /\r\nupgrade:/.test(headers);
      bodyLeft = Number(/\r\ncontent-length:\s*(\d+)/.exec(headers)?.[1] ?? '0');
      rest = after;
    }
  };
}
