/**
 * Host and Origin bypass attempts against the live service, written as raw bytes on a socket (a
 * client library would normalise the very headers under test): IPv6 literals, trailing dots, mixed case, ports,
 * userinfo, numeric IPv4 forms, `Origin: null`, several Host or Origin headers. Every one is refused with 403,
 * with a valid token and a valid request, before anything else runs. The allowed forms are checked too, so the
 * 403s are the guard's doing and not a broken request.
 */
import { keyDirSecrets } from '../support/secrets';
import { ifSetUp } from '../support/set-up';
import { makeWorld, type World } from '../support/world';
import { mcpRequest } from './support/mcp-client';
import { header, rawExchange, requestBytes, type RawHeader } from './support/raw-http';
import { ArtefactBuffer, recordFigures, recordSecrets } from './support/record';
import { issueTokens, serveInProcess, type InProcessService } from './support/service';

const SUITE = 'host-origin';

interface Attempt {
  name: string;
  host?: string[]; // each entry one Host header line; absent: the allowed Host
  origin?: string[];
  method?: string;
  target?: string;
}

describe('Host and Origin: the DNS-rebinding guard', () => {
  let w: World;
  let svc: InProcessService;
  let token: string;
  let port: number;
  const artefacts = new ArtefactBuffer(SUITE);

  beforeAll(async () => {
    w = await makeWorld();
    recordSecrets(
      SUITE,
      keyDirSecrets(w.config.key_dir).map((s, i) => ({ label: `key file ${i}`, value: s })),
    );
    const issued = issueTokens(SUITE, [{ name: 'guard', keys: ['alpha'] }]);
    token = issued.tokens[0]!.token;
    svc = await serveInProcess({ suite: SUITE, config: w.config, engine: w.engine, tokens: issued.config });
    port = svc.port;
  });

  afterAll(async () => {
    await ifSetUp(svc)?.close();
    artefacts.flush();
    await ifSetUp(w)?.close();
  });

  async function attempt(a: Attempt): Promise<{ status: number; body: string }> {
    const spec = mcpRequest('tools/list', {}, token);
    const headers: RawHeader[] = [];
    for (const h of a.host ?? [`127.0.0.1:${port}`]) headers.push(['Host', h]);
    for (const o of a.origin ?? []) headers.push(['Origin', o]);
    for (const [n, v] of Object.entries(spec.headers)) if (n !== 'Host') headers.push([n, v]);
    const method = a.method ?? 'POST';
    const body = method === 'POST' ? Buffer.from(JSON.stringify(spec.body)) : undefined;
    const res = await rawExchange(port, requestBytes({ method, target: a.target ?? '/mcp', headers, body }), {
      noBody: method === 'HEAD',
    });
    if (!res) throw new Error(`${a.name}: no answer`);
    const text = res.body.toString('utf8');
    artefacts.add('response', `${res.status} ${text}`);
    return { status: res.status, body: text };
  }

  it('the allowed forms pass the guard (the refusals below are not a broken request)', async () => {
    const allowed: Attempt[] = [
      { name: 'IPv4 with the port', host: [`127.0.0.1:${port}`] },
      { name: 'IPv4 without a port', host: ['127.0.0.1'] },
      { name: 'localhost', host: [`localhost:${port}`] },
      { name: 'localhost in capitals (DNS names are case-insensitive)', host: [`LOCALHOST:${port}`] },
      { name: 'an allowed Origin', origin: [`http://localhost:${port}`] },
      { name: 'an allowed Origin in capitals', origin: [`HTTP://LOCALHOST:${port}`] },
    ];
    for (const a of allowed) {
      const r = await attempt(a);
      expect([a.name, r.status]).toEqual([a.name, 200]);
    }
  });

  const ATTEMPTS = (port: number): Attempt[] => [
    // Hosts that are not on the allow-list, however they are written.
    { name: 'another host', host: ['evil.example'] },
    { name: 'another host on our port', host: [`evil.example:${port}`] },
    { name: 'allowed name as a subdomain', host: ['localhost.evil.example'] },
    { name: 'allowed IP as a subdomain', host: ['127.0.0.1.evil.example'] },
    { name: 'trailing dot on localhost', host: ['localhost.'] },
    { name: 'trailing dot on localhost with port', host: [`localhost.:${port}`] },
    { name: 'trailing dot on the IP', host: ['127.0.0.1.'] },
    { name: 'mixed case of another host', host: ['LocalHost.Evil.Example'] },
    { name: 'mixed case of another host with port', host: [`LOCALHOST.EVIL.EXAMPLE:${port}`] },
    // IPv6 literals (loopback, but not on the allow-list) and IPv4-mapped forms.
    { name: 'IPv6 loopback', host: ['[::1]'] },
    { name: 'IPv6 loopback with port', host: [`[::1]:${port}`] },
    { name: 'IPv6 loopback without brackets', host: ['::1'] },
    { name: 'IPv6 loopback in full', host: ['[0:0:0:0:0:0:0:1]'] },
    { name: 'IPv4-mapped IPv6', host: ['[::ffff:127.0.0.1]'] },
    { name: 'IPv4-mapped IPv6, hex', host: [`[::ffff:7f00:1]:${port}`] },
    { name: 'IPv4-compatible IPv6', host: ['[::127.0.0.1]'] },
    { name: 'IPv6 with a zone', host: ['[fe80::1%25lo]'] },
    { name: 'unclosed IPv6 bracket', host: ['[::1'] },
    // Other spellings of 127.0.0.1.
    { name: 'IPv4 as one number', host: ['2130706433'] },
    { name: 'IPv4 in hex', host: ['0x7f000001'] },
    { name: 'IPv4 short form', host: ['127.1'] },
    { name: 'IPv4 in octal', host: ['0177.0.0.1'] },
    { name: 'IPv4 zero-padded', host: ['127.000.000.001'] },
    { name: 'another loopback address', host: ['127.0.0.2'] },
    { name: 'all interfaces', host: ['0.0.0.0'] },
    // Ports that are not a port.
    { name: 'empty port', host: ['localhost:'] },
    { name: 'named port', host: ['localhost:http'] },
    { name: 'two ports', host: [`localhost:${port}:${port}`] },
    { name: 'signed port', host: ['localhost:+80'] },
    // Userinfo, which a Host header never carries.
    { name: 'userinfo before localhost', host: ['user@localhost'] },
    { name: 'userinfo with password', host: [`user:pass@127.0.0.1:${port}`] },
    { name: 'localhost as userinfo of another host', host: ['localhost@evil.example'] },
    { name: 'localhost with port as userinfo', host: [`localhost:${port}@evil.example`] },
    { name: 'space inside', host: ['localhost evil.example'] },
    { name: 'empty Host', host: [''] },
    // Several Host headers: ambiguous (RFC 9112 §3.2), whichever one a component reads.
    { name: 'allowed Host, then another', host: [`127.0.0.1:${port}`, 'evil.example'] },
    { name: 'another Host, then allowed', host: ['evil.example', `127.0.0.1:${port}`] },
    { name: 'allowed Host twice', host: [`127.0.0.1:${port}`, `127.0.0.1:${port}`] },
    // Origins.
    { name: 'Origin: null', origin: ['null'] },
    { name: 'another origin', origin: ['http://evil.example'] },
    { name: 'another origin on our port', origin: [`http://evil.example:${port}`] },
    { name: 'allowed name as a subdomain of the origin', origin: [`http://localhost.evil.example:${port}`] },
    { name: 'trailing dot in the origin', origin: [`http://localhost.:${port}`] },
    { name: 'mixed case of another origin', origin: ['HTTP://LocalHost.Evil.Example'] },
    { name: 'IPv6 loopback origin', origin: [`http://[::1]:${port}`] },
    { name: 'userinfo in the origin', origin: [`http://localhost@evil.example`] },
    { name: 'allowed host as the origin userinfo', origin: [`http://localhost:${port}@evil.example`] },
    { name: 'fragment trick', origin: [`http://evil.example#@localhost:${port}`] },
    { name: 'origin with a path', origin: [`http://localhost:${port}/`] },
    { name: 'origin without a scheme', origin: [`localhost:${port}`] },
    { name: 'file origin', origin: ['file://'] },
    { name: 'empty origin', origin: [''] },
    { name: 'allowed origin, then another', origin: [`http://localhost:${port}`, 'http://evil.example'] },
    { name: 'another origin, then allowed', origin: ['http://evil.example', `http://localhost:${port}`] },
    // The probes may name any Host (Kubernetes sends the pod IP), never with a foreign Origin.
    { name: 'health probe from a page', method: 'GET', target: '/health', origin: ['http://evil.example'] },
    { name: 'readiness probe from a page', method: 'GET', target: '/ready', host: ['10.0.0.7:8790'], origin: ['null'] },
    { name: 'GET /mcp from another host', method: 'GET', host: ['evil.example'] },
  ];

  it('every bypass attempt is refused with 403, before authentication and routing', async () => {
    const attempts = ATTEMPTS(port);
    const passed: string[] = [];
    for (const a of attempts) {
      const r = await attempt(a);
      if (r.status !== 403)
        passed.push(
          `${a.name} (Host ${JSON.stringify(a.host)}, Origin ${JSON.stringify(a.origin)}): HTTP ${r.status} ${r.body.slice(0, 120)}`,
        );
      else expect(JSON.parse(r.body)).toEqual({ error: expect.any(String) as unknown });
    }
    recordFigures(SUITE, { attempts: attempts.length, refused: attempts.length - passed.length });
    expect(passed).toEqual([]);
  });

  it('a request with no Host at all is refused by Node itself (HTTP/1.1 requires one) before the app sees it', async () => {
    const r = await attempt({ name: 'no Host at all', host: [] });
    expect(r.status).toBe(400);
  });

  it('a probe by another Host and no Origin still answers (Kubernetes probes by pod IP)', async () => {
    const r = await attempt({ name: 'probe by pod IP', method: 'GET', target: '/health', host: ['10.0.0.7:8790'] });
    expect(r.status).toBe(200);
  });

  it('the refusal names no secret and echoes the header only as a JSON string', async () => {
    const r = await attempt({ name: 'echo', host: [`evil.example`] });
    expect(r.status).toBe(403);
    expect(r.body).not.toContain(token);
    const res = await rawExchange(
      port,
      requestBytes({
        method: 'GET',
        target: '/health',
        headers: [
          ['Host', 'x'],
          ['Origin', 'null'],
        ],
      }),
    );
    expect(res!.status).toBe(403);
    expect(header(res!, 'content-type')).toMatch(/^application\/json/);
  });

  it('/metrics applies the same guard: every bypass attempt is 403, the allowed Host is served', async () => {
    const metricsPort = svc.metricsPort;
    const scrape = (hosts: string[], origins: string[] = []) =>
      rawExchange(
        metricsPort,
        requestBytes({
          method: 'GET',
          target: '/metrics',
          headers: [...hosts.map((h): RawHeader => ['Host', h]), ...origins.map((o): RawHeader => ['Origin', o])],
        }),
      );
    const allowed = await scrape([`127.0.0.1:${metricsPort}`]);
    expect(allowed!.status).toBe(200);
    expect(allowed!.body.toString('utf8')).toContain('signer_http_requests_total');
    const attempts = ATTEMPTS(metricsPort);
    const passed: string[] = [];
    for (const a of attempts) {
      // A GET with each attempt's Host and Origin (the MCP body does not matter here).
      const r = await scrape(a.host ?? [`127.0.0.1:${metricsPort}`], a.origin ?? []);
      if (r!.status !== 403) passed.push(`${a.name}: HTTP ${r!.status}`);
    }
    const rebinding = await scrape(['evil.example'], []);
    expect(rebinding!.status).toBe(403);
    recordFigures(SUITE, {
      metrics_attempts: attempts.length + 1,
      metrics_refused: attempts.length + 1 - passed.length,
    });
    expect(passed).toEqual([]);
  });
});
