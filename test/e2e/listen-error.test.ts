/**
 * A busy port names the setting that moves it: the message listenErrorMessage builds from a real EADDRINUSE.
 */
import net from 'node:net';
import { listenErrorMessage } from '../../src/cli/listen-error';

function listenOn(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => {
      resolve(s);
    });
  });
}

test('a port already in use is named with the config key and the variable that move it', async () => {
  const holder = await listenOn(0);
  const address = holder.address() as net.AddressInfo;
  const busy = await listenOn(address.port).then(
    (s) => {
      s.close();
      return null;
    },
    (e: unknown) => e,
  );
  holder.close();
  const where = `127.0.0.1:${String(address.port)}`;
  expect(listenErrorMessage(busy, 'mcp', where)).toBe(
    `the MCP endpoint cannot listen on ${where}: the address is already in use (is another sa-forge-signer running?); ` +
      'set serve.listen in the config or SIGNER_LISTEN=HOST:PORT (port 0 picks a free one)',
  );
  expect(listenErrorMessage(busy, 'metrics', where)).toMatch(
    /set serve\.metrics in the config or SIGNER_METRICS_LISTEN/,
  );
  expect(listenErrorMessage(busy, 'chain', where)).toMatch(/set SIGNER_RPC_URL to another loopback address/);
  expect(listenErrorMessage(new Error('something else'), 'mcp', where)).toBeUndefined();
});
