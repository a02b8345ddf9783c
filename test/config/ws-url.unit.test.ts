/** Which WebSocket endpoint the signer subscribes on, from the cluster's HTTP endpoints or its own setting. */
import { wsUrlFor, wsUrlsFor } from '../../src/config/ws-url';

describe('the WebSocket endpoint beside an HTTP endpoint', () => {
  it.each([
    ['https://mainnet.helius-rpc.com/?api-key=abc', 'wss://mainnet.helius-rpc.com/?api-key=abc'],
    ['https://example.solana-mainnet.quiknode.pro/token/', 'wss://example.solana-mainnet.quiknode.pro/token/'],
    ['http://127.0.0.1:8899', 'ws://127.0.0.1:8899'],
    ['http://[::1]:41234/', 'ws://[::1]:41234/'],
    ['HTTPS://rpc1.z.ink', 'wss://rpc1.z.ink'],
  ])('derives %s → %s (scheme swapped; host, port, path and query kept)', (http, ws) => {
    expect(wsUrlFor(http)).toBe(ws);
  });

  it('refuses a URL that is not http(s)', () => {
    expect(() => wsUrlFor('ftp://example.com')).toThrow(RangeError);
  });

  it('uses the configured WebSocket endpoints when there are any, else one beside each HTTP endpoint in order', () => {
    const http = ['https://a.example', 'http://127.0.0.1:8899'];
    expect(wsUrlsFor(http, undefined)).toEqual(['wss://a.example', 'ws://127.0.0.1:8899']);
    expect(wsUrlsFor(http, [])).toEqual(['wss://a.example', 'ws://127.0.0.1:8899']);
    expect(wsUrlsFor(http, ['wss://b.example/ws'])).toEqual(['wss://b.example/ws']);
  });
});
