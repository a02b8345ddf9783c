/** Bare node:http answering every POST with fixed bytes (the service's tools/list reply): the floor of any stack. */
import fs from 'node:fs';
import http from 'node:http';

const body = fs.readFileSync(process.env.BODY_FILE!);
const headers = { 'content-type': 'application/json', 'content-length': String(body.length) };
http
  .createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    req.resume();
    req.on('end', () => res.writeHead(200, headers).end(body));
  })
  .listen(Number(process.env.PORT), '127.0.0.1');
