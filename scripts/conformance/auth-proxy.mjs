// Loopback proxy for the conformance harness, which cannot send extra headers: it adds
// `Authorization: Bearer $MCP_TOKEN` and forwards everything else verbatim, Host and Origin untouched,
// so the DNS-rebinding scenario still reaches our Host/Origin check.
import http from 'node:http';

const port = Number(process.env.PROXY_PORT);
const upstream = new URL(process.env.UPSTREAM);
http
  .createServer((req, res) => {
    const headers = {};
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const k = req.rawHeaders[i];
      const v = req.rawHeaders[i + 1];
      if (k.toLowerCase() === 'authorization') continue;
      headers[k] = headers[k] === undefined ? v : [].concat(headers[k], v);
    }
    headers.Authorization = `Bearer ${process.env.MCP_TOKEN}`;
    const out = http.request(
      { hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, setHost: false },
      (r) => {
        res.writeHead(r.statusCode, r.rawHeaders);
        r.pipe(res);
      },
    );
    out.on('error', (e) => {
      if (!res.headersSent) res.writeHead(502);
      res.end(String(e));
    });
    res.on('close', () => out.destroy());
    req.pipe(out);
  })
  .listen(port, '127.0.0.1');
