/**
 * A loopback port free at this moment, for a spawned process that must be told its port up front (the built
 * service and the embedded default take it from config, not from `port: 0`).
 */
import net from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}
